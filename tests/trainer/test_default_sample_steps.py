"""Every image preset's runs sample at least five steps after step 0 when the search asks for no
interval (issue 43, item 7): the best step is chosen among the sampled steps, and SDXL used to
sample only steps 0 and 100 — a choice of one. Built with fake inputs (``tests.contract.fakes``)
at the preset's own default run length, with and without the held-out validation split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bracket.errors import BracketError
from bracket.registry import PRESETS
from bracket.session.search_settings import SearchSettings
from bracket.trainer.base import RunRequest
from bracket.trainer.heldout import ValidationPlan
from bracket.trainer.prompts import SamplePrompt
from bracket.trainer.sample_steps import SAMPLED_STEPS
from tests.contract.fakes import fake_values, image_folder

PROMPTS = [SamplePrompt("a red fox in the snow", seed=11), SamplePrompt("a lighthouse at dusk", seed=12)]


def _image_trainer(preset, root: Path):
    dataset = image_folder(root)
    try:
        trainer = preset.build_trainer(fake_values(preset, root, dataset))
    except BracketError:  # an LLM preset (its dataset is a JSONL file): not an image preset
        return None, dataset
    if trainer.sample_kind != "image" or not getattr(trainer, "writes_samples", True):
        return None, dataset
    return trainer, dataset


def _job(cmd: list[str]) -> dict | None:
    """The ai-toolkit job file a command runs (``run.py <job>.json``), read; None for flag commands."""
    jobs = [arg for arg in cmd if arg.endswith(".json") and Path(arg).is_file()]
    return json.loads(Path(jobs[-1]).read_text(encoding="utf-8")) if jobs else None


def _sampled_steps(cmd: list[str], max_steps: int) -> list[int]:
    """The steps the command renders samples at (its prompts at ``--sample_every_n_steps``
    multiples, and step 0 with ``--sample_at_first``; an ai-toolkit job: at ``sample_every``
    multiples, step 0 and the last step)."""
    job = _job(cmd)
    if job is not None:
        sample = job["config"]["process"][0].get("sample")
        if not sample:
            return []
        every = int(sample["sample_every"])
        return sorted({0, *range(every, max_steps + 1, every), max_steps})
    if "--sample_prompts" not in cmd:
        return []
    every = int(cmd[cmd.index("--sample_every_n_steps") + 1]) if "--sample_every_n_steps" in cmd else 0
    steps = [0] if "--sample_at_first" in cmd else []
    return steps + (list(range(every, max_steps + 1, every)) if every else [])


@pytest.mark.parametrize("preset", PRESETS, ids=[p.id for p in PRESETS])
def test_an_image_preset_samples_enough_steps_to_choose_the_best_one(preset, tmp_path):
    trainer, dataset = _image_trainer(preset, tmp_path)
    if trainer is None:
        pytest.skip(f"{preset.id} renders no pictures")
    steps = int(dict(preset.search_defaults).get("steps", SearchSettings().steps))
    for validation in (None, ValidationPlan(0.1, 7) if trainer.validation_tags else None):
        trainer.validation = validation
        config = trainer.config_from_dict(trainer.baseline_config().knobs)
        spec = trainer.prepare_run(RunRequest(run_dir=tmp_path / f"run-{bool(validation)}", knobs=config,
                                              dataset=dataset, max_steps=steps, seed=1, sample_prompts=PROMPTS))
        sampled = [s for s in _sampled_steps(spec.cmd, steps) if s > 0]
        assert len(sampled) >= SAMPLED_STEPS and sampled[-1] == steps, (preset.id, validation, sampled)
        if validation is not None:  # the validation loss is taken at the sampled steps
            job = _job(spec.cmd)
            every = (job["config"]["process"][0]["train"]["validation_config"]["validate_every_n_steps"]
                     if job is not None else spec.cmd[spec.cmd.index("--validate_every_n_steps") + 1])
            assert str(every) == str(sampled[0])
        # the person's interval wins (a larger one lowers the sampling cost)
        asked = trainer.prepare_run(RunRequest(run_dir=tmp_path / f"asked-{bool(validation)}", knobs=config,
                                               dataset=dataset, max_steps=steps, seed=1, sample_prompts=PROMPTS,
                                               sample_every_n_steps=steps))
        assert [s for s in _sampled_steps(asked.cmd, steps) if s > 0] == [steps]
