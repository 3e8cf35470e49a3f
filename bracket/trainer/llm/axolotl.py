"""Axolotl LoRA adapter (preset ``axolotl-lora``): one YAML config per candidate.

``prepare_run`` writes ``<run_dir>/axolotl.yml`` with ``yaml.safe_dump`` and launches what
``axolotl train axolotl.yml`` itself execs with its default accelerate launcher:
``accelerate launch -m axolotl.cli.train axolotl.yml`` (through the trainer venv's python,
so the venv need not be active). Rules from the notes (llm-trainers.md §1) kept here:

* ``AXOLOTL_DO_NOT_TRACK=1`` in the environment (telemetry blocks start-up otherwise);
* ``save_strategy``/``eval_strategy`` strings such as ``"no"`` are emitted quoted
  (``safe_dump`` quotes YAML-1.1 booleans), never as a bare ``no``;
* only ``warmup_ratio`` is written, never ``warmup_steps`` next to it;
* the eval set is fixed: Bracket's own split (same rows, same seed every run) is given as
  ``test_datasets`` and ``val_set_size`` is fixed at 0, so the trial ``seed`` may vary
  without changing which rows are held out;
* TensorBoard goes to ``$TENSORBOARD_LOGGING_DIR`` (transformers 5.x) with the HF tags
  ``train/loss`` and ``eval/loss``;
* a run paused at a rung saves ``checkpoint-<step>`` there and resumes from it
  (``resume_from_checkpoint``), steps and schedule continuing: :mod:`bracket.trainer.llm.checkpoints`;
* on the CPU (field ``device``) the run is fp32 (``bf16``/``fp16``/``tf32`` false, accelerate
  ``--mixed_precision no``) and Axolotl's LoRA kernels (Triton, CUDA only) are off.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bracket.fields import FieldSpec
from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.trainer.base import make_accelerate_launch_prefix
from bracket.trainer.llm import base as llm
from bracket.trainer.llm.checkpoints import HFPauseResume

#: HF optimizer names valid in Axolotl (docs/optimizers.qmd); 8-bit ones use bitsandbytes
OPTIMIZERS = ("adamw_torch_fused", "adamw_torch", "adamw_8bit", "paged_adamw_8bit")
SCHEDULERS = ("cosine", "linear", "constant_with_warmup")
#: what a CPU run changes: no mixed precision, no Triton LoRA kernels (CUDA only)
CPU_SETTINGS = {
    "bf16": False, "fp16": False, "tf32": False,
    "lora_mlp_kernel": False, "lora_qkv_kernel": False, "lora_o_kernel": False,
    "lora_embedding_kernel": False,
}
FIELDS = (
    *llm.COMMON_FIELDS,
    llm.trainer_python_field("Axolotl", "BRACKET_AXOLOTL_PYTHON", "axolotl"),
    FieldSpec(
        "quantize_base", "Base model quantisation", "choice", default="none", choices=("none", "4bit"),
        help="4bit trains QLoRA (adapter: qlora, load_in_4bit).",
    ),
)


def _dataset_entry(path: Path, dataset_format: str) -> dict[str, Any]:
    """One ``datasets``/``test_datasets`` entry for a local JSONL file."""
    entry: dict[str, Any] = {"path": str(path), "ds_type": "json", "split": "train"}
    if dataset_format == "alpaca":
        entry["type"] = "alpaca"
    elif dataset_format == "chat":
        entry.update(type="chat_template", field_messages="messages", chat_template="tokenizer_default")
    elif dataset_format == "sharegpt":
        entry.update(
            type="chat_template", field_messages="conversations", chat_template="tokenizer_default",
            message_property_mappings={"role": "from", "content": "value"},
        )
    else:
        entry.update(type="completion", field="text")
    return entry


class AxolotlLoRA(HFPauseResume, llm.LLMTrainer):
    """LoRA/QLoRA through Axolotl's YAML config."""

    def declare_search_space(self) -> SearchSpace:
        return llm.build_search_space(OPTIMIZERS, SCHEDULERS)

    def baseline_config(self) -> NamedConfig:
        # The Quickstart config: lr 2e-4 cosine, warmup 0.1, r 16 / alpha 32, dropout 0.05, 2 x 2.
        return NamedConfig("axolotl-quickstart", {
            "learning_rate": 2e-4, "warmup_ratio": 0.1, "lora_r": 16, "lora_alpha_ratio": 2,
            "lora_dropout": 0.05, "optimizer": "adamw_8bit", "lr_scheduler": "cosine",
            "effective_batch": 4, "weight_decay": 0.0,
        }, source="axolotl examples/llama-3/lora-1b.yml (docs/getting-started.qmd)")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # Qwen3-8B LoRA: r 32 / alpha 64, no dropout, fused AdamW, 1 x 4.
            NamedConfig("qwen3-8b-lora", {
                "learning_rate": 2e-4, "warmup_ratio": 0.1, "lora_r": 32, "lora_alpha_ratio": 2,
                "lora_dropout": 0.0, "optimizer": "adamw_torch_fused", "lr_scheduler": "cosine",
                "effective_batch": 4, "weight_decay": 0.0,
            }, source="axolotl examples/qwen3/8b-lora-fused-attn.yaml"),
            # QLoRA 1B example's batch (2 x 4) and paged 8-bit AdamW; alpha = rank (the
            # example's alpha 16 for r 32 is below the 1x-2x range the docs recommend).
            NamedConfig("qlora-1b-batch8", {
                "learning_rate": 2e-4, "warmup_ratio": 0.1, "lora_r": 32, "lora_alpha_ratio": 1,
                "lora_dropout": 0.05, "optimizer": "paged_adamw_8bit", "lr_scheduler": "cosine",
                "effective_batch": 8, "weight_decay": 0.0,
            }, source="axolotl examples/llama-3/qlora-1b.yml; docs/lora.qmd (alpha 1-2x rank)"),
            # Lower end of the documented LoRA range, Axolotl's default 3 % warmup, larger batch.
            NamedConfig("sft-guide-low-lr", {
                "learning_rate": 1e-4, "warmup_ratio": 0.03, "lora_r": 32, "lora_alpha_ratio": 2,
                "lora_dropout": 0.05, "optimizer": "adamw_torch_fused", "lr_scheduler": "cosine",
                "effective_batch": 16, "weight_decay": 0.0,
            }, source="axolotl docs/agents/sft.md (LoRA lr 1e-4..3e-4, micro 2-8 x accum 2-8)"),
            # Unsloth's recommendation on Axolotl: alpha = rank, linear decay, weight decay 0.01.
            NamedConfig("unsloth-guide", {
                "learning_rate": 2e-4, "warmup_ratio": 0.05, "lora_r": 16, "lora_alpha_ratio": 1,
                "lora_dropout": 0.0, "optimizer": "adamw_8bit", "lr_scheduler": "linear",
                "effective_batch": 8, "weight_decay": 0.01,
            }, source="docs.unsloth.ai LoRA Hyperparameters Guide"),
        ]

    def build_config(self, run: llm.LLMRun) -> dict[str, Any]:
        """The Axolotl YAML of one run, as a dict (keys from Axolotl's config schema)."""
        knobs, split, shape, request = run.knobs, run.split, run.shape, run.request
        # a pause step is a save step (``llm.checkpoints``); a resume continues from its checkpoint
        save_every_n_steps, resume_from = self.save_steps(request, shape.steps), request.resume_from
        quantized = self.field("quantize_base", "none") == "4bit"
        config: dict[str, Any] = {
            "base_model": self.field("base_model"),
            "strict": False,
            "datasets": [_dataset_entry(split.train, self.dataset_format)],
            "test_datasets": [_dataset_entry(split.eval, self.dataset_format)],
            "val_set_size": 0.0,
            "dataset_prepared_path": str(run.run_dir / "prepared"),
            "output_dir": str(run.output_dir),
            "sequence_len": self.sequence_len,
            "sample_packing": False,
            "eval_sample_packing": False,
            "train_on_inputs": False,
            "adapter": "qlora" if quantized else "lora",
            "load_in_4bit": quantized,
            "lora_r": int(knobs["lora_r"]),
            "lora_alpha": llm.lora_alpha(knobs),
            "lora_dropout": float(knobs["lora_dropout"]),
            "learning_rate": float(knobs["learning_rate"]),
            "lr_scheduler": str(knobs["lr_scheduler"]),
            "warmup_ratio": shape.warmup_ratio,
            "optimizer": str(knobs["optimizer"]),
            "weight_decay": float(knobs["weight_decay"]),
            "micro_batch_size": shape.micro_batch_size,
            "gradient_accumulation_steps": shape.gradient_accumulation_steps,
            "eval_batch_size": llm.EVAL_BATCH_SIZE,
            "max_steps": shape.steps,
            "eval_strategy": "steps",
            "eval_steps": shape.eval_steps,
            "logging_steps": 1,
            "use_tensorboard": True,
            "save_strategy": "steps" if save_every_n_steps else "no",
            "seed": int(request.seed),
            "bf16": "auto",
        }
        if self.on_cpu:
            config.update(CPU_SETTINGS)
        if knobs.get("lora_target", "all_linear") == "all_linear":
            config["lora_target_linear"] = True
        else:
            config["lora_target_modules"] = list(llm.target_modules(knobs))
        if save_every_n_steps:
            config["save_steps"] = int(save_every_n_steps)
        if resume_from:
            config["resume_from_checkpoint"] = str(resume_from)
        return config

    def write_config(self, run: llm.LLMRun) -> Path:
        config_path = run.run_dir / "axolotl.yml"
        import yaml  # imported to write only: opening a session (status) needs no YAML

        config_path.write_text(yaml.safe_dump(self.build_config(run), sort_keys=False), encoding="utf-8")
        return config_path

    def command(self, run: llm.LLMRun, config_path: Path) -> list[str]:
        precision = "no" if self.on_cpu else "bf16"
        return make_accelerate_launch_prefix(self.python, mixed_precision=precision) + [
            "--num_processes", "1", "-m", "axolotl.cli.train", str(config_path),
        ]
