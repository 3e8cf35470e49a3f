"""Unsloth adapter and driver: the driver runs end to end with faked unsloth/trl/transformers/datasets."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bracket.trainer.base import RunRequest
from bracket.trainer.scripts import unsloth_driver
from tests.llm.llm_helpers import fake_module_env, read_tags


def _prepare(trainer, run_dir, knobs, **kwargs):
    kwargs.setdefault("max_steps", 12)
    kwargs.setdefault("seed", 7)
    return trainer.prepare_run(RunRequest(run_dir=run_dir, knobs=trainer.config_from_dict(knobs),
                                          dataset=trainer.dataset_source(None), **kwargs))


def _run_driver(spec, **env):
    cmd = [sys.executable, *spec.cmd[1:]]  # the trainer python is the test's python + fake modules
    return subprocess.run(cmd, cwd=spec.cwd, env=fake_module_env(**env), capture_output=True, text=True,
                          timeout=120, check=False)


def test_driver_config(make_trainer, tmp_path):
    trainer = make_trainer("unsloth-lora")
    knobs = {**trainer.baseline_config().knobs, "effective_batch": 16, "lora_alpha_ratio": 2}
    spec = _prepare(trainer, tmp_path / "r", knobs, max_steps=100)
    config = json.loads((tmp_path / "r" / "unsloth_run.json").read_text())
    assert spec.cmd == [trainer.python, str(tmp_path / "r" / "scripts" / "unsloth_driver.py"),
                        "--config", str(tmp_path / "r" / "unsloth_run.json")]
    assert (tmp_path / "r" / "scripts" / "llm_generate.py").is_file()
    assert config["lora"]["alpha"] == 2 * config["lora"]["r"] == 32
    training = config["training"]
    assert training["per_device_train_batch_size"] * training["gradient_accumulation_steps"] == 16
    assert training["max_steps"] == spec.max_steps == 50
    assert config["logging_dir"] == str(spec.logging_dir) and config["load_in_4bit"] is True
    assert spec.loss_tags == ("train/loss",) and spec.eval_loss_tags == ("eval/loss",)


@pytest.mark.parametrize("version,warmup_key", [("5.5.0", "warmup_steps"), ("4.57.6", "warmup_ratio")])
def test_driver_end_to_end_with_fakes(make_trainer, tmp_path, version, warmup_key):
    trainer = make_trainer("unsloth-lora")
    spec = _prepare(trainer, tmp_path / "r", {**trainer.baseline_config().knobs, "warmup_ratio": 0.1})
    result = _run_driver(spec, FAKE_TRANSFORMERS_VERSION=version)
    assert result.returncode == 0, result.stderr
    series = read_tags(spec.logging_dir, spec.tfevents_glob)
    assert [step for step, _ in series["train/loss"]] == list(range(1, spec.max_steps + 1))
    eval_steps = [step for step, _ in series["eval/loss"]]
    assert eval_steps[0] == 0 and eval_steps[-1] == spec.max_steps
    history = json.loads((spec.output_dir / "log_history.json").read_text())
    assert any("eval_loss" in entry for entry in history) and any("loss" in entry for entry in history)
    arguments = json.loads((spec.output_dir / "fake_sft_args.json").read_text())
    assert arguments[warmup_key] == pytest.approx(0.1)
    assert arguments["report_to"] == "none" and arguments["save_strategy"] == "no"
    calls = json.loads((spec.output_dir / "fake_calls.json").read_text())
    assert calls["peft"]["r"] == 16 and calls["peft"]["random_state"] == 7
    first = (spec.output_dir / "fake_first_text.txt").read_text()
    assert first.startswith("Below is an instruction that describes a task") and first.endswith("</s>")
    assert "\n\n### Instruction:\n" in first
    assert (spec.output_dir / "adapter_config.json").is_file()


def test_driver_fails_loudly_without_eval_loss(make_trainer, tmp_path):
    trainer = make_trainer("unsloth-lora")
    spec = _prepare(trainer, tmp_path / "r", trainer.baseline_config().knobs)
    result = _run_driver(spec, FAKE_NO_EVAL_LOSS="1")
    assert result.returncode == unsloth_driver.EXIT_NO_EVAL_LOSS
    assert "no eval_loss" in result.stderr
    assert (spec.output_dir / "log_history.json").is_file()


def test_chat_rows_use_the_chat_template():
    class Tokenizer:
        def apply_chat_template(self, messages, tokenize=False):
            return "|".join(f"{m['role']}:{m['content']}" for m in messages)

    row = {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]}
    assert unsloth_driver.format_row(row, "sharegpt", Tokenizer(), "") == "user:hi|assistant:hello"

    class BosTokenizer:  # a template that writes the BOS: SFTTrainer's encoding adds it again
        bos_token = "<s>"

        def apply_chat_template(self, messages, tokenize=False):
            return "<s>" + "|".join(m["content"] for m in messages)

    assert unsloth_driver.format_row({"messages": [{"role": "user", "content": "hi"}]}, "chat",
                                     BosTokenizer(), "") == "hi"
    assert unsloth_driver.format_row({"text": "abc"}, "completion", None, "<e>") == "abc<e>"


def test_hf_tag_names():
    assert unsloth_driver.tensorboard_tag("loss") == "train/loss"
    assert unsloth_driver.tensorboard_tag("eval_loss") == "eval/loss"
    assert unsloth_driver.tensorboard_tag("test_loss") == "test/loss"


@pytest.mark.parametrize(("device", "bf16_supported", "precision"), [
    ("cpu", True, (False, False)), ("gpu", True, (True, False)), ("gpu", False, (False, True))])
def test_precision_follows_the_device(make_trainer, tmp_path, device, bf16_supported, precision):
    trainer = make_trainer("unsloth-lora", device=device)
    _prepare(trainer, tmp_path / "r", trainer.baseline_config().knobs, max_steps=10)
    config = json.loads((tmp_path / "r" / "unsloth_run.json").read_text())
    arguments = unsloth_driver.training_arguments(config, transformers_version="5.5.0",
                                                  bf16_supported=bf16_supported)
    assert (arguments["bf16"], arguments["fp16"]) == precision
