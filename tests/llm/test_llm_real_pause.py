"""The real Axolotl (``vendor/axolotl/.venv``) pauses a tiny random Llama's run at a rung on the
CPU and resumes it from ``checkpoint-<step>`` with the steps and the loss continuing: 0→r→R
against 0→R, measured (issue 38). Skips without the venv (``./install.sh --llm-trainers``)."""

from __future__ import annotations

import os

import pytest

from bracket.registry import get_preset
from bracket.trainer.base import RunRequest
from tests.fakes import run_until_paused
from tests.llm.llm_helpers import trainer_venv_python, write_alpaca

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]
#: request steps at the reference batch of 8 = twice as many optimizer steps of 2 x 2
FULL, RUNG = 8, 4


def test_axolotl_pauses_and_resumes_the_tiny_model(tmp_path, tiny_llm):
    python = trainer_venv_python("axolotl")
    if python is None:
        pytest.skip("vendor/axolotl/.venv is missing: run ./install.sh --llm-trainers")
    data = write_alpaca(tmp_path / "alpaca.jsonl", rows=40)
    trainer = get_preset("axolotl-lora").build_trainer({
        "dataset": str(data), "trainer_python": str(python), "base_model": str(tiny_llm), "device": "cpu",
        "sequence_len": "256", "eval_size": "8"})
    knobs = trainer.config_from_dict({**trainer.baseline_config().knobs, "optimizer": "adamw_torch",
                                      "effective_batch": 4, "lora_r": 8})
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

    def launch(run_dir, **kwargs):
        spec = trainer.prepare_run(RunRequest(run_dir=run_dir, knobs=knobs, dataset=data, max_steps=FULL, seed=3,
                                              **kwargs))
        losses, stopped = run_until_paused(trainer, spec, run_dir / "launch.log", tag="train/loss",
                                           **{**env, "PATH": os.environ.get("PATH", "")})
        return losses, spec, stopped

    whole, spec, _ = launch(tmp_path / "whole")
    steps = spec.max_steps
    assert sorted(whole) == list(range(1, steps + 1))
    first, spec, stopped = launch(tmp_path / "halved", stop_at_step=RUNG)
    pause = spec.pause_step
    assert stopped and pause == steps // 2
    checkpoint = trainer.paused_state(spec.output_dir, pause)
    assert checkpoint is not None and pause in first and max(first) < steps
    rest, spec, stopped = launch(tmp_path / "halved", resume_from=checkpoint, resume_step=pause)
    assert not stopped and sorted(rest) == list(range(pause + 1, steps + 1))
    gaps = {s: abs(rest[s] - whole[s]) for s in rest}
    print("axolotl resume gaps per step:", gaps)
    # measured on the CPU: the same data order, RNG and schedule; float noise only
    assert max(gaps.values()) <= 1e-3 * max(abs(whole[s]) for s in rest), gaps
