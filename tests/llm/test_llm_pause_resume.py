"""Axolotl and Unsloth runs pause at a rung (``checkpoint-<step>``, stopped once it is whole) and
resume with the step counter, the schedule and the loss continuing (issue 38), against the fake
trainers whose checkpoints behave as the HF Trainer's (``tests/llm/fakes/hf_checkpoints.py``);
torchtune restarts."""

from __future__ import annotations

import dataclasses
import json
import sys

import pytest

from bracket.trainer.base import RunRequest
from tests.fakes import run_until_paused
from tests.llm.llm_helpers import fake_module_env

pytestmark = pytest.mark.timeout(120)
FULL, RUNG = 24, 8  # request steps; the trainer's own steps are the same shares of its run


def _spec(trainer, run_dir, **kwargs):
    knobs = trainer.config_from_dict(trainer.baseline_config().knobs)
    return trainer.prepare_run(RunRequest(run_dir=run_dir, knobs=knobs, dataset=trainer.dataset_source(None),
                                          max_steps=FULL, seed=7, **kwargs))


def _launch(name, trainer, run_dir, **kwargs):
    spec = _spec(trainer, run_dir, **kwargs)
    if name == "unsloth-lora":  # the driver under the test's python with the fake modules first
        spec = dataclasses.replace(spec, cmd=[sys.executable, *spec.cmd[1:]], env=fake_module_env(**spec.env))
    losses, stopped = run_until_paused(trainer, spec, run_dir / "launch.log", tag="train/loss",
                                       FAKE_HF_STEP_SECONDS="0.02", FAKE_HF_SAVE_SECONDS="0.05")
    return losses, spec, stopped


@pytest.mark.parametrize("name", ["axolotl-lora", "unsloth-lora"])
def test_a_paused_llm_run_resumes_where_it_stopped(make_trainer, tmp_path, name):
    trainer = make_trainer(name)
    assert trainer.resume_mode == "continue"
    whole, full_spec, _ = _launch(name, trainer, tmp_path / "whole")
    steps = full_spec.max_steps
    assert sorted(whole) == list(range(1, steps + 1))

    run_dir = tmp_path / "halved"
    first, spec, stopped = _launch(name, trainer, run_dir, stop_at_step=RUNG)
    pause = spec.pause_step
    assert stopped and pause == round(RUNG / FULL * steps) and spec.max_steps == steps  # the full schedule
    checkpoint = trainer.paused_state(spec.output_dir, pause)
    assert checkpoint == spec.output_dir / f"checkpoint-{pause}"
    assert json.loads((checkpoint / "trainer_state.json").read_text())["global_step"] == pause
    assert pause in first and max(first) < steps  # the rung's loss is logged before the save

    rest, spec, stopped = _launch(name, trainer, run_dir, resume_from=checkpoint, resume_step=pause)
    assert not stopped and sorted(rest) == list(range(pause + 1, steps + 1))  # true steps, to the end
    joined = {**{s: v for s, v in first.items() if s <= pause}, **rest}
    assert joined == pytest.approx(whole)


def test_a_checkpoint_is_paused_only_once_its_trainer_state_is_whole(make_trainer, tmp_path):
    trainer = make_trainer("axolotl-lora")
    folder = tmp_path / "out" / "checkpoint-5"
    folder.mkdir(parents=True)
    (folder / "adapter_model.safetensors").write_bytes(b"x")
    assert trainer.paused_state(tmp_path / "out", 5) is None
    (folder / "trainer_state.json").write_text('{"global_step": 5, "log_hi')  # being written
    assert trainer.paused_state(tmp_path / "out", 5) is None
    (folder / "trainer_state.json").write_text('{"global_step": 5}')
    assert trainer.paused_state(tmp_path / "out", 5) == folder


def test_pause_saves_at_the_rung_and_torchtune_restarts(make_trainer, tmp_path):
    trainer = make_trainer("axolotl-lora")
    spec = _spec(trainer, tmp_path / "a", stop_at_step=RUNG, save_every_n_steps=6)
    import yaml

    config = yaml.safe_load((tmp_path / "a" / "axolotl.yml").read_text())
    assert config["save_strategy"] == "steps" and spec.pause_step % config["save_steps"] == 0
    assert config["max_steps"] == spec.max_steps
    assert make_trainer("torchtune-lora").resume_mode == "restart"
