"""torchtune LoRA adapter (preset ``torchtune-lora``): a recipe config plus key=value overrides.

The command is ``tune run lora_finetune_single_device --config <config> key=value ...``,
run as ``<trainer python> -m torchtune._cli.tune`` (the module behind the ``tune`` console
script) so the trainer venv need not be active. ``<config>`` is a built-in config name
(``llama3_2/1B_lora_single_device``) or a local YAML; every searched value is one override
word, its own argv item.

torchtune is no longer maintained upstream (development wound down in 2025; 0.6.1 is the
last release), so this preset is a legacy backend. Quirks handled here (notes §2):

* warmup exists only in steps: ``lr_scheduler.num_warmup_steps = round(ratio x steps)``;
* the run length is ``epochs x max_steps_per_epoch``; both are derived from the rows of
  the training split so that the equal-token budget holds on small datasets too;
* the single-device recipe has no in-training eval, so a run reports only the train loss
  (TensorBoard tag ``loss``, no prefix) and ``eval_loss_tags`` is empty;
* a bitsandbytes optimizer needs ``~optimizer.fused`` (the stock configs set it);
* on the CPU (field ``device``) the run is ``device=cpu dtype=fp32`` (the stock configs say
  ``bf16`` on ``cuda``);
* the alpaca dataset builder wraps each row in the alpaca preamble and the model tokenizer
  then applies its chat template, so generation does the same (``--alpaca-in-chat-template``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bracket.errors import BracketError, DatasetError
from bracket.fields import FieldSpec
from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.trainer.base import LaunchSpec, RunRequest
from bracket.trainer.llm import base as llm
from bracket.trainer.llm.dataset import DatasetSplit

RECIPE = "lora_finetune_single_device"
#: our optimizer names -> torchtune optimizer component and whether it takes ``fused``
OPTIMIZER_COMPONENTS = {
    "adamw_torch_fused": ("torch.optim.AdamW", True),
    "adamw_torch": ("torch.optim.AdamW", False),
    "paged_adamw_8bit": ("bitsandbytes.optim.PagedAdamW8bit", None),
}
SCHEDULE_COMPONENT = "torchtune.training.lr_schedulers.get_cosine_schedule_with_warmup"
TENSORBOARD_LOGGER = "torchtune.training.metric_logging.TensorBoardLogger"
_ATTENTION = "[q_proj,k_proj,v_proj,output_proj]"
#: the configs torchtune's registry lists for the recipe (``torchtune/_recipe_registry.py``):
#: ``tune run`` looks such a name up among its own files before reading it as a path, so the
#: web app offers them besides the configured one. A local YAML is code (``_component_`` is
#: instantiated), so the web app takes only the one set in ``BRACKET_TORCHTUNE_CONFIG``.
BUILTIN_CONFIGS = tuple(f"{model}_single_device" for model in (
    "llama2/7B_lora", "llama2/7B_qlora", "llama2/13B_qlora", "code_llama2/7B_lora", "code_llama2/7B_qlora",
    "llama3/8B_lora", "llama3/8B_qlora", "llama3/8B_dora", "llama3/8B_qdora", "llama3_1/8B_lora",
    "llama3_1/8B_qlora", "llama3_2/1B_lora", "llama3_2/1B_qlora", "llama3_2/3B_lora", "llama3_2/3B_qlora",
    "mistral/7B_lora", "mistral/7B_qlora", "gemma/2B_lora", "gemma/2B_qlora", "gemma/7B_lora",
    "gemma/7B_qlora",
    "phi3/mini_lora", "phi3/mini_qlora", "qwen2/7B_lora", "qwen2/0.5B_lora", "qwen2/1.5B_lora",
    "llama3_2_vision/11B_lora"))
_DATASET_OVERRIDES = {
    "alpaca": ["dataset._component_=torchtune.datasets.alpaca_dataset", "dataset.train_on_input=False"],
    "chat": ["dataset._component_=torchtune.datasets.chat_dataset",
             "dataset.conversation_column=messages", "dataset.conversation_style=openai"],
    "sharegpt": ["dataset._component_=torchtune.datasets.chat_dataset",
                 "dataset.conversation_column=conversations", "dataset.conversation_style=sharegpt"],
    "completion": ["dataset._component_=torchtune.datasets.text_completion_dataset", "dataset.column=text"],
}


class TorchtuneError(BracketError):
    """A torchtune run that cannot be built from the given fields."""


def _replace_field(fields: Sequence[FieldSpec], replacement: FieldSpec) -> tuple[FieldSpec, ...]:
    return tuple(replacement if f.name == replacement.name else f for f in fields)


FIELDS = (
    *_replace_field(llm.COMMON_FIELDS, FieldSpec(
        "base_model", "Model folder (tune download)", "dir", required=True,
        help="A Hugging Face model downloaded with `tune download <repo> --output-dir DIR`; "
             "the checkpointer and the sample generation read it.",
        env_var="BRACKET_TORCHTUNE_MODEL_DIR",
    )),
    FieldSpec(
        "torchtune_config", "Recipe config", "text", default="llama3_2/1B_lora_single_device", required=True,
        help="A built-in LoRA single-device config name (`tune ls`) or a local YAML that matches the model "
             "(the web app: only the one in BRACKET_TORCHTUNE_CONFIG, since a YAML names code to run).",
        env_var="BRACKET_TORCHTUNE_CONFIG", executable=True, builtin=BUILTIN_CONFIGS,
    ),
    FieldSpec(
        "tokenizer_path", "Tokenizer file", "path",
        help="tokenizer.path override; empty = <model folder>/original/tokenizer.model when it exists, "
             "else the config's own.",
    ),
    llm.trainer_python_field("torchtune", "BRACKET_TORCHTUNE_PYTHON", "torchtune"),
)


def _float_text(value: float) -> str:
    """A float that every YAML 1.1 reader takes as a float (``1.0e-05``, never ``1e-05``)."""
    text = repr(float(value))
    mantissa, e, exponent = text.partition("e")
    if e and "." not in mantissa:
        mantissa += ".0"
    return mantissa + e + exponent


def _word(key: str, value: Any) -> str:
    """One ``key=value`` override; torchtune rejects values containing ``=``."""
    text = value if isinstance(value, str) else _float_text(value) if isinstance(value, float) else str(value)
    if "=" in text:
        raise TorchtuneError(f"torchtune override {key}: value {text!r} contains '='; rename the path.")
    return f"{key}={text}"


def _path_word(key: str, path: object) -> str:
    """A ``key=PATH`` override that torchtune reads back as exactly ``PATH``: OmegaConf parses
    each value as YAML (``runs #2`` would lose ``#2``, ``a: b`` become a mapping) and resolves
    ``${…}``, so the path goes in as a single-quoted YAML scalar with ``${`` escaped."""
    text = str(path).replace("'", "''").replace("${", "\\${")
    return _word(key, f"'{text}'")


def epochs_and_cap(steps: int, train_rows: int, batch_size: int, accumulation: int) -> tuple[int, int]:
    """``(epochs, max_steps_per_epoch)`` giving ``steps`` (or just over) optimizer steps."""
    per_epoch = (train_rows // batch_size) // accumulation
    if per_epoch < 1:
        raise DatasetError(
            f"The training split has {train_rows} rows: not one optimizer step of {batch_size} x "
            f"{accumulation}; use a larger dataset or smaller effective-batch choices."
        )
    epochs = math.ceil(steps / per_epoch)
    return epochs, math.ceil(steps / epochs)


def ensure_one_step_per_epoch(split: DatasetSplit, batch_size: int, accumulation: int) -> DatasetSplit:
    """Repeat the training rows of a tiny split until one epoch holds an optimizer step.

    torchtune drops the last partial batch and counts steps per epoch, so a split smaller
    than one effective batch would train nothing; repeating it is what more epochs would do.
    """
    needed = batch_size * accumulation
    if split.train_rows >= needed:
        return split
    repeat = math.ceil(needed / split.train_rows)
    split.train.write_text(split.train.read_text(encoding="utf-8") * repeat, encoding="utf-8")
    return replace(split, train_rows=split.train_rows * repeat)


class TorchtuneLoRA(llm.LLMTrainer):
    """LoRA through torchtune's ``lora_finetune_single_device`` recipe."""

    #: 0.6.1's recipe saves optimizer and recipe state only at the end of an epoch ("Mid-epoch
    #: checkpointing is currently not supported", recipes/lora_finetune_single_device.py), so a
    #: run cannot pause at a rung step: a promoted config trains again from 0
    resume_mode = "restart"
    loss_tags = ("loss",)
    eval_loss_tags = ()
    alpaca_in_chat_template = True

    def declare_search_space(self) -> SearchSpace:
        return llm.build_search_space(tuple(OPTIMIZER_COMPONENTS), ("cosine",))

    def baseline_config(self) -> NamedConfig:
        # r 64 / alpha 128, fused AdamW 3e-4 wd 0.01, cosine, 4 x 8; its 100 warmup steps are
        # ~6 % of one alpaca-cleaned epoch (51.8k rows / 32).
        return NamedConfig("llama3.2-1b-lora", {
            "learning_rate": 3e-4, "warmup_ratio": 0.06, "lora_r": 64, "lora_alpha_ratio": 2,
            "lora_dropout": 0.0, "optimizer": "adamw_torch_fused", "lr_scheduler": "cosine",
            "effective_batch": 32, "weight_decay": 0.01,
        }, source="torchtune recipes/configs/llama3_2/1B_lora_single_device.yaml")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # r 32 / alpha 64, lr 1e-4, 2 x 8; 100 warmup steps ~3 % of an epoch at batch 16.
            NamedConfig("qwen3-0.6b-lora", {
                "learning_rate": 1e-4, "warmup_ratio": 0.03, "lora_r": 32, "lora_alpha_ratio": 2,
                "lora_dropout": 0.0, "optimizer": "adamw_torch_fused", "lr_scheduler": "cosine",
                "effective_batch": 16, "weight_decay": 0.01,
            }, source="torchtune recipes/configs/qwen3/0.6B_lora_single_device.yaml (git main)"),
            # r 8 / alpha 16, lr 3e-4, wd 0.01, 2 x 8.
            NamedConfig("llama3.1-8b-lora", {
                "learning_rate": 3e-4, "warmup_ratio": 0.03, "lora_r": 8, "lora_alpha_ratio": 2,
                "lora_dropout": 0.0, "optimizer": "adamw_torch_fused", "lr_scheduler": "cosine",
                "effective_batch": 16, "weight_decay": 0.01,
            }, source="torchtune recipes/configs/llama3_1/8B_lora_single_device.yaml"),
            # The paged 8-bit AdamW the stock configs offer for memory, at the Unsloth-guide rate.
            NamedConfig("paged-adamw-8bit", {
                "learning_rate": 2e-4, "warmup_ratio": 0.05, "lora_r": 16, "lora_alpha_ratio": 1,
                "lora_dropout": 0.0, "optimizer": "paged_adamw_8bit", "lr_scheduler": "cosine",
                "effective_batch": 8, "weight_decay": 0.01,
            }, source="torchtune configs using bitsandbytes.optim.PagedAdamW8bit; "
                      "docs.unsloth.ai LoRA Hyperparameters Guide (lr 2e-4, alpha = r)"),
        ]

    def tokenizer_path(self) -> str:
        given = self.field("tokenizer_path")
        if given:
            return given
        guess = Path(self.field("base_model")) / "original" / "tokenizer.model"
        return str(guess) if guess.is_file() else ""

    def build_overrides(self, run: llm.LLMRun) -> list[str]:
        """The ``key=value`` override words of one run (also kept in torchtune_overrides.txt)."""
        knobs, split, shape = run.knobs, run.split, run.shape
        output_dir, logging_dir, seed = run.output_dir, run.logging_dir, run.request.seed
        epochs, cap = epochs_and_cap(shape.steps, split.train_rows, shape.micro_batch_size,
                                     shape.gradient_accumulation_steps)
        total = epochs * cap
        component, fused = OPTIMIZER_COMPONENTS[str(knobs["optimizer"])]
        all_linear = knobs.get("lora_target", "all_linear") == "all_linear"
        words = [
            _path_word("output_dir", str(output_dir)),
            _path_word("checkpointer.checkpoint_dir", self.field("base_model")),
            _path_word("checkpointer.output_dir", str(output_dir)),
            _word("tokenizer.max_seq_len", self.sequence_len),
            *_DATASET_OVERRIDES[self.dataset_format],
            "dataset.source=json",
            _path_word("dataset.data_files", str(split.train)),
            "dataset.split=train",
            "dataset.packed=False",
            _word("seed", int(seed)),
            "shuffle=True",
            _word("batch_size", shape.micro_batch_size),
            _word("gradient_accumulation_steps", shape.gradient_accumulation_steps),
            _word("epochs", epochs),
            _word("max_steps_per_epoch", cap),
            _word("optimizer._component_", component),
            _word("optimizer.lr", float(knobs["learning_rate"])),
            _word("optimizer.weight_decay", float(knobs["weight_decay"])),
            "~optimizer.fused" if fused is None else _word("optimizer.fused", fused),
            _word("lr_scheduler._component_", SCHEDULE_COMPONENT),
            _word("lr_scheduler.num_warmup_steps", int(round(shape.warmup_ratio * total))),
            _word("model.lora_rank", int(knobs["lora_r"])),
            _word("model.lora_alpha", llm.lora_alpha(knobs)),
            _word("model.lora_dropout", float(knobs["lora_dropout"])),
            _word("model.lora_attn_modules", _ATTENTION),
            _word("model.apply_lora_to_mlp", all_linear),
            _word("metric_logger._component_", TENSORBOARD_LOGGER),
            _path_word("metric_logger.log_dir", str(logging_dir)),
            "metric_logger.organize_logs=False",
            "log_every_n_steps=1",
            "save_adapter_weights_only=True",
            "resume_from_checkpoint=False",
        ]
        if self.on_cpu:
            words += ["device=cpu", "dtype=fp32"]
        tokenizer = self.tokenizer_path()
        if tokenizer:
            words.insert(3, _path_word("tokenizer.path", tokenizer))
        return words

    def prepare_run(self, request: RunRequest) -> LaunchSpec:
        if request.resume_from:
            raise TorchtuneError("torchtune runs cannot be resumed by Bracket; start the trial again.")
        return super().prepare_run(request)

    def run_split(self, run_dir: Path, dataset: Path, shape: llm.RunShape) -> DatasetSplit:
        return ensure_one_step_per_epoch(self.split(run_dir, dataset), shape.micro_batch_size,
                                         shape.gradient_accumulation_steps)

    def run_steps(self, run: llm.LLMRun) -> int:
        """The real step count: whole epochs of ``max_steps_per_epoch`` steps."""
        epochs, cap = epochs_and_cap(run.shape.steps, run.split.train_rows, run.shape.micro_batch_size,
                                     run.shape.gradient_accumulation_steps)
        return epochs * cap

    def run_environment(self, run: llm.LLMRun) -> dict[str, str]:
        return self.environment()  # the TensorBoard folder is an override word

    def write_config(self, run: llm.LLMRun) -> Path:
        path = run.run_dir / "torchtune_overrides.txt"
        path.write_text("\n".join(self.build_overrides(run)) + "\n", encoding="utf-8")
        return path

    def command(self, run: llm.LLMRun, config_path: Path) -> list[str]:
        return [self.python, "-m", "torchtune._cli.tune", "run", RECIPE,
                "--config", self.field("torchtune_config", "llama3_2/1B_lora_single_device"),
                *self.build_overrides(run)]
