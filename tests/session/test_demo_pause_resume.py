"""The real demo trainer pauses at a rung and resumes exactly: 0→r→R equals 0→R.

A run launched with ``stop_at_step`` keeps the schedule of the full length, saves its state
at that step (COMPLETE marker last) and stops; resumed from that state it goes on so that its
training loss, its validation loss and its samples equal those of a run never paused. Slow:
three short trainer processes on CPU.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bracket.dataset.demo_data import DEMO_PROMPTS, make_demo_dataset
from bracket.session.scoring import read_scalars
from bracket.trainer.base import RunRequest
from bracket.trainer.demo import adapter as demo
from bracket.trainer.heldout import ValidationPlan
from bracket.trainer.prompts import parse_prompt_lines


def _run(launch, log: Path) -> None:
    with log.open("w") as handle:
        code = subprocess.run(launch.cmd, check=False, cwd=launch.cwd, env=launch.env, stdout=handle,
                              stderr=subprocess.STDOUT, timeout=300).returncode
    assert code == 0, log.read_text()[-3000:]


def _samples(folder: Path) -> dict[tuple[str, str], bytes]:
    """(step label, prompt index) -> the image's pixels (names carry a time stamp)."""
    from PIL import Image

    out = {}
    for path in sorted(folder.glob("*.png")):
        _, label, index, *_ = path.stem.split("_")
        with Image.open(path) as image:
            out[(label, index)] = image.tobytes()
    return out


@pytest.mark.slow
def test_a_paused_and_resumed_demo_run_equals_an_unpaused_one(tmp_path):
    dataset = make_demo_dataset(tmp_path / "demo-data", count=12)
    trainer = demo.DemoLoRA({"dataset": str(dataset), "trainer_python": sys.executable})
    trainer.validation = ValidationPlan(0.25, 7)
    # a decaying schedule with warm-up: a pause that restarted it would change every later step
    config = trainer.config_from_dict({**trainer.curated_configs()[0].knobs, "lr_scheduler": "cosine",
                                       "lr_warmup_steps": 5})

    def request(run_dir: Path, **options) -> RunRequest:
        return RunRequest(run_dir=run_dir, knobs=config, dataset=dataset, max_steps=8, seed=3,
                          sample_prompts=parse_prompt_lines(DEMO_PROMPTS[:1]), sample_every_n_steps=4, **options)

    whole = trainer.prepare_run(request(tmp_path / "whole"))
    _run(whole, tmp_path / "whole.log")

    paused = trainer.prepare_run(request(tmp_path / "paused", stop_at_step=4))
    assert paused.pause_step == 4 and trainer.resume_mode == "continue"
    assert trainer.paused_state(paused.output_dir, 4) is None  # nothing saved yet
    _run(paused, tmp_path / "paused.log")
    state = trainer.paused_state(paused.output_dir, 4)
    assert state == paused.output_dir / "demo-step00000004-state" and (state / "COMPLETE").is_file()
    first = read_scalars(paused.logging_dir)
    assert [s for s, _ in first["loss/current"]] == [1, 2, 3, 4]  # stopped at the pause, not at 8
    assert not (paused.output_dir / "demo.safetensors").exists()

    # resumed in the same run folder, as the session does: the series goes on with true steps
    resumed = trainer.prepare_run(request(tmp_path / "paused", resume_from=state, resume_step=4))
    _run(resumed, tmp_path / "resumed.log")

    reference, joined = read_scalars(whole.logging_dir), read_scalars(resumed.logging_dir)
    for tag in ("loss/current", "loss/average", "lr/unet", "loss/validation/step_average"):
        assert sorted(joined[tag]) == sorted(reference[tag]), tag
    assert [s for s, _ in sorted(joined["loss/current"])] == list(range(1, 9))
    assert _samples(resumed.sample_dir) == _samples(whole.sample_dir)
    assert set(_samples(whole.sample_dir)) == {("e000000", "00"), ("000004", "00"), ("000008", "00")}
