"""What every kohya-ss musubi-tuner adapter shares: cache once, then one command per trial.

musubi-tuner trains from pre-computed latents and text-encoder outputs, so a session
first runs two cache scripts and then every trial reuses their output. An architecture
module (``zimage.py``, ``wan.py``, ...) subclasses :class:`MusubiTrainer` and states data:
its scripts, its ``--network_module`` (musubi has no default), which preset field feeds
which model-path flag on which command (:class:`ModelInput`), its memory flags per GPU
tier, its prompt options and its search ranges. This module turns that data into commands.

**The shared cache.** The session calls ``session_setup_commands(dataset=<the
person's dataset>, run_dir=<session>/setup)`` once and ``prepare_run(RunRequest(run_dir=
<session>/trials/<n>, ...))`` per trial. :func:`session_cache_dir` maps both to ``<session>/cache``
(or to the preset's ``cache_dir`` field when it is filled in), and a sub-folder named by
:func:`bracket.trainer.cache_key.cache_key` — architecture variant, the model files the
cache commands read, their variant and precision flags, resolution and the dataset's files —
keeps different models, flags and datasets apart. The setup TOML and every trial TOML are
written by the same function, so they name the same ``cache_directory``; the cache
commands carry ``--skip_existing`` so that a resumed session (or a later one pointed at the
same ``cache_dir``) skips complete caches — and only caches made by the same model files
over the same data are ever found there.

An export (``standalone``) caches into its own ``RunRequest.cache_dir`` with the same commands
(``cache_commands``), or trains on the session's cache while it exists (``session_cache_variant``).

Commands: ``<python> -m accelerate.commands.launch ... <musubi_dir>/src/musubi_tuner/
<script>`` with ``cwd=<musubi_dir>``, for the cache scripts too (single process).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from bracket.dataset.runtime import dataset_image_dirs, read_dataset_toml
from bracket.errors import BracketError
from bracket.trainer.base import (
    LaunchSpec,
    ModelInput,
    RunRequest,
    Trainer,
    make_accelerate_launch_prefix,
    make_subprocess_env,
    save_resume_args,
)
from bracket.trainer.cache_key import cache_key, held_out_key, path_identity, session_cache_dir
from bracket.trainer.musubi.dataset import first_control_image, first_dataset_image, write_musubi_toml
from bracket.trainer.musubi.space import ADAFACTOR, network_flags, optimizer_flags, schedule_flags, timestep_flags
from bracket.trainer.parser_check import make_parser_check_spec, script_in
from bracket.trainer.pause import KOHYA_SELF_STOP, own_step_limit, paused_weights
from bracket.trainer.prompts import SamplePrompt, write_prompt_file
from bracket.trainer.sample_steps import sample_every
from bracket.trainer.vram import MemoryPlan, memory_flags, vram_tier

SCRIPT_DIR = Path("src") / "musubi_tuner"


class SampleInputError(BracketError):
    """Sample prompts that an edit or image-to-video model cannot render (no control/start image)."""


class MusubiTrainer(Trainer):
    """Base of the musubi-tuner adapters; subclasses are mostly data."""

    #: a paused run whose schedule does not depend on its length gets the rung as its own
    #: ``--max_train_steps`` (``pause.own_step_limit``): it stops itself there
    stops_at_pause_when = KOHYA_SELF_STOP
    checkout_field = "musubi_dir"
    checkout_hint = ("it is not a checkout of kohya-ss/musubi-tuner: check the musubi-tuner folder "
                     "(git submodule update --init vendor/musubi-tuner).")
    script: ClassVar[str] = ""
    latent_cache_script: ClassVar[str] = ""
    text_cache_script: ClassVar[str] = ""
    #: None for full fine-tunes
    network_module: ClassVar[str | None] = None
    model_inputs: ClassVar[tuple[ModelInput, ...]] = ()
    prompt_letters: ClassVar[tuple[str, ...]] = ("w", "h", "d", "s")
    sample_defaults: ClassVar[Mapping[str, Any]] = {"width": 768, "height": 768, "steps": 20}
    #: keys set on video datasets that do not set them (short clips for a search)
    video_dataset_defaults: ClassVar[Mapping[str, Any]] = {}
    needs_control_images: ClassVar[bool] = False
    default_resolution: ClassVar[int] = 1024
    #: memory-saving flags per VRAM tier: the first row whose tier is >= the GPU's applies
    memory_plan: ClassVar[MemoryPlan] = ()
    #: fp8 flag of the text encoder, used on the text cache and training at <= 16 GB
    text_encoder_fp8_flag: ClassVar[str | None] = None
    latent_cache_extra: ClassVar[tuple[str, ...]] = ()
    #: flags of full fine-tune scripts: bf16 weights, fused Adafactor backward, lean saving
    full_ft_flags: ClassVar[tuple[str, ...]] = ("--full_bf16", "--mem_eff_save")
    supports_fused_backward: ClassVar[bool] = True
    output_name: ClassVar[str] = "bracket"
    loss_tags: ClassVar[tuple[str, ...]] = ("loss/current", "loss/average")
    dataset_style = "musubi"
    holds_out_references = True
    #: at the pin (30c658c4) ``--resume`` restores weights, optimizer, schedule and RNG but the
    #: training loop sets ``global_step = 0`` and starts at the first epoch ("TODO skip until
    #: initial step", ``training/trainer_base.py``): no step counter to continue, so a promoted
    #: config trains again from 0; a pause saves the rung's weights only (``paused_state``)
    resume_mode = "restart"

    # -- per-architecture hooks ------------------------------------------------------------
    def variant_flags(self) -> list[str]:
        """Flags naming the model variant (``--model_version``, ``--task``) on training."""
        return []

    def latent_cache_variant_flags(self) -> list[str]:
        return []

    def text_cache_variant_flags(self) -> list[str]:
        return []

    def cache_variant(self) -> str:
        """What distinguishes this model's caches (part of the cache folder name)."""
        return Path(self.script).stem

    def needs_start_image(self) -> bool:
        """Whether samples need an ``--i`` start image (image-to-video models)."""
        return False

    def prompt_defaults(self) -> Mapping[str, Any]:
        return self.sample_defaults

    # -- paths ---------------------------------------------------------------------------------
    @property
    def musubi_dir(self) -> Path:
        return Path(self.field("musubi_dir", ".")).expanduser()

    def script_path(self, name: str) -> Path:
        return self.musubi_dir / SCRIPT_DIR / name

    def script_files(self) -> list[Path]:
        return [self.script_path(n) for n in (self.script, self.latent_cache_script, self.text_cache_script) if n]

    def tier(self) -> int:
        if not hasattr(self, "_tier"):
            self._tier = vram_tier(self.fields)
        return self._tier

    def _resolution(self) -> int:
        return int(self.field("resolution") or self.default_resolution)

    def cache_root(self, dataset: Path, run_dir: Path, *, folder: Path | None = None) -> Path:
        """``<session cache>/<variant>-<key>``: the same for setup and every trial (``folder``
        instead of the session's cache folder: an export's own).

        The key covers the model files the cache commands read, their variant and
        precision flags, the resolution and the dataset's files (:mod:`bracket.trainer.cache_key`).
        """
        dataset = Path(dataset).expanduser()
        try:
            folders = dataset_image_dirs(dataset, "musubi")
        except BracketError:
            folders = []
        flags = [*self.latent_cache_variant_flags(), *self.latent_cache_extra,
                 *self.text_cache_variant_flags(), *self._text_fp8(), f"resolution={self._resolution()}"]
        models = [self.field(m.field) for m in self.active_model_inputs() if m.latent_flag or m.text_flag]
        key = cache_key(models=models, flags=flags, folders=folders,
                        extra={"dataset": str(dataset.resolve()), "dataset_file": path_identity(dataset)
                               if dataset.is_file() else None, "variant": self.cache_variant(),
                               **held_out_key(self.held_out_references)})
        base = Path(folder).expanduser() if folder is not None else session_cache_dir(Path(run_dir),
                                                                                       self.field("cache_dir"))
        return base / f"{self.cache_variant()}-{key}"

    def write_dataset_toml(self, dataset: Path, run_dir: Path, *, batch_size: int = 1,
                           cache_folder: Path | None = None, name: str = "dataset.toml") -> Path:
        return write_musubi_toml(
            Path(dataset), Path(run_dir) / name,
            cache_root=self.cache_root(dataset, run_dir, folder=cache_folder), batch_size=batch_size,
            resolution=self._resolution(), video_defaults=self.video_dataset_defaults,
            control_dir=self.field("control_dir"), needs_control=self.needs_control_images,
            excluded=self.held_out_references,
        )

    def _memory_flags(self) -> list[str]:
        return memory_flags(self.memory_plan, self.tier())

    def _text_fp8(self) -> list[str]:
        return [self.text_encoder_fp8_flag] if self.text_encoder_fp8_flag and self.tier() <= 16 else []

    # -- setup (pre-caching) ---------------------------------------------------------------
    def session_setup_commands(self, *, dataset: Path, run_dir: Path) -> list[LaunchSpec]:
        """Cache latents, then text-encoder outputs, once per session (``--skip_existing``)."""
        return self.cache_commands(dataset=dataset, run_dir=run_dir)

    def export_setup_commands(self, request: RunRequest) -> list[LaunchSpec]:
        """An export's caching: the session's own cache commands, into the export's cache folder
        (the one its training TOML names), with the setup TOML in ``<run_dir>/setup``."""
        if not request.standalone:
            return []
        return self.cache_commands(dataset=request.dataset, run_dir=Path(request.run_dir) / "setup",
                                   cache_folder=self._own_cache(request))

    def session_cache_variant(self, request: RunRequest, spec: LaunchSpec) -> tuple[list[Path], list[str]] | None:
        """An export's faster twin: the same training reading the session's caches (the keyed
        folders its setup filled, named in ``dataset.session-cache.toml`` beside the export's own
        TOML) instead of caching again; None when those folders are not there."""
        if not request.standalone or "--dataset_config" not in spec.cmd:
            return None
        run_dir = Path(request.run_dir)
        toml = self.write_dataset_toml(request.dataset, run_dir, batch_size=int(request.knobs.get("batch_size", 1)),
                                       name="dataset.session-cache.toml")
        folders = sorted({Path(d["cache_directory"]) for d in read_dataset_toml(toml)["datasets"]})
        if not folders or not all(folder.is_dir() for folder in folders):
            toml.unlink()
            return None
        cmd = [str(a) for a in spec.cmd]
        cmd[cmd.index("--dataset_config") + 1] = str(toml)
        return folders, cmd

    @staticmethod
    def _own_cache(request: RunRequest) -> Path | None:
        """Where a standalone run's caches go (``request.cache_dir``, or ``run_dir/cache``); None
        for the session's own runs (the session's cache folder)."""
        if not request.standalone:
            return None
        return Path(request.cache_dir) if request.cache_dir is not None else Path(request.run_dir) / "cache"

    def cache_commands(self, *, dataset: Path, run_dir: Path, cache_folder: Path | None = None) -> list[LaunchSpec]:
        """The latent and text-encoder cache commands over ``dataset`` into the session's cache
        (or ``cache_folder``), their TOML written in ``run_dir``."""
        run_dir = Path(run_dir)
        toml = self.write_dataset_toml(dataset, run_dir, cache_folder=cache_folder)
        cache = self.cache_root(dataset, run_dir, folder=cache_folder)
        env = make_subprocess_env()
        common = ["--dataset_config", str(toml), "--skip_existing"]
        # accelerate launch (single process) like the trainers: the contract test demands it for
        # every command of a preset, and it is harmless for the plain-python cache scripts.
        prefix = make_accelerate_launch_prefix(self.python, mixed_precision="bf16")
        latents = [*prefix, str(self.script_path(self.latent_cache_script)), *common,
                   *self.model_flags("latent"), *self.latent_cache_variant_flags(), *self.latent_cache_extra]
        texts = [*prefix, str(self.script_path(self.text_cache_script)), *common,
                 *self.model_flags("text"), *self.text_cache_variant_flags(), *self._text_fp8()]
        return [
            LaunchSpec(cmd=latents, cwd=self.musubi_dir, env=env, output_dir=cache, loss_tags=(),
                       label="cache latents"),
            LaunchSpec(cmd=texts, cwd=self.musubi_dir, env=env, output_dir=cache, loss_tags=(),
                       label="cache text encoder outputs"),
        ]

    # -- one trial -------------------------------------------------------------------------------
    def hyper_flags(self, knobs: Mapping[str, Any]) -> list[str]:
        """Optimizer, schedule, timesteps and the LoRA network (or full fine-tune flags)."""
        words = optimizer_flags(knobs) + schedule_flags(knobs) + timestep_flags(knobs)
        if self.network_module:
            return words + network_flags(self.network_module, knobs)
        words += list(self.full_ft_flags)
        if self.supports_fused_backward and knobs["optimizer_type"] == ADAFACTOR:
            words += ["--fused_backward_pass", "--max_grad_norm", "0"]
        return words

    def complete_prompts(self, prompts: Sequence[SamplePrompt], run_toml: Path) -> list[SamplePrompt]:
        """Fill in sizes, frames, steps and the control/start image every sample needs."""
        defaults = dict(self.prompt_defaults())
        if self.needs_control_images and "ci" in self.prompt_letters:
            chosen = self.field("sample_control_image") or first_control_image(run_toml)
            if chosen:
                defaults["control_images"] = (str(chosen),)
            elif not all(p.control_images for p in prompts):
                raise SampleInputError(
                    "Edit-model samples need a control image: fill in 'Sample control image' or add "
                    "--ci <image> to every sample prompt."
                )
        if self.needs_start_image():
            chosen = self.field("sample_start_image") or first_dataset_image(run_toml)
            if chosen:
                defaults["image"] = str(chosen)
            elif not all(p.image for p in prompts):
                raise SampleInputError(
                    "Image-to-video samples need a start image: fill in 'Sample start image' or add "
                    "--i <image> to every sample prompt."
                )
        return [p.with_defaults(**defaults) for p in prompts]

    def prepare_run(self, request: RunRequest) -> LaunchSpec:
        knobs, run_dir, max_steps = request.knobs, request.run_dir, request.max_steps
        run_dir.mkdir(parents=True, exist_ok=True)
        run_toml = self.write_dataset_toml(request.dataset, run_dir, batch_size=int(knobs.get("batch_size", 1)),
                                           cache_folder=self._own_cache(request))
        output_dir = run_dir / "output"
        logging_dir = run_dir / "logs"
        cmd = make_accelerate_launch_prefix(self.python, mixed_precision="bf16") + [
            str(self.script_path(self.script)),
            *self.model_flags("train"), *self.variant_flags(),
            "--dataset_config", str(run_toml),
            "--output_dir", str(output_dir), "--output_name", self.output_name,
            "--logging_dir", str(logging_dir),
            "--mixed_precision", "bf16", "--sdpa", "--gradient_checkpointing",
            "--max_data_loader_n_workers", "2", "--persistent_data_loader_workers",
            "--max_train_steps", str(own_step_limit(max_steps, request.stop_at_step, knobs)),
            "--seed", str(int(request.seed)),
            *self.hyper_flags(knobs), *self._memory_flags(), *self._text_fp8(),
        ]
        if request.sample_prompts and self.writes_samples:
            prompt_file = run_dir / "sample_prompts.txt"
            prompts = self.complete_prompts(request.sample_prompts, run_toml)
            write_prompt_file(prompt_file, prompts, letters=self.prompt_letters)
            cmd += ["--sample_prompts", str(prompt_file),
                    "--sample_every_n_steps", str(sample_every(request.sample_every_n_steps, max_steps,
                                                               self.sample_kind))]
        cmd += save_resume_args(request, pause="weights")
        return LaunchSpec(
            cmd=cmd, cwd=self.musubi_dir, env=make_subprocess_env(), output_dir=output_dir,
            logging_dir=logging_dir, sample_dir=output_dir / "sample" if self.writes_samples else None,
            loss_tags=self.loss_tags, label=run_dir.name, max_steps=int(max_steps),
            pause_step=int(request.stop_at_step) if request.stop_at_step else None,
        )

    def paused_state(self, output_dir: Path, step: int) -> Path | None:
        """The weights saved at the rung step, once a later step is logged: a promoted musubi
        config restarts (``resume_mode``), so its pause needs no optimizer state."""
        return paused_weights(output_dir, self.output_name, int(step), self.loss_tags)

    # -- checks before anything runs -------------------------------------------------------------
    def parser_check_spec(self, launch: LaunchSpec) -> LaunchSpec | None:
        """The parser check of a training or cache command (its script is the ``.py`` word)."""
        script = script_in(launch.cmd)
        if script is None:
            return None
        return make_parser_check_spec(launch, python=self.python, script=script, cwd=self.musubi_dir)

    def preflight_problems(self) -> list[str]:
        problems: list[str] = []
        if not Path(self.python).is_file():
            problems.append(f"Trainer python {self.python} does not exist; run ./install.sh --trainers.")
        checkout = self.checkout_problem()
        if checkout:
            problems.append(checkout)
        return problems
