"""torchtune adapter: override words against torchtune's config keys, warmup in steps, a fake run."""

from __future__ import annotations

import logging

import optuna
import pytest
import yaml

from bracket.trainer.base import RunRequest
from bracket.trainer.llm import torchtune
from tests.llm.llm_helpers import load_inventory, read_tags, run_spec

INVENTORY = load_inventory("torchtune_keys.json")


def _prepare(trainer, run_dir, knobs, **kwargs):
    kwargs.setdefault("max_steps", 100)
    kwargs.setdefault("seed", 7)
    return trainer.prepare_run(RunRequest(run_dir=run_dir, knobs=trainer.config_from_dict(knobs),
                                          dataset=trainer.dataset_source(None), **kwargs))


def _overrides(spec) -> dict[str, str]:
    start = spec.cmd.index("--config") + 2
    words = spec.cmd[start:]
    return {w.split("=", 1)[0]: (w.split("=", 1)[1] if "=" in w else "") for w in words}


@pytest.mark.parametrize("data_format", ["alpaca", "chat", "sharegpt", "completion"])
def test_overrides_use_only_known_keys(make_trainer, tmp_path, data_format, monkeypatch):
    monkeypatch.setattr("bracket.trainer.llm.dataset.check_rows", lambda *a, **k: None)
    trainer = make_trainer("torchtune-lora", data_format=data_format)
    optuna.logging.set_verbosity(logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=5))
    space = trainer.declare_search_space()
    configs = [trainer.baseline_config().knobs, *(c.knobs for c in trainer.curated_configs())]
    configs += [space.suggest(study.ask()) for _ in range(15)]
    for n, knobs in enumerate(configs):
        spec = _prepare(trainer, tmp_path / f"r{n}", knobs)
        start = spec.cmd.index("--config") + 2
        assert spec.cmd[:start - 2] == [trainer.python, "-m", "torchtune._cli.tune", "run",
                                        "lora_finetune_single_device"]
        for word in spec.cmd[start:]:
            assert word.startswith("~") or word.count("=") == 1, word
            key = word.lstrip("~").split("=", 1)[0]
            parent, _, child = key.partition(".")
            assert parent in INVENTORY["keys"], key
            if child:
                assert child in INVENTORY["nested"][parent], key


def test_warmup_ratio_becomes_steps(make_trainer, tmp_path):
    trainer = make_trainer("torchtune-lora")
    knobs = {**trainer.baseline_config().knobs, "warmup_ratio": 0.1, "effective_batch": 8}
    spec = _prepare(trainer, tmp_path / "r", knobs, max_steps=50)
    words = _overrides(spec)
    total = int(words["epochs"]) * int(words["max_steps_per_epoch"])
    assert total == spec.max_steps >= 50
    assert int(words["lr_scheduler.num_warmup_steps"]) == round(0.1 * total)
    assert not [key for key in words if "warmup_ratio" in key]


def test_epochs_cover_the_budget_on_a_small_split():
    # 48 training rows, 2 x 4: 6 steps per epoch -> 100 steps need 17 epochs of 6
    assert torchtune.epochs_and_cap(100, 48, 2, 4) == (17, 6)
    assert torchtune.epochs_and_cap(10, 10_000, 2, 4) == (1, 10)


def test_tiny_split_is_repeated_to_one_step(make_trainer, tmp_path):
    from tests.llm.llm_helpers import write_alpaca

    tiny = write_alpaca(tmp_path / "tiny.jsonl", rows=4)
    trainer = make_trainer("torchtune-lora", dataset=str(tiny))
    knobs = {**trainer.baseline_config().knobs, "effective_batch": 32}
    spec = _prepare(trainer, tmp_path / "r", knobs, max_steps=8)
    words = _overrides(spec)
    rows = len((tmp_path / "r" / "data" / "train.jsonl").read_text().splitlines())
    assert rows >= 32 and int(words["max_steps_per_epoch"]) >= 1


def test_optimizers_and_lora_targets(make_trainer, tmp_path):
    trainer = make_trainer("torchtune-lora")
    knobs = {**trainer.baseline_config().knobs, "optimizer": "paged_adamw_8bit"}
    words = _overrides(_prepare(trainer, tmp_path / "a", knobs))
    assert words["optimizer._component_"] == "bitsandbytes.optim.PagedAdamW8bit"
    assert "~optimizer.fused" in words and "optimizer.fused" not in words
    words = _overrides(_prepare(trainer, tmp_path / "b", trainer.baseline_config().knobs))
    assert (words["optimizer._component_"], words["optimizer.fused"]) == ("torch.optim.AdamW", "True")
    assert words["model.apply_lora_to_mlp"] == "True"
    assert (words["model.lora_rank"], words["model.lora_alpha"]) == ("64", "128")
    assert words["optimizer.lr"] == "0.0003"
    low = _overrides(_prepare(trainer, tmp_path / "c", {**trainer.baseline_config().knobs, "learning_rate": 1e-5}))
    assert low["optimizer.lr"] == "1.0e-05"  # a YAML 1.1 float, not the string "1e-05"


def test_launch_spec_and_resume(make_trainer, tmp_path):
    trainer = make_trainer("torchtune-lora")
    spec = _prepare(trainer, tmp_path / "r", trainer.baseline_config().knobs)
    assert spec.loss_tags == ("loss",) and spec.eval_loss_tags == ()
    assert yaml.safe_load(_overrides(spec)["metric_logger.log_dir"]) == str(spec.logging_dir)  # as OmegaConf
    assert spec.env["DO_NOT_TRACK"] == "1"
    with pytest.raises(torchtune.TorchtuneError):
        _prepare(trainer, tmp_path / "s", trainer.baseline_config().knobs, resume_from=tmp_path)


def test_fake_tune_run_writes_the_real_tags(make_trainer, tmp_path):
    trainer = make_trainer("torchtune-lora")
    spec = _prepare(trainer, tmp_path / "r", trainer.baseline_config().knobs, max_steps=16)
    result = run_spec(spec)
    assert result.returncode == 0, result.stderr
    series = read_tags(spec.logging_dir, spec.tfevents_glob)
    assert len(series["loss"]) == spec.max_steps
    assert list((spec.output_dir).glob("epoch_*/adapter_config.json"))


def test_paths_reach_torchtune_exactly_whatever_they_hold(make_trainer, tmp_path, model_dir):
    """torchtune hands each ``key=value`` to OmegaConf, which reads the value as YAML and resolves
    ``${…}``: a folder ``runs #2`` was cut to ``runs`` (the run written elsewhere), ``a: b``
    became a mapping. Every path must come back as itself, read the way OmegaConf reads it."""
    import shutil

    odd = "m #2: it's [x] ${oc.env:HOME} ü"
    model = tmp_path / odd / "model"
    shutil.copytree(model_dir, model)
    trainer = make_trainer("torchtune-lora", base_model=str(model))
    run_dir = tmp_path / odd / "run"
    words = _overrides(_prepare(trainer, run_dir, trainer.baseline_config().knobs))

    def omegaconf_reads(value: str) -> object:
        parsed = yaml.safe_load(value)
        return parsed.replace("\\${", "${") if isinstance(parsed, str) else parsed

    assert omegaconf_reads(words["checkpointer.checkpoint_dir"]) == str(model)
    for key in ("output_dir", "checkpointer.output_dir", "dataset.data_files", "metric_logger.log_dir"):
        assert str(omegaconf_reads(words[key])).startswith(str(run_dir)), (key, words[key])
