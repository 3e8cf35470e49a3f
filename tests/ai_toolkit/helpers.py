"""Local helpers of the ai-toolkit tests: a preset's trainer on fake inputs, the job file of a launch."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from bracket.registry import PRESETS, get_preset

AITK_IDS = tuple(p.id for p in PRESETS if p.id.startswith("aitk-"))


def image_folder(root: Path, name: str = "images", count: int = 3) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        Image.new("RGB", (32, 32), (60 * n, 20, 0)).save(folder / f"img{n}.png")
        (folder / f"img{n}.txt").write_text(f"a photo of sks {n}", encoding="utf-8")
    return folder


def build(preset_id: str, root: Path, dataset: Path, **fields: str):
    values = {"ai_toolkit_dir": str(root / "ai-toolkit"), "trainer_python": str(root / "python"),
              "dataset": str(dataset), "vram_gb": "24", "model": "org/model", **fields}
    return get_preset(preset_id).trainer_factory(values)


def job_of(spec) -> dict:
    return json.loads(Path(spec.cmd[-1]).read_text(encoding="utf-8"))


def process_of(spec) -> dict:
    return job_of(spec)["config"]["process"][0]
