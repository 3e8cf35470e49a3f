"""What the LLM fine-tuner adapters (Axolotl, torchtune, Unsloth) share.

The three adapters search the same LoRA space (learning rate, warmup ratio, rank, alpha as a
multiple of the rank, dropout, optimizer, scheduler, effective batch, weight decay) and
differ only in how a configuration becomes a command. This module holds the common parts:

* the preset fields (base model, dataset file and format, sequence length, eval split,
  device, the trainer's python), each read from a ``BRACKET_*`` variable through
  ``FieldSpec.env_var``;
* the **device**: ``auto`` trains on the GPU when ``nvidia-smi`` is on the PATH and on the
  CPU otherwise; ``cpu`` makes each adapter turn off what only a GPU has (bf16/fp16 mixed
  precision, Axolotl's Triton LoRA kernels, torchtune's bf16 default). CPU runs are for tiny
  models: the end-to-end tests train a 2-layer Llama this way;
* :func:`build_search_space`, given the optimizer and scheduler names one trainer accepts;
* the **equal token budget**: ``max_steps`` given to ``prepare_run`` is the budget at
  :data:`~bracket.trainer.llm.shape.REFERENCE_EFFECTIVE_BATCH` examples per optimizer step. A candidate with another
  effective batch gets ``round(max_steps * REFERENCE_EFFECTIVE_BATCH / effective_batch)``
  steps, so every candidate sees the same number of training examples (and, with packing
  off and a fixed ``sequence_len``, the same number of tokens). Without this a bigger batch
  would simply see more data and win;
* the **fixed eval split**: every run of a session trains on the same ``train.jsonl`` and
  evaluates on the same ``eval.jsonl``, cut from the dataset file with a fixed seed and size
  (:func:`bracket.trainer.llm.dataset.split_dataset`). The trial seed then varies only the training order and LoRA
  initialisation, never which rows are held out;
* prompt handling for the post-run generation step (``llm_generate.py``).
"""

from __future__ import annotations

import json
import os
import shutil
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from bracket import settings
from bracket.errors import DatasetError, SearchSpaceError
from bracket.fields import FieldSpec
from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, SearchSpace
from bracket.trainer.base import LaunchSpec, RunRequest, Trainer, make_subprocess_env
from bracket.trainer.llm import dataset as jsonl
from bracket.trainer.llm.dataset import DATASET_FORMATS, DatasetSplit
from bracket.trainer.llm.shape import RunShape, run_shape
from bracket.trainer.prompts import SamplePrompt
from bracket.trainer.vram import DEVICE_CHOICES, runs_on_cpu

#: eval micro batch, pinned: HF's eval loss is a per-batch mean, so it must not vary
EVAL_BATCH_SIZE = 4
GENERATE_SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "llm_generate.py"
#: held-out prompts the session writes into a run folder, and the answers written beside the samples
HELDOUT_PROMPTS = "heldout_prompts.json"
HELDOUT_ANSWERS = "heldout_answers.json"
#: the seven projection modules of Llama-style models; "attention" keeps the first four
ALL_LINEAR_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
ATTENTION_MODULES = ALL_LINEAR_MODULES[:4]
#: telemetry off in every LLM trainer process
TELEMETRY_OFF = {"AXOLOTL_DO_NOT_TRACK": "1", "DO_NOT_TRACK": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}


# -- fields ----------------------------------------------------------------------------------

def _vendor_venv_python(name: str) -> str:
    return str(settings.venv_python(settings.PROJECT_ROOT / "vendor" / name / ".venv"))


def trainer_python_field(trainer: str, env_var: str, venv_name: str) -> FieldSpec:
    """The "trainer python" field of one LLM trainer (default ``vendor/<name>/.venv``)."""
    return FieldSpec(
        "trainer_python", "Trainer python", "file", executable=True,
        default=lambda: _vendor_venv_python(venv_name), required=True,
        help=f"The python of a virtualenv with {trainer} installed.",
        env_var=env_var,
    )


BASE_MODEL_FIELD = FieldSpec(
    "base_model", "Base model (hub id or folder)", "text", required=True,
    help="A Hugging Face model id (e.g. a 1B instruct model) or a local model folder.",
    env_var="BRACKET_LLM_BASE_MODEL",
)
LLM_DATASET_FIELD = FieldSpec(
    "dataset", "Dataset file (.jsonl or .json)", "file", required=True,
    help="One example per row; the format is chosen below. Bracket cuts a fixed eval split from it.",
    env_var="BRACKET_LLM_DATASET",
)
DATASET_FORMAT_FIELD = FieldSpec(
    "data_format", "Dataset format", "choice", default="alpaca", choices=DATASET_FORMATS,
    help="alpaca: instruction/input/output; chat: messages [{role, content}]; "
         "sharegpt: conversations [{from, value}]; completion: text.",
    env_var="BRACKET_LLM_DATA_FORMAT",
)
SEQUENCE_LEN_FIELD = FieldSpec(
    "sequence_len", "Sequence length (tokens)", "int", default="1024", minimum=16, maximum=1_048_576,
    help="Longer rows are truncated; the same for every candidate.",
)
EVAL_SIZE_FIELD = FieldSpec(
    "eval_size", "Eval split", "float", default="200", minimum=0, maximum=1_000_000,
    help="Rows held out for the eval loss: a fraction (< 1) or a row count (>= 1); "
         "at most a fifth of the dataset. The same rows for every candidate.",
)
SPLIT_SEED_FIELD = FieldSpec(
    "split_seed", "Eval split seed", "int", default="42", minimum=0, maximum=2**32 - 1,
    help="Seed of the train/eval split; keep it fixed within a search.",
)
DEVICE_FIELD = FieldSpec(
    "device", "Device", "choice", default="auto", choices=DEVICE_CHOICES,
    help="auto: the GPU when nvidia-smi is found, else the CPU. cpu turns off bf16/fp16 and GPU-only "
         "kernels; it is meant for tiny models and tests.",
    env_var="BRACKET_LLM_DEVICE",
)
MAX_NEW_TOKENS_FIELD = FieldSpec(
    "max_new_tokens", "Sample length (new tokens)", "int", default="200", minimum=1, maximum=32768,
    help="Length of the completions generated for the Compare view after each run.",
)
COMMON_FIELDS = (
    BASE_MODEL_FIELD, LLM_DATASET_FIELD, DATASET_FORMAT_FIELD, SEQUENCE_LEN_FIELD,
    EVAL_SIZE_FIELD, SPLIT_SEED_FIELD, MAX_NEW_TOKENS_FIELD, DEVICE_FIELD,
)


# -- search space ------------------------------------------------------------------------------

def build_search_space(
    optimizers: Sequence[str], schedulers: Sequence[str], *, micro_batch_size: int = 2
) -> SearchSpace:
    """The LoRA search space of notes §4.1 with one trainer's optimizer and scheduler names.

    ``lora_alpha_ratio`` (alpha = ratio x rank) is searched instead of alpha because the
    learning rate and alpha/rank scale the update together. ``lora_target`` and
    ``micro_batch_size`` are fixed; narrowing them with choices makes them searched.
    """
    return SearchSpace({
        "learning_rate": FloatKnob(1e-5, 5e-4, log=True),
        "warmup_ratio": FloatKnob(0.0, 0.1),
        "lora_r": CategoricalKnob((8, 16, 32, 64)),
        "lora_alpha_ratio": CategoricalKnob((1, 2)),
        "lora_dropout": CategoricalKnob((0.0, 0.05, 0.1)),
        "optimizer": CategoricalKnob(tuple(optimizers)),
        "lr_scheduler": CategoricalKnob(tuple(schedulers)) if len(schedulers) > 1 else FixedKnob(schedulers[0]),
        "effective_batch": CategoricalKnob((4, 8, 16, 32)),
        "weight_decay": FloatKnob(0.0, 0.1),
        "micro_batch_size": FixedKnob(micro_batch_size),
        "lora_target": FixedKnob("all_linear"),
    })


def lora_alpha(knobs: Mapping[str, Any]) -> int:
    """LoRA alpha of a configuration: rank x ratio."""
    return int(knobs["lora_r"]) * int(knobs["lora_alpha_ratio"])


def target_modules(knobs: Mapping[str, Any]) -> tuple[str, ...]:
    """Projection names for ``lora_target`` (``all_linear`` or ``attention``)."""
    target = knobs.get("lora_target", "all_linear")
    if target == "attention":
        return ATTENTION_MODULES
    if target == "all_linear":
        return ALL_LINEAR_MODULES
    raise SearchSpaceError(f"lora_target {target!r} is not one of all_linear, attention.")


# -- prompts for the post-run generation step ------------------------------------------------------

def generation_prompt_entries(prompts: Sequence[SamplePrompt]) -> list[dict[str, Any]]:
    """``[{prompt_index, prompt, seed}]``: the input of ``llm_generate.py``."""
    return [{"prompt_index": i, "prompt": p.text, "seed": int(p.seed)} for i, p in enumerate(prompts)]


def copy_script(script: Path, run_dir: Path) -> Path:
    """Copy a trainer-venv script into ``<run_dir>/scripts/``: the run folder then holds the
    exact code it ran, and no Bracket module sits next to it to shadow a trainer package."""
    folder = Path(run_dir) / "scripts"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / script.name
    shutil.copyfile(script, target)
    return target


# -- the shared adapter ------------------------------------------------------------------------------

@dataclass(frozen=True)
class LLMRun:
    """What every LLM run is made of, worked out once by :meth:`LLMTrainer.prepare_run`."""

    request: RunRequest
    #: steps, micro batch x accumulation, warm-up and eval interval at the equal token budget
    shape: RunShape
    #: the run's copies of the session's fixed train / eval split
    split: DatasetSplit
    output_dir: Path
    logging_dir: Path

    @property
    def run_dir(self) -> Path:
        return self.request.run_dir

    @property
    def knobs(self) -> dict[str, Any]:
        return dict(self.request.knobs)


class LLMTrainer(Trainer):
    """Common behaviour of the three LLM adapters.

    :meth:`prepare_run` is one template: shape the run (:func:`run_shape`), cut the split,
    then two hooks per trainer — :meth:`write_config` writes the trainer's own config file
    and :meth:`command` builds the command that reads it.
    """

    sample_kind = "text"
    writes_samples = True
    #: batch-size choices narrow the examples per optimizer step (micro batch x accumulation)
    batch_knob = "effective_batch"
    loss_tags: ClassVar[tuple[str, ...]] = ("train/loss",)
    eval_loss_tags: ClassVar[tuple[str, ...]] = ("eval/loss",)
    #: where under ``output_dir`` the final adapter lands ("" = output_dir itself)
    adapter_subdir: str = ""
    #: the trainer puts alpaca prompts inside the tokenizer's chat template (torchtune does)
    alpaca_in_chat_template: bool = False

    @property
    def dataset_format(self) -> str:
        return self.field("data_format", "alpaca")

    @property
    def on_cpu(self) -> bool:
        """Whether runs train on the CPU (field ``device``; ``auto`` = no ``nvidia-smi``)."""
        return runs_on_cpu(self.fields)

    @property
    def sequence_len(self) -> int:
        return int(self.field("sequence_len", "1024"))

    def dataset_source(self, dataset: Path | None) -> Path:
        """The dataset file (JSONL or a JSON list): the request's ``dataset``, else the field."""
        value = str(dataset) if dataset and str(dataset) not in ("", ".") else self.field("dataset")
        if not value:
            raise DatasetError("No dataset file was given; fill in the Dataset field.")
        return Path(os.path.expanduser(value))

    def split(self, run_dir: Path, dataset: Path | None) -> DatasetSplit:
        return jsonl.split_dataset(
            self.dataset_source(dataset), Path(run_dir) / "data",
            dataset_format=self.dataset_format,
            eval_size=float(self.field("eval_size", "200")),
            split_seed=int(self.field("split_seed", "42")),
        )

    def prepare_run(self, request: RunRequest) -> LaunchSpec:
        shape = run_shape(request.knobs, request.max_steps)
        run = LLMRun(request, shape, self.run_split(request.run_dir, request.dataset, shape),
                     output_dir=request.run_dir / "output", logging_dir=request.run_dir / "logs" / "tb")
        config_path = self.write_config(run)
        return self.launch_spec(cmd=self.command(run, config_path), run_dir=run.run_dir, output_dir=run.output_dir,
                                logging_dir=run.logging_dir, env=self.run_environment(run), steps=self.run_steps(run))

    # -- the hooks of prepare_run --------------------------------------------------------------
    @abstractmethod
    def write_config(self, run: LLMRun) -> Path:
        """Write the trainer's config of ``run`` under its ``run_dir``; return the file."""

    @abstractmethod
    def command(self, run: LLMRun, config_path: Path) -> list[str]:
        """The command that trains ``run`` from ``config_path``."""

    def run_split(self, run_dir: Path, dataset: Path, shape: RunShape) -> DatasetSplit:
        """The run's train / eval files (a trainer may adjust them to its batch shape)."""
        return self.split(run_dir, dataset)

    def run_steps(self, run: LLMRun) -> int:
        """The optimizer steps the run makes (progress bars)."""
        return run.shape.steps

    def run_environment(self, run: LLMRun) -> dict[str, str]:
        """The run's environment: telemetry off, TensorBoard logs in ``run.logging_dir``."""
        return self.environment({"TENSORBOARD_LOGGING_DIR": str(run.logging_dir)})

    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return make_subprocess_env({**TELEMETRY_OFF, **(extra or {})})

    def launch_spec(self, *, cmd: list[str], run_dir: Path, output_dir: Path, logging_dir: Path,
                    env: dict[str, str], steps: int, label: str = "") -> LaunchSpec:
        return LaunchSpec(
            cmd=cmd, cwd=Path(run_dir), env=env, output_dir=output_dir, logging_dir=logging_dir,
            tfevents_glob="**/events.out.tfevents.*", sample_dir=output_dir / "sample",
            loss_tags=self.loss_tags, eval_loss_tags=self.eval_loss_tags, max_steps=steps, label=label,
        )

    def eval_split_file(self, run_dir: Path) -> Path:
        """The run's held-out rows (``eval.jsonl`` of :func:`split_dataset`)."""
        return Path(run_dir) / "data" / "eval.jsonl"

    def generation_base_model(self) -> str:
        return self.field("base_model")

    def post_run_commands(
        self, *, run_dir: Path, launch: LaunchSpec, sample_prompts: Sequence[SamplePrompt] | None = None
    ) -> list[LaunchSpec]:
        """Run ``llm_generate.py`` in the trainer python: base + adapter, fixed prompts and seeds."""
        if not sample_prompts:
            return []
        adapter = launch.output_dir / self.adapter_subdir if self.adapter_subdir else launch.output_dir
        return [self.generation_command(run_dir, adapter, launch.sample_dir or launch.output_dir / "sample",
                                        sample_prompts, output_dir=launch.output_dir, label="generate samples")]

    def rung_commands(
        self, *, run_dir: Path, output_dir: Path, step: int, sample_dir: Path,
        sample_prompts: Sequence[SamplePrompt] | None = None,
    ) -> list[LaunchSpec]:
        """The generation step of a finished run, from the adapter of the run's paused state at
        ``step`` (Axolotl's and Unsloth's ``checkpoint-<step>``, which holds ``adapter_config.json``
        and the adapter weights: ``llm_generate.py --adapter`` loads it as it is), into ``sample_dir``."""
        adapter = self.paused_state(Path(output_dir), int(step))
        if not sample_prompts or adapter is None:
            return []
        return [self.generation_command(run_dir, adapter, Path(sample_dir), sample_prompts,
                                        output_dir=Path(output_dir), label=f"generate answers at step {int(step)}")]

    def generation_command(self, run_dir: Path, adapter: Path, sample_dir: Path,
                           sample_prompts: Sequence[SamplePrompt], *, output_dir: Path, label: str) -> LaunchSpec:
        """``llm_generate.py`` of ``adapter``: the sample prompts' ``generations.json`` and, when the
        session wrote held-out prompts into ``run_dir``, their answers, both in ``sample_dir``."""
        run_dir = Path(run_dir)
        prompts_file = run_dir / "generation_prompts.json"
        prompts_file.write_text(json.dumps(generation_prompt_entries(sample_prompts), indent=1), encoding="utf-8")
        cmd = [
            self.python, str(copy_script(GENERATE_SCRIPT, run_dir)),
            "--base-model", self.generation_base_model(),
            "--adapter", str(adapter),
            "--prompts", str(prompts_file),
            "--output", str(sample_dir / "generations.json"),
            "--format", self.dataset_format,
            *(["--alpaca-in-chat-template"] if self.alpaca_in_chat_template else []),
            "--max-new-tokens", str(int(self.field("max_new_tokens", "200"))),
        ]
        if (run_dir / HELDOUT_PROMPTS).is_file():  # written by the session for the task judges
            cmd += ["--heldout", str(run_dir / HELDOUT_PROMPTS), "--heldout-output", str(sample_dir / HELDOUT_ANSWERS)]
        return LaunchSpec(cmd=cmd, cwd=run_dir, env=self.environment(), output_dir=output_dir,
                          sample_dir=sample_dir, label=label, loss_tags=())

    def preflight_problems(self) -> list[str]:
        problems = []
        python = Path(os.path.expanduser(self.python))
        if not python.is_file():
            problems.append(f"Trainer python {python} does not exist; install the trainer's virtualenv "
                            "or set the field.")
        try:
            source = self.dataset_source(None)
            jsonl.check_rows(jsonl.read_rows(source), self.dataset_format, source)
        except DatasetError as error:
            problems.append(str(error))
        return problems
