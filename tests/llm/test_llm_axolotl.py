"""Axolotl adapter: the per-run YAML against Axolotl's config schema, and a fake-python run."""

from __future__ import annotations

import logging

import optuna
import pytest
import yaml

from bracket.trainer.base import RunRequest
from bracket.trainer.prompts import SamplePrompt
from tests.llm.llm_helpers import load_inventory, read_tags, run_spec

INVENTORY = load_inventory("axolotl_keys.json")


def _configs(trainer, sampled: int = 20):
    configs = [trainer.baseline_config().knobs, *(c.knobs for c in trainer.curated_configs())]
    optuna.logging.set_verbosity(logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3))
    space = trainer.declare_search_space()
    configs += [space.suggest(study.ask()) for _ in range(sampled)]
    return configs


def _prepare(trainer, run_dir, knobs, **kwargs):
    kwargs.setdefault("max_steps", 100)
    kwargs.setdefault("seed", 7)
    return trainer.prepare_run(RunRequest(run_dir=run_dir, knobs=trainer.config_from_dict(knobs),
                                          dataset=trainer.dataset_source(None), **kwargs))


@pytest.mark.parametrize("data_format", ["alpaca", "chat", "sharegpt", "completion"])
def test_yaml_uses_only_schema_keys(make_trainer, tmp_path, data_format, monkeypatch):
    trainer = make_trainer("axolotl-lora", data_format=data_format)
    monkeypatch.setattr("bracket.trainer.llm.dataset.check_rows", lambda *a, **k: None)
    for n, knobs in enumerate(_configs(trainer)):
        spec = _prepare(trainer, tmp_path / f"r{n}", knobs, save_every_n_steps=50 if n % 2 else None)
        config = yaml.safe_load((tmp_path / f"r{n}" / "axolotl.yml").read_text())
        assert set(config) <= set(INVENTORY["keys"]), set(config) - set(INVENTORY["keys"])
        for entry in config["datasets"] + config["test_datasets"]:
            assert set(entry) <= set(INVENTORY["dataset_keys"])
        assert not ("warmup_steps" in config and "warmup_ratio" in config)
        assert config["lora_alpha"] in (config["lora_r"], 2 * config["lora_r"])
        assert config["micro_batch_size"] * config["gradient_accumulation_steps"] == knobs["effective_batch"]
        assert config["max_steps"] == spec.max_steps


def test_no_strategy_is_a_quoted_string(make_trainer, tmp_path):
    trainer = make_trainer("axolotl-lora")
    _prepare(trainer, tmp_path / "r", trainer.baseline_config().knobs)
    text = (tmp_path / "r" / "axolotl.yml").read_text()
    assert "save_strategy: 'no'" in text
    assert yaml.safe_load(text)["save_strategy"] == "no"


def test_eval_split_is_fixed_across_runs(make_trainer, tmp_path):
    trainer = make_trainer("axolotl-lora")
    first = trainer.curated_configs()[0].knobs
    second = {**trainer.baseline_config().knobs, "effective_batch": 32}
    _prepare(trainer, tmp_path / "a", first, seed=1)
    _prepare(trainer, tmp_path / "b", second, seed=2)
    a = yaml.safe_load((tmp_path / "a" / "axolotl.yml").read_text())
    b = yaml.safe_load((tmp_path / "b" / "axolotl.yml").read_text())
    assert a["val_set_size"] == b["val_set_size"] == 0.0
    eval_a, eval_b = a["test_datasets"][0]["path"], b["test_datasets"][0]["path"]
    assert open(eval_a).read() == open(eval_b).read() and open(eval_a).read()
    assert (a["seed"], b["seed"]) == (1, 2)
    assert a["eval_batch_size"] == b["eval_batch_size"]
    # equal token budget: 100 steps at the reference batch 8 is 25 steps at 32
    assert b["max_steps"] == 25 and b["max_steps"] * 32 == 100 * 8


def test_launch_spec(make_trainer, tmp_path):
    trainer = make_trainer("axolotl-lora", quantize_base="4bit")
    spec = _prepare(trainer, tmp_path / "r", trainer.baseline_config().knobs)
    assert spec.cmd[1:3] == ["-m", "accelerate.commands.launch"]
    assert spec.cmd[-2:] == ["axolotl.cli.train", str(tmp_path / "r" / "axolotl.yml")]
    assert spec.env["AXOLOTL_DO_NOT_TRACK"] == "1"
    assert spec.env["TENSORBOARD_LOGGING_DIR"] == str(spec.logging_dir)
    assert spec.loss_tags == ("train/loss",) and spec.eval_loss_tags == ("eval/loss",)
    assert spec.sample_dir == spec.output_dir / "sample"
    config = yaml.safe_load((tmp_path / "r" / "axolotl.yml").read_text())
    assert (config["adapter"], config["load_in_4bit"]) == ("qlora", True)


def test_fake_axolotl_run_writes_the_real_tags(make_trainer, tmp_path):
    trainer = make_trainer("axolotl-lora")
    spec = _prepare(trainer, tmp_path / "r", trainer.baseline_config().knobs, max_steps=20,
                    sample_prompts=[SamplePrompt("hi", seed=1)])
    result = run_spec(spec)
    assert result.returncode == 0, result.stderr
    series = read_tags(spec.logging_dir, spec.tfevents_glob)
    assert len(series[spec.loss_tags[0]]) == spec.max_steps == 40
    eval_steps = [step for step, _ in series[spec.eval_loss_tags[0]]]
    assert eval_steps[0] == 0 and eval_steps[-1] == spec.max_steps
    assert (spec.output_dir / "adapter_config.json").is_file()


def test_batch_size_choices_narrow_the_effective_batch_and_micro_batch(make_trainer, tmp_path):
    """Issue 19: the Setup tab's batch sizes narrow an LLM trainer's examples per step, and
    micro-batch choices (a fixed knob) are valid in the session's space."""
    from bracket.errors import SearchSpaceError

    trainer = make_trainer("axolotl-lora")
    space = trainer.session_space({"batch_size": ["8", "32"], "micro_batch_size": [2, 4]})
    assert space["effective_batch"].choices == (8, 32) and space["micro_batch_size"].choices == (2, 4)
    knobs = {**trainer.baseline_config().knobs, "effective_batch": 32, "micro_batch_size": 4}
    with pytest.raises(SearchSpaceError, match="fixed at 2, got 4"):
        trainer.config_from_dict(knobs)
    trainer.prepare_run(RunRequest(run_dir=tmp_path / "r", knobs=trainer.config_from_dict(knobs, space), max_steps=100,
                                   seed=1, dataset=trainer.dataset_source(None)))
    config = yaml.safe_load((tmp_path / "r" / "axolotl.yml").read_text())
    assert (config["micro_batch_size"], config["gradient_accumulation_steps"]) == (4, 8)
