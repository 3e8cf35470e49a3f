"""Fixtures of the sd-scripts adapter tests: fake model files, an image folder, a trainer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PIL import Image

from bracket.registry import get_preset

SD_PRESETS = ("sdxl-lora", "sdxl-full", "sd35-lora", "sd35-full", "flux1-lora", "flux1-full",
              "lumina-lora", "lumina-full", "anima-lora", "anima-full", "hunyuan-image-lora")


@pytest.fixture
def image_folder(tmp_path) -> Path:
    folder = tmp_path / "images"
    folder.mkdir()
    for n, colour in enumerate(("red", "green", "blue")):
        Image.new("RGB", (32, 32), colour).save(folder / f"img{n}.png")
        (folder / f"img{n}.txt").write_text(f"a {colour} square", encoding="utf-8")
    return folder


@pytest.fixture
def field_values(tmp_path):
    """``field_values(preset_id, **overrides)``: every field filled with a fake input."""

    def make(preset_id: str, **overrides: str) -> dict[str, str]:
        preset = get_preset(preset_id)
        sd_dir = tmp_path / "sd-scripts"
        sd_dir.mkdir(exist_ok=True)
        values: dict[str, str] = {"sd_scripts_dir": str(sd_dir), "trainer_python": sys.executable,
                                  "vram_gb": "24", "device": "gpu"}  # the CPU mode: test_sd_cpu_mode
        models = tmp_path / "models"
        models.mkdir(exist_ok=True)
        for spec in preset.fields:
            if spec.name.endswith("_path"):
                path = models / f"{spec.name}.safetensors"
                path.write_bytes(b"fake")
                values[spec.name] = str(path)
        values.update(overrides)
        return {k: v for k, v in values.items() if k in {s.name for s in preset.fields}}

    return make


@pytest.fixture
def build(field_values, image_folder):
    """``build(preset_id, **overrides)``: the adapter, built through its preset."""

    def make(preset_id: str, **overrides: str):
        values = field_values(preset_id, dataset=str(image_folder), **overrides)
        return get_preset(preset_id).build_trainer(values)

    return make
