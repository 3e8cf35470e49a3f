"""Bracket's Unsloth driver: one LoRA run from a JSON config, run in the Unsloth virtualenv.

    python unsloth_driver.py --config run_dir/unsloth_run.json

Unsloth has no CLI that fits a search (no eval set, no warmup ratio, no logging folder), so
Bracket drives its Python API itself: ``FastLanguageModel.from_pretrained`` and
``get_peft_model``, then TRL's ``SFTTrainer`` with an eval set. The driver

* imports ``unsloth`` first and only inside :func:`main` (it patches transformers and TRL
  on import, and the tests replace it with a fake), so this module imports anywhere;
* formats rows with the same layout the generation step uses (``llm_generate.alpaca_prompt``
  and the tokenizer's chat template, without the template's BOS, which the tokenizer adds
  again when SFTTrainer encodes the text);
* trains in fp32 on a CPU (bf16/fp16 only on a GPU);
* writes TensorBoard scalars itself, from a ``TrainerCallback``, to the ``logging_dir`` of
  the config, with the HF tag names (``train/loss``, ``eval/loss``, ...) -- so the folder
  does not depend on the transformers version (4.x ``logging_dir`` vs 5.x
  ``$TENSORBOARD_LOGGING_DIR``) and ``report_to`` is ``"none"``;
* passes the warmup as ``warmup_ratio`` on transformers 4.x and as a fractional
  ``warmup_steps`` on 5.x (where ``warmup_ratio`` is deprecated);
* dumps ``trainer.state.log_history`` to ``log_history_path`` and saves the adapter to
  ``output_dir``;
* exits with status 3 when an eval set was given but no ``eval_loss`` was ever logged
  (a known Unsloth/TRL failure mode), so the candidate fails loudly instead of scoring
  on nothing.

Config keys: model, device (cpu or gpu), max_seq_length, load_in_4bit, dataset_format, train_file, eval_file,
output_dir, logging_dir, log_history_path, seed, resume_from, lora {r, alpha, dropout,
target_modules}, training {learning_rate, lr_scheduler_type, warmup_ratio, optim,
weight_decay, per_device_train_batch_size, per_device_eval_batch_size,
gradient_accumulation_steps, max_steps, eval_steps, save_steps}.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EXIT_NO_EVAL_LOSS = 3


def drop_own_folder_from_path() -> None:
    """Remove this folder from ``sys.path``: run as a script, Python puts it first, and
    Bracket's adapter modules ``unsloth.py``/``torchtune.py`` there would shadow the real
    packages."""
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]


def _load_sibling(name: str) -> Any:
    """Load ``<this folder>/<name>.py`` by path (no ``bracket`` package in the trainer venv)."""
    spec = importlib.util.spec_from_file_location(f"_bracket_{name}", HERE / f"{name}.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {HERE / f'{name}.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


alpaca_prompt = _load_sibling("llm_generate").alpaca_prompt


def tensorboard_tag(key: str) -> str:
    """HF's tag for a logged key: ``eval_loss`` -> ``eval/loss``, ``loss`` -> ``train/loss``."""
    for prefix in ("eval_", "test_"):
        if key.startswith(prefix):
            return prefix[:-1] + "/" + key[len(prefix):]
    return "train/" + key


def format_row(row: dict[str, Any], dataset_format: str, tokenizer: Any, eos: str) -> str:
    """One training text: prompt and answer in the layout generation will use."""
    if dataset_format == "alpaca":
        return alpaca_prompt(str(row["instruction"]), str(row.get("input") or "")) + str(row["output"]) + eos
    if dataset_format in ("chat", "sharegpt"):
        if dataset_format == "chat":
            messages = row["messages"]
        else:
            roles = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant",
                     "system": "system"}
            messages = [{"role": roles.get(m["from"], m["from"]), "content": m["value"]}
                        for m in row["conversations"]]
        text = tokenizer.apply_chat_template(messages, tokenize=False)
        bos = getattr(tokenizer, "bos_token", None)
        return text[len(bos):] if bos and text.startswith(bos) else text
    return str(row["text"]) + eos


def transformers_major(version: str) -> int:
    try:
        return int(version.split(".")[0])
    except ValueError:
        return 4


def training_arguments(config: dict[str, Any], *, transformers_version: str,
                       bf16_supported: bool) -> dict[str, Any]:
    """Keyword arguments of ``SFTConfig`` for ``config``. Precision: fp32 on the CPU
    (``device: cpu``); on a GPU bf16 where supported, else fp16."""
    training = config["training"]
    on_gpu = config.get("device", "gpu") != "cpu"
    bf16, half = on_gpu and bf16_supported, on_gpu
    has_eval = bool(config.get("eval_file"))
    save_steps = training.get("save_steps")
    arguments: dict[str, Any] = {
        "output_dir": config["output_dir"],
        "per_device_train_batch_size": int(training["per_device_train_batch_size"]),
        "per_device_eval_batch_size": int(training["per_device_eval_batch_size"]),
        "gradient_accumulation_steps": int(training["gradient_accumulation_steps"]),
        "max_steps": int(training["max_steps"]),
        "learning_rate": float(training["learning_rate"]),
        "lr_scheduler_type": str(training["lr_scheduler_type"]),
        "optim": str(training["optim"]),
        "weight_decay": float(training["weight_decay"]),
        "logging_steps": 1,
        "eval_strategy": "steps" if has_eval else "no",
        "save_strategy": "steps" if save_steps else "no",
        "report_to": "none",
        "seed": int(config["seed"]),
        "bf16": bf16,
        "fp16": half and not bf16,
        "dataset_text_field": "text",
        "max_length": int(config["max_seq_length"]),
        "packing": False,
    }
    if has_eval:
        arguments.update(eval_steps=int(training["eval_steps"]), eval_on_start=True)
    if save_steps:
        arguments["save_steps"] = int(save_steps)
    ratio = float(training["warmup_ratio"])
    if transformers_major(transformers_version) >= 5:
        arguments["warmup_steps"] = ratio if ratio < 1 else math.floor(ratio)
    else:
        arguments["warmup_ratio"] = ratio
    return arguments


def make_scalar_callback(base: type, writer: Any) -> Any:
    """A ``TrainerCallback`` that writes every numeric logged value as a TensorBoard scalar."""

    class ScalarCallback(base):
        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001
            for key, value in (logs or {}).items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    writer.add_scalar(tensorboard_tag(key), float(value), int(state.global_step))
            writer.flush()

    return ScalarCallback()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="One Unsloth LoRA run for Bracket.")
    parser.add_argument("--config", required=True, type=Path)
    config = json.loads(parser.parse_args(argv).config.read_text(encoding="utf-8"))
    drop_own_folder_from_path()

    import transformers
    import unsloth  # noqa: F401  (first: it patches transformers/trl on import)
    from datasets import load_dataset
    from torch.utils.tensorboard import SummaryWriter
    from transformers import TrainerCallback
    from trl import SFTConfig, SFTTrainer
    from unsloth import FastLanguageModel, is_bfloat16_supported

    lora = config["lora"]
    model, tokenizer = FastLanguageModel.from_pretrained(
        model_name=config["model"], max_seq_length=int(config["max_seq_length"]),
        load_in_4bit=bool(config["load_in_4bit"]), dtype=None,
    )
    model = FastLanguageModel.get_peft_model(
        model, r=int(lora["r"]), lora_alpha=int(lora["alpha"]), lora_dropout=float(lora["dropout"]),
        target_modules=list(lora["target_modules"]), bias="none",
        use_gradient_checkpointing="unsloth", random_state=int(config["seed"]),
    )
    eos = getattr(tokenizer, "eos_token", None) or ""
    dataset_format = config["dataset_format"]

    def load(path: str) -> Any:
        rows = load_dataset("json", data_files=path, split="train")
        return rows.map(lambda row: {"text": format_row(row, dataset_format, tokenizer, eos)})

    train_set = load(config["train_file"])
    eval_set = load(config["eval_file"]) if config.get("eval_file") else None

    Path(config["logging_dir"]).mkdir(parents=True, exist_ok=True)
    writer = SummaryWriter(log_dir=config["logging_dir"])
    arguments = training_arguments(config, transformers_version=transformers.__version__,
                                   bf16_supported=bool(is_bfloat16_supported()))
    trainer = SFTTrainer(
        model=model, processing_class=tokenizer, train_dataset=train_set, eval_dataset=eval_set,
        args=SFTConfig(**arguments), callbacks=[make_scalar_callback(TrainerCallback, writer)],
    )
    trainer.can_return_loss = True  # PEFT + SFTTrainer otherwise may not log eval_loss (trl#3694)
    try:
        trainer.train(resume_from_checkpoint=config.get("resume_from") or None)
    finally:
        writer.close()
        history = list(getattr(trainer.state, "log_history", []))
        Path(config["log_history_path"]).write_text(json.dumps(history, indent=1), encoding="utf-8")

    model.save_pretrained(config["output_dir"])
    tokenizer.save_pretrained(config["output_dir"])
    if eval_set is not None and not any("eval_loss" in entry for entry in history):
        print("ERROR: an eval set was given but no eval_loss was logged; this candidate has no score.",
              file=sys.stderr, flush=True)
        return EXIT_NO_EVAL_LOSS
    return 0


if __name__ == "__main__":
    sys.exit(main())
