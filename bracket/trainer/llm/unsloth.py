"""Unsloth LoRA adapter (preset ``unsloth-lora``): our own driver script per candidate.

``prepare_run`` writes ``<run_dir>/unsloth_run.json`` and returns
``<trainer python> <run_dir>/scripts/unsloth_driver.py --config unsloth_run.json`` (the
driver and ``llm_generate.py`` are copied into the run folder). The driver
(:mod:`bracket.trainer.scripts.unsloth_driver`) runs inside the Unsloth virtualenv, trains with
``FastLanguageModel`` + TRL's ``SFTTrainer`` on Bracket's fixed train/eval split, writes
TensorBoard scalars with the HF tag names (``train/loss``, ``eval/loss``) to
``<run_dir>/logs/tb``, the log history to ``<output_dir>/log_history.json`` and the
adapter to ``<output_dir>``.

Current Unsloth (2026.x) imports and trains LoRA on the CPU too (slowly, in fp32; the field
``device`` says which); nothing in ``bracket`` imports it. The unit tests run the driver with
faked ``unsloth``/``trl``/``transformers``/``datasets``; the slow end-to-end test trains a
tiny model with the real ones. The trainer venv also needs ``tensorboard`` (the driver
writes with torch's SummaryWriter).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bracket.fields import FieldSpec
from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.trainer.llm import base as llm
from bracket.trainer.llm.checkpoints import HFPauseResume

DRIVER_SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "unsloth_driver.py"
#: HF optimizer names; the notebooks use adamw_8bit
OPTIMIZERS = ("adamw_8bit", "paged_adamw_8bit", "adamw_torch_fused", "adamw_torch")
SCHEDULERS = ("linear", "cosine", "constant_with_warmup")
FIELDS = (
    *llm.COMMON_FIELDS,
    llm.trainer_python_field("Unsloth (and tensorboard)", "BRACKET_UNSLOTH_PYTHON", "unsloth"),
    FieldSpec(
        "quantize_base", "Base model quantisation", "choice", default="4bit", choices=("none", "4bit"),
        help="4bit loads the base model in 4 bit (QLoRA), Unsloth's default.",
    ),
)


class UnslothLoRA(HFPauseResume, llm.LLMTrainer):
    """LoRA through Unsloth's FastLanguageModel and TRL's SFTTrainer (our driver)."""

    def declare_search_space(self) -> SearchSpace:
        return llm.build_search_space(OPTIMIZERS, SCHEDULERS)

    def baseline_config(self) -> NamedConfig:
        # r 16 / alpha 16, dropout 0, 2 x 4, lr 2e-4 linear, adamw_8bit, wd 0.001; warmup 5 of 60 steps.
        return NamedConfig("llama3.1-8b-alpaca-notebook", {
            "learning_rate": 2e-4, "warmup_ratio": 0.08, "lora_r": 16, "lora_alpha_ratio": 1,
            "lora_dropout": 0.0, "optimizer": "adamw_8bit", "lr_scheduler": "linear",
            "effective_batch": 8, "weight_decay": 0.001,
        }, source="unslothai/notebooks nb/Llama3.1_(8B)-Alpaca.ipynb")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # r 32 / alpha 32; 5 warmup steps of 30 is 17 %, clamped to the space's 10 %.
            NamedConfig("qwen3-14b-notebook", {
                "learning_rate": 2e-4, "warmup_ratio": 0.1, "lora_r": 32, "lora_alpha_ratio": 1,
                "lora_dropout": 0.0, "optimizer": "adamw_8bit", "lr_scheduler": "linear",
                "effective_batch": 8, "weight_decay": 0.001,
            }, source="unslothai/notebooks nb/Qwen3_(14B).ipynb"),
            # The same notebook's advice for longer runs: lr 2e-5.
            NamedConfig("qwen3-14b-long-run-lr", {
                "learning_rate": 2e-5, "warmup_ratio": 0.1, "lora_r": 32, "lora_alpha_ratio": 1,
                "lora_dropout": 0.0, "optimizer": "adamw_8bit", "lr_scheduler": "linear",
                "effective_batch": 8, "weight_decay": 0.001,
            }, source="unslothai/notebooks nb/Qwen3_(14B).ipynb (comment: 2e-5 for long runs)"),
            # unsloth-cli.py defaults: wd 0.01, warmup 5 of 400 steps.
            NamedConfig("unsloth-cli-defaults", {
                "learning_rate": 2e-4, "warmup_ratio": 0.0125, "lora_r": 16, "lora_alpha_ratio": 1,
                "lora_dropout": 0.0, "optimizer": "adamw_8bit", "lr_scheduler": "linear",
                "effective_batch": 8, "weight_decay": 0.01,
            }, source="unslothai/unsloth unsloth-cli.py defaults"),
            # The guide's alternatives: alpha = 2r, cosine, 5-10 % warmup, a larger batch.
            NamedConfig("hyperparameters-guide-2r", {
                "learning_rate": 2e-4, "warmup_ratio": 0.05, "lora_r": 16, "lora_alpha_ratio": 2,
                "lora_dropout": 0.0, "optimizer": "adamw_8bit", "lr_scheduler": "cosine",
                "effective_batch": 16, "weight_decay": 0.01,
            }, source="docs.unsloth.ai LoRA Hyperparameters Guide"),
        ]

    def build_driver_config(self, run: llm.LLMRun) -> dict[str, Any]:
        """The driver's JSON config (keys documented in ``unsloth_driver``)."""
        knobs, split, shape, output_dir = run.knobs, run.split, run.shape, run.output_dir
        # a pause step is a save step (``llm.checkpoints``); a resume continues from its checkpoint
        save_every_n_steps, resume_from = self.save_steps(run.request, shape.steps), run.request.resume_from
        return {
            "model": self.field("base_model"),
            "device": "cpu" if self.on_cpu else "gpu",
            "max_seq_length": self.sequence_len,
            "load_in_4bit": self.field("quantize_base", "4bit") == "4bit",
            "dataset_format": self.dataset_format,
            "train_file": str(split.train),
            "eval_file": str(split.eval),
            "output_dir": str(output_dir),
            "logging_dir": str(run.logging_dir),
            "log_history_path": str(output_dir / "log_history.json"),
            "seed": int(run.request.seed),
            "resume_from": str(resume_from) if resume_from else None,
            "lora": {
                "r": int(knobs["lora_r"]), "alpha": llm.lora_alpha(knobs),
                "dropout": float(knobs["lora_dropout"]), "target_modules": list(llm.target_modules(knobs)),
            },
            "training": {
                "learning_rate": float(knobs["learning_rate"]),
                "lr_scheduler_type": str(knobs["lr_scheduler"]),
                "warmup_ratio": shape.warmup_ratio,
                "optim": str(knobs["optimizer"]),
                "weight_decay": float(knobs["weight_decay"]),
                "per_device_train_batch_size": shape.micro_batch_size,
                "per_device_eval_batch_size": llm.EVAL_BATCH_SIZE,
                "gradient_accumulation_steps": shape.gradient_accumulation_steps,
                "max_steps": shape.steps,
                "eval_steps": shape.eval_steps,
                "save_steps": int(save_every_n_steps) if save_every_n_steps else None,
            },
        }

    def write_config(self, run: llm.LLMRun) -> Path:
        run.output_dir.mkdir(parents=True, exist_ok=True)
        config_path = run.run_dir / "unsloth_run.json"
        config_path.write_text(json.dumps(self.build_driver_config(run), indent=1), encoding="utf-8")
        return config_path

    def command(self, run: llm.LLMRun, config_path: Path) -> list[str]:
        driver = llm.copy_script(DRIVER_SCRIPT, run.run_dir)
        llm.copy_script(llm.GENERATE_SCRIPT, run.run_dir)  # the driver loads its prompt layout from it
        return [self.python, str(driver), "--config", str(config_path)]
