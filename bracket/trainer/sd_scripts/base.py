"""What every kohya-ss sd-scripts adapter shares: the search space skeleton and the command.

The sd-scripts trainers share one argument vocabulary (``library/train_util.py``), so one class
builds their commands; a model family module (:mod:`~bracket.trainer.sd_scripts.sdxl`,
``sd35``, ``flux1``, …) declares data (script, model-path flags, learning-rate range,
cache-file suffixes) and the few flags of its own. A run's command is::

    <trainer python> -m accelerate.commands.launch ... <sd-scripts>/<script>
        <model paths> --dataset_config <run_dir>/dataset.toml --output_dir <run_dir>/output
        --output_name bracket --logging_dir <run_dir>/logs --max_train_steps N --seed S
        <optimizer + schedule> [<network>] <family flags> <cache flags> <memory flags>
        [--sample_prompts <run_dir>/sample_prompts.txt --sample_at_first ...]

Every input file is written under ``run_dir``; the working folder is the checkout. Caching is
:mod:`bracket.trainer.sd_scripts.caching`. Weights are saved in the family's release dtype;
tokenizers come from ``--tokenizer_cache_dir`` when set (:mod:`bracket.trainer.tokenizers`). On
a CPU every command is fp32 without the GPU-only memory flags. Prodigy runs at rate 1.0 and is
tuned through ``d_coef`` (conditional knobs), so narrowing the rate never drops a curated
Prodigy config.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, IntKnob, Knob, SearchSpace
from bracket.trainer import sample_steps
from bracket.trainer.base import (
    LaunchSpec,
    RunRequest,
    Trainer,
    make_accelerate_launch_prefix,
    make_subprocess_env,
)
from bracket.trainer.heldout import VALIDATION_TAGS
from bracket.trainer.parser_check import make_parser_check_spec, script_in
from bracket.trainer.pause import KOHYA_SELF_STOP, own_step_limit
from bracket.trainer.prompts import SamplePrompt, write_prompt_file
from bracket.trainer.sd_scripts.caching import CACHE_LATENTS_SCRIPT, CACHE_TEXT_SCRIPT, SdScriptsCaching
from bracket.trainer.sd_scripts.resume import KohyaPauseResume
from bracket.trainer.vram import MemoryPlan, memory_flags, vram_tier

OUTPUT_NAME = "bracket"
#: optimizers that estimate their own step size and run at learning rate 1.0
ADAPTIVE_OPTIMIZERS = ("Prodigy",)
SCHEDULERS = ("constant", "constant_with_warmup", "cosine", "linear")
#: sd-scripts raises when ``constant`` gets a non-zero warm-up, so warm-up is conditional
WARMUP_SCHEDULERS = ("constant_with_warmup", "cosine", "linear")
#: memory flags that need a GPU (half/fp8 weights, block swap to the CPU), left out on the CPU:
#: flag -> how many values follow it
GPU_ONLY_FLAGS = {"--full_bf16": 0, "--full_fp16": 0, "--fp8_base": 0, "--fp8_base_unet": 0, "--blocks_to_swap": 1}
LORA_LOSS_TAGS = ("loss/current", "loss/average")
FULL_LOSS_TAGS = ("loss",)


def without_gpu_only_flags(args: Sequence[str]) -> list[str]:
    """``args`` less the :data:`GPU_ONLY_FLAGS` and their values (the CPU mode)."""
    kept: list[str] = []
    skip = 0
    for word in args:
        if skip:
            skip -= 1
        elif word in GPU_ONLY_FLAGS:
            skip = GPU_ONLY_FLAGS[word]
        else:
            kept.append(word)
    return kept


def optimizer_args(knobs: Mapping[str, Any]) -> list[str]:
    """``--optimizer_args`` words (``key=value``, read by sd-scripts as Python literals)."""
    optimizer = knobs["optimizer_type"]
    if optimizer == "Adafactor":
        # fixed-LR Adafactor, as sd-scripts' SDXL and FLUX.1 fine-tuning docs set it
        return ["scale_parameter=False", "relative_step=False", "warmup_init=False"]
    if optimizer == "Prodigy":
        return [
            "decouple=True", "weight_decay=0.01", f"d_coef={float(knobs['prodigy_d_coef'])!r}",
            "use_bias_correction=True", "safeguard_warmup=True",
        ]
    return []


class SdScriptsTrainer(KohyaPauseResume, SdScriptsCaching, Trainer):
    """Base of the sd-scripts adapters; subclasses set the class data below. Pausing and
    resuming: :mod:`bracket.trainer.sd_scripts.resume`."""

    #: a paused run whose schedule does not depend on its length gets the rung as its own
    #: ``--max_train_steps`` (``pause.own_step_limit``): it stops itself there
    stops_at_pause_when = KOHYA_SELF_STOP
    dataset_style = "sd-scripts"
    holds_out_references = True
    checkout_field = "sd_scripts_dir"
    checkout_hint = ("it is not a checkout of kohya-ss/sd-scripts: check the sd-scripts folder "
                     "(git submodule update --init vendor/sd-scripts).")

    #: script path relative to the sd-scripts checkout
    script: ClassVar[str] = ""
    is_lora: ClassVar[bool] = True
    network_module: ClassVar[str] = ""
    latent_cache_suffix: ClassVar[str] = ""
    #: "" when the text-encoder outputs of this family are not cached to disk
    text_encoder_cache_suffix: ClassVar[str] = ""
    optimizers: ClassVar[tuple[str, ...]] = ("AdamW8bit", "AdamW", "Lion", "Prodigy")
    lr_range: ClassVar[tuple[float, float]] = (1e-5, 1e-3)
    network_dims: ClassVar[tuple[int, ...]] = (4, 8, 16, 32, 64)
    network_alphas: ClassVar[tuple[int, ...]] = (1, 4, 8, 16, 32)
    prompt_letters: ClassVar[tuple[str, ...]] = ("d", "w", "h", "s", "l", "n")
    default_resolution: ClassVar[int] = 1024
    #: memory-saving flags per VRAM tier (as in musubi-tuner): the first row whose tier is
    #: >= the GPU's applies; gradient checkpointing is always on
    memory_plan: ClassVar[MemoryPlan] = ()
    #: the least GPU memory this trainer runs in with every memory flag (``bracket doctor``)
    min_vram_gb: ClassVar[int] = 12
    #: the family flag of sd-scripts' cache tools (``--sdxl``, ``--flux``); "" = no tool support
    cache_tool_flag: ClassVar[str] = ""
    #: ``--save_precision``: the dtype the family's weights are released in
    save_precision: ClassVar[str] = "bf16"
    #: Hugging Face ids of the tokenizers sd-scripts loads for this family
    tokenizer_ids: tuple[str, ...] = ()

    # -- what a family module overrides ---------------------------------------------------
    def family_knobs(self) -> dict[str, Knob]:
        """Knobs of this family, appended after the shared ones."""
        return {}

    def family_args(self, knobs: Mapping[str, Any]) -> list[str]:
        """Flags of this family (e.g. FLUX timestep sampling)."""
        return []

    def memory_table(self) -> MemoryPlan:
        """This adapter's memory plan (a variant may pick another table)."""
        return self.memory_plan

    def memory_args(self, tier: int, knobs: Mapping[str, Any]) -> list[str]:
        """Memory-saving flags for a GPU of ``tier`` GB: gradient checkpointing, the
        optimizer's own (fused backward for a full fine-tune with Adafactor), then the
        row of the memory plan for the tier."""
        return ["--gradient_checkpointing", *self.optimizer_memory_args(knobs),
                *memory_flags(self.memory_table(), tier)]

    def optimizer_memory_args(self, knobs: Mapping[str, Any]) -> list[str]:
        return []

    def prompt_defaults(self) -> dict[str, Any]:
        """Defaults filled into sample prompts that leave them unset."""
        size = self.resolution()
        return {"width": size, "height": size}

    # -- the search space ---------------------------------------------------------------
    def declare_search_space(self) -> SearchSpace:
        opts = self.optimizers
        plain = tuple(o for o in opts if o not in ADAPTIVE_OPTIMIZERS)
        adaptive = tuple(o for o in opts if o in ADAPTIVE_OPTIMIZERS)
        knobs: dict[str, Knob] = {
            "optimizer_type": CategoricalKnob(opts) if len(opts) > 1 else FixedKnob(opts[0]),
        }
        if plain:
            knobs["learning_rate"] = FloatKnob(*self.lr_range, log=True, when={"optimizer_type": plain})
        if adaptive:
            knobs["adaptive_learning_rate"] = FixedKnob(1.0, when={"optimizer_type": adaptive})
        if "Prodigy" in adaptive:
            knobs["prodigy_d_coef"] = FloatKnob(0.5, 2.0, log=True, when={"optimizer_type": ("Prodigy",)})
        knobs["lr_scheduler"] = CategoricalKnob(SCHEDULERS)
        knobs["lr_warmup_steps"] = IntKnob(0, 200, step=10, when={"lr_scheduler": WARMUP_SCHEDULERS})
        if self.is_lora:
            knobs["network_dim"] = CategoricalKnob(self.network_dims)
            knobs["network_alpha"] = CategoricalKnob(self.network_alphas)
        knobs["batch_size"] = FixedKnob(1)
        knobs.update(self.family_knobs())
        return SearchSpace(knobs)

    # -- helpers ------------------------------------------------------------------------
    def resolution(self) -> int:
        return int(self.field("resolution") or self.default_resolution)

    def sd_scripts_dir(self) -> Path:
        return Path(self.field("sd_scripts_dir"))

    def script_path(self) -> Path:
        return self.sd_scripts_dir() / self.script

    def script_files(self) -> list[Path]:
        files = [self.script_path()]
        if self.cache_tool_flag:  # the pre-cache tools of session_setup_commands
            files.append(self.sd_scripts_dir() / CACHE_LATENTS_SCRIPT)
            if self.text_encoder_cache_suffix:
                files.append(self.sd_scripts_dir() / CACHE_TEXT_SCRIPT)
        return files

    def cache_suffixes(self, cache_text: bool) -> tuple[str, ...]:
        suffixes: tuple[str, ...] = (self.latent_cache_suffix,)
        if cache_text and self.text_encoder_cache_suffix:
            suffixes += (self.text_encoder_cache_suffix,)
        return suffixes

    def tokenizer_args(self) -> list[str]:
        folder = self.field("tokenizer_cache_dir")
        return ["--tokenizer_cache_dir", folder] if folder else []

    def schedule_args(self, knobs: Mapping[str, Any]) -> list[str]:
        learning_rate = knobs.get("learning_rate", knobs.get("adaptive_learning_rate", 1.0))
        args = ["--optimizer_type", str(knobs["optimizer_type"]), "--learning_rate", repr(float(learning_rate))]
        words = optimizer_args(knobs)
        if words:
            args += ["--optimizer_args", *words]
        args += ["--lr_scheduler", str(knobs["lr_scheduler"])]
        if knobs.get("lr_warmup_steps"):
            args += ["--lr_warmup_steps", str(int(knobs["lr_warmup_steps"]))]
        return args

    def network_args(self, knobs: Mapping[str, Any]) -> list[str]:
        if not self.is_lora:
            return []
        return [
            "--network_module", self.network_module,
            "--network_dim", str(int(knobs["network_dim"])),
            "--network_alpha", str(knobs["network_alpha"]),
            "--network_train_unet_only",
        ]

    def sample_args(
        self, run_dir: Path, prompts: Sequence[SamplePrompt] | None, every: int | None, *, at_first: bool = True
    ) -> list[str]:
        if not prompts:
            return []
        defaults = self.prompt_defaults()
        prompt_file = run_dir / "sample_prompts.txt"
        write_prompt_file(prompt_file, [p.with_defaults(**defaults) for p in prompts], letters=self.prompt_letters)
        args = ["--sample_prompts", str(prompt_file)] + (["--sample_at_first"] if at_first else [])
        if every:
            args += ["--sample_every_n_steps", str(int(every))]
        return args

    # -- the command ----------------------------------------------------------------------
    def prepare_run(self, request: RunRequest) -> LaunchSpec:
        knobs, run_dir, max_steps = request.knobs, request.run_dir, request.max_steps
        run_dir.mkdir(parents=True, exist_ok=True)
        run_toml, document = self.write_dataset_toml(request.dataset, run_dir, knobs,
                                                     fit=lambda written: self.fit_epoch(written, request),
                                                     standalone=request.standalone)
        output_dir = run_dir / "output"
        logging_dir = run_dir / "logs"
        python = self.python
        precision = self.mixed_precision()
        cmd = make_accelerate_launch_prefix(python, mixed_precision=precision) + [str(self.script_path())]
        cmd += self.model_flags() + self.tokenizer_args()
        cmd += [
            "--dataset_config", str(run_toml),
            "--output_dir", str(output_dir),
            "--output_name", OUTPUT_NAME,
            "--save_model_as", "safetensors",
            "--save_precision", self.save_precision,
            "--logging_dir", str(logging_dir),
            "--max_train_steps", str(own_step_limit(max_steps, request.stop_at_step, knobs)),
            "--seed", str(int(request.seed)),
            "--mixed_precision", precision,
            "--sdpa",
            "--max_data_loader_n_workers", "2",
            "--persistent_data_loader_workers",
        ]
        cmd += self.schedule_args(knobs)
        cmd += self.network_args(knobs)
        cmd += self.family_args(knobs)
        cmd += self.cache_args(document, standalone=request.standalone)
        memory = self.memory_args(vram_tier(self.fields), knobs)
        cmd += without_gpu_only_flags(memory) if self.on_cpu else memory
        validating = bool(self.validation and self.validation_tags)
        # the default interval is the validation's too, so the best step it names has samples to look at
        sample_every = sample_steps.sample_every(request.sample_every_n_steps, int(max_steps), self.sample_kind)
        cmd += self.sample_args(run_dir, request.sample_prompts, sample_every, at_first=self.sample_at_first(request))
        cmd += self.pause_resume_args(request)
        if validating:
            cmd += self.validation_args(int(max_steps), sample_every if request.sample_prompts else None)
        return LaunchSpec(
            cmd=cmd, cwd=self.sd_scripts_dir(), env=make_subprocess_env(), output_dir=output_dir,
            logging_dir=logging_dir, sample_dir=output_dir / "sample", loss_tags=self.loss_tags,
            label=self.script, max_steps=int(max_steps),
            eval_loss_tags=self.validation_tags if validating else (),
            pause_step=int(request.stop_at_step) if request.stop_at_step else None,
        )

    def validation_args(self, max_steps: int, sample_every: int | None) -> list[str]:
        """The held-out validation flags of ``train_network.py`` (``bracket.trainer.heldout``).

        ``--validate_every_n_epochs`` is set past the run's last epoch: sd-scripts would
        otherwise also validate after every epoch, which on a small dataset is every few
        steps and costs time without adding a step Bracket scores.
        """
        plan = self.validation
        return ["--validation_split", repr(float(plan.split)), "--validation_seed", str(int(plan.seed)),
                "--validate_every_n_steps", str(plan.every(max_steps, sample_every)),
                "--validate_every_n_epochs", str(int(max_steps) + 1)]

    # -- checks ---------------------------------------------------------------------------
    def parser_check_spec(self, launch: LaunchSpec) -> LaunchSpec | None:
        """The parser check of a training (or pre-cache) command: its script is its ``.py`` word."""
        script = script_in(launch.cmd)
        if script is None:
            return None
        return make_parser_check_spec(
            launch, python=self.python, script=script, cwd=self.sd_scripts_dir(),
        )

    def preflight_problems(self) -> list[str]:
        problems: list[str] = []
        if not Path(self.field("trainer_python")).is_file():
            problems.append(f"Trainer python {self.field('trainer_python')} does not exist; "
                            "run ./install.sh --trainers.")
        checkout = self.checkout_problem()
        if checkout:
            problems.append(checkout)
        return problems


class SdScriptsLoRA(SdScriptsTrainer):
    """A LoRA trainer (``*_train_network.py``): logs ``loss/current``, and a held-out
    validation loss when the session holds part of the dataset out."""

    is_lora = True
    loss_tags = LORA_LOSS_TAGS
    validation_tags = VALIDATION_TAGS


class SdScriptsFull(SdScriptsTrainer):
    """A full fine-tune (``*_train.py``): logs ``loss``; Adafactor gets the fused backward pass."""

    is_lora = False
    #: ``sdxl_train.py`` and the other full fine-tunes resume model, optimizer and schedule
    #: but count steps from 0 over every epoch again (no ``train_state.json``, no skip)
    resume_mode = "restart"
    loss_tags = FULL_LOSS_TAGS
    min_vram_gb = 24
    optimizers: ClassVar[tuple[str, ...]] = ("Adafactor", "AdamW8bit")

    def optimizer_memory_args(self, knobs: Mapping[str, Any]) -> list[str]:
        if knobs.get("optimizer_type") == "Adafactor":
            # fused backward pass: Adafactor only (train_util asserts); docs pair it with max_grad_norm 0
            return ["--fused_backward_pass", "--max_grad_norm", "0.0"]
        return []
