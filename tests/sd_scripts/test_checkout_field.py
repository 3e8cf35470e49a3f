"""The trainer folder field is a checkout only when it holds the scripts the preset runs.

An empty ``vendor/sd-scripts`` (a clone made without ``--recursive``) exists and is a folder,
so the plain path check passes it; the Setup form's line under the field, session start and
``doctor`` must all say that the preset's scripts are not in it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bracket.errors import BracketError
from bracket.registry import get_preset
from bracket.session import SearchSettings, Session
from tests.musubi.helpers import fields_for
from tests.musubi.helpers import image_folder as musubi_images
from ui.setup_preset import field_message

SDXL_SCRIPTS = ("sdxl_train_network.py", "tools/cache_latents.py", "tools/cache_text_encoder_outputs.py")


def _message(preset_id: str, name: str, fields: dict[str, str]) -> str:
    preset = get_preset(preset_id)
    spec = next(s for s in preset.fields if s.name == name)
    return field_message(preset, spec, fields[name], fields)


def test_an_empty_sd_scripts_folder_gets_a_warning_not_a_tick(field_values, image_folder):
    fields = field_values("sdxl-lora", dataset=str(image_folder))
    checkout = Path(fields["sd_scripts_dir"])
    assert not any(checkout.iterdir())
    said = _message("sdxl-lora", "sd_scripts_dir", fields)
    assert said.startswith("⚠ sd-scripts folder:") and all(name in said for name in SDXL_SCRIPTS), said
    assert "not a checkout of kohya-ss/sd-scripts" in said
    for name in SDXL_SCRIPTS:  # a checkout with every script the preset runs
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        (checkout / name).write_text("", encoding="utf-8")
    assert _message("sdxl-lora", "sd_scripts_dir", fields) == "✓"
    (checkout / "tools" / "cache_latents.py").unlink()  # the pre-cache tools are the preset's scripts too
    assert "tools/cache_latents.py is not in" in _message("sdxl-lora", "sd_scripts_dir", fields)
    sd35 = _message("sd35-lora", "sd_scripts_dir", field_values("sd35-lora", dataset=str(image_folder)))
    assert sd35.startswith("⚠") and "sd3_train_network.py is not in" in sd35  # each preset its own script


def test_an_empty_musubi_folder_gets_a_warning(tmp_path):
    fields = fields_for("zimage-lora", tmp_path, musubi_images(tmp_path))
    checkout = Path(fields["musubi_dir"])
    for script in checkout.rglob("*.py"):
        script.unlink()
    said = _message("zimage-lora", "musubi_dir", fields)
    assert said.startswith("⚠ musubi-tuner folder:") and "zimage_train_network.py" in said, said


def test_starting_a_search_on_an_empty_checkout_names_every_missing_script(field_values, image_folder):
    fields = field_values("sdxl-lora", dataset=str(image_folder))
    (Path(fields["sd_scripts_dir"]) / "sdxl_train_network.py").write_text("", encoding="utf-8")
    with pytest.raises(BracketError, match="tools/cache_latents.py, tools/cache_text_encoder_outputs.py are not in"):
        Session.create("sdxl-lora", fields, SearchSettings(budget=1, steps=2, sample_prompts="a photo of sks"),
                       name="empty")
