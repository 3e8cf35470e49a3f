"""Small helpers of the sd-scripts adapter tests."""

from __future__ import annotations

from pathlib import Path

from bracket.trainer.base import RunRequest


def run_of(trainer, run_dir: Path, knobs: dict, dataset: Path, **kwargs):
    """prepare_run of ``knobs`` (completed by the space) with small defaults."""
    config = trainer.config_from_dict(knobs)
    return trainer.prepare_run(RunRequest(run_dir=run_dir, knobs=config, dataset=dataset,
                               max_steps=kwargs.pop("max_steps", 100), seed=kwargs.pop("seed", 3), **kwargs))


def value_of(cmd: list[str], flag: str) -> str:
    return cmd[cmd.index(flag) + 1]
