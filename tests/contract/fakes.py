"""Fake but existing inputs for any preset: datasets, a python, model files, trainer folders.

Shared by the command contract, export and doctor-for-every-preset tests, so that a preset
added to the registry is exercised by all without a line of test code.
"""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from bracket.errors import BracketError
from bracket.trainer.base import RunRequest


def image_folder(root: Path) -> Path:
    """Two captioned 64×64 PNGs."""
    from PIL import Image

    folder = root / "images"
    folder.mkdir(parents=True)
    for n, colour in enumerate(("red", "blue")):
        Image.new("RGB", (64, 64), colour).save(folder / f"img{n}.png")
        (folder / f"img{n}.txt").write_text(f"a {colour} square", encoding="utf-8")
    return folder


def jsonl_file(root: Path) -> Path:
    """A four-line instruction dataset for the LLM trainers."""
    path = root / "data.jsonl"
    path.write_text(
        '{"instruction": "Say hi", "input": "", "output": "hi", "text": "hi"}\n' * 4, encoding="utf-8"
    )
    return path


def fake_python(root: Path) -> Path:
    """An executable 'python' that does nothing and exits 0."""
    path = root / "fake-venv" / "bin" / "python"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def fake_values(preset, root: Path, dataset: Path, *, python: str | None = None) -> dict[str, str]:
    """Every field of ``preset`` filled: folders and model files exist, control images match the dataset."""
    values: dict[str, str] = {}
    for spec in preset.fields:
        if "dataset" in spec.name:
            values[spec.name] = str(dataset)
        elif "python" in spec.name:
            values[spec.name] = python or str(fake_python(root))
        elif spec.kind == "dir":
            folder = root / "inputs" / spec.name
            folder.mkdir(parents=True, exist_ok=True)
            if spec.name == "control_dir" and Path(dataset).is_dir():
                for image in Path(dataset).glob("*.png"):  # one control image per target, same name
                    shutil.copy(image, folder / image.name)
            values[spec.name] = str(folder)
        elif spec.kind in ("file", "path"):
            path = root / "inputs" / f"{spec.name}.safetensors"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"fake")
            values[spec.name] = str(path)
        elif spec.kind == "choice" and spec.name == "vram_gb":
            values[spec.name] = "24"
        elif spec.required and not spec.resolved_default():
            values[spec.name] = spec.choices[0] if spec.choices else ("1" if spec.kind in ("int", "float") else "x")
    return values


def built_trainer(preset, root: Path, *, device: str | None = None, probe: bool = False):
    """(trainer, values, dataset, folder) of ``preset`` on fake inputs: an image folder first, a
    JSONL file for text trainers; ``probe``: the first that also prepares a baseline run. Fails the
    test, saying why each was refused, when none works."""
    errors = []
    for make in (image_folder, jsonl_file):
        attempt = root / make.__name__
        attempt.mkdir()
        dataset = make(attempt)
        values = fake_values(preset, attempt, dataset)
        if device:
            values["device"] = device
        try:
            trainer = preset.build_trainer(values)
            baseline = trainer.config_from_dict(trainer.baseline_config().knobs)
            if probe:
                trainer.prepare_run(RunRequest(run_dir=attempt / "probe", knobs=baseline, dataset=dataset,
                                               max_steps=10, seed=1))
            return trainer, values, dataset, attempt
        except BracketError as error:
            errors.append(f"{make.__name__}: {error}")
    pytest.fail(f"{preset.id}: no fake dataset works: {errors}")
