"""One real run of demo_train.py through accelerate launch: tfevents tags, sample names, resume.

Slow (two short trainer processes, ~20 s on an idle 2-core machine), so marked ``slow``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from bracket.dataset.demo_data import DEMO_PROMPTS, make_demo_dataset
from bracket.trainer.base import RunRequest
from bracket.trainer.demo import adapter as demo
from bracket.trainer.prompts import parse_prompt_lines

SAMPLE_NAME = re.compile(r"^demo_(e000000|\d{6})_(\d{2})_\d{14}_(\d+)\.png$")


def _run(launch, log: Path) -> None:
    with log.open("w") as handle:
        code = subprocess.run(
            launch.cmd,
            check=False,
            cwd=launch.cwd,
            env=launch.env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            timeout=300,
        ).returncode
    assert code == 0, log.read_text()[-3000:]


def _scalars(logging_dir: Path) -> dict[str, list[tuple[int, float]]]:
    events = sorted(logging_dir.glob("*/network_train/events.out.tfevents.*"))
    assert events, f"no tfevents under {logging_dir}/<timestamp>/network_train/"
    found: dict[str, list[tuple[int, float]]] = {}
    for path in events:
        accumulator = EventAccumulator(str(path))
        accumulator.Reload()
        for tag in accumulator.Tags()["scalars"]:
            found.setdefault(tag, []).extend((e.step, e.value) for e in accumulator.Scalars(tag))
    return found


@pytest.mark.slow
def test_a_short_real_run_writes_losses_samples_and_a_resumable_state(tmp_path):
    dataset = make_demo_dataset(tmp_path / "demo-data", count=12)
    trainer = demo.DemoLoRA({"dataset": str(dataset), "trainer_python": sys.executable})
    config = trainer.config_from_dict(trainer.curated_configs()[0].knobs)
    prompts = parse_prompt_lines(DEMO_PROMPTS[:2])
    run_dir = tmp_path / "run"
    launch = trainer.prepare_run(RunRequest(
        run_dir=run_dir,
        knobs=config,
        dataset=dataset,
        max_steps=4,
        seed=3,
        sample_prompts=prompts,
        sample_every_n_steps=2,
        save_every_n_steps=2,
        save_state=True,
    ))
    _run(launch, tmp_path / "first.log")

    scalars = _scalars(launch.logging_dir)
    assert [step for step, _ in scalars["loss/current"]] == [1, 2, 3, 4]
    assert len(scalars["loss/average"]) == 4
    assert all(0 < value < 10 for _, value in scalars["loss/current"])
    names = sorted(p.name for p in launch.sample_dir.iterdir())
    parsed = [SAMPLE_NAME.match(name) for name in names]
    assert all(parsed), names
    assert sorted((m.group(1), m.group(2), m.group(3)) for m in parsed) == [
        ("000002", "00", "1"),
        ("000002", "01", "2"),
        ("000004", "00", "1"),
        ("000004", "01", "2"),
        ("e000000", "00", "1"),
        ("e000000", "01", "2"),
    ]
    from PIL import Image

    with Image.open(launch.sample_dir / names[0]) as sample:
        assert sample.size == (128, 128)  # 32 px upscaled for the grid
    assert (launch.output_dir / "demo.safetensors").is_file()
    assert (launch.output_dir / "demo-step00000002.safetensors").is_file()
    state = launch.output_dir / "demo-step00000002-state"
    assert (state / "train_state.json").is_file()

    resumed = trainer.prepare_run(RunRequest(
        run_dir=tmp_path / "resumed",
        knobs=config,
        dataset=dataset,
        max_steps=4,
        seed=3,
        resume_from=state,
    ))
    _run(resumed, tmp_path / "resumed.log")
    assert [step for step, _ in _scalars(resumed.logging_dir)["loss/current"]] == [3, 4]
