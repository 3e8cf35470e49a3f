"""`.env.example` is where a person learns which settings `.env` takes: every preset field that
reads a variable from `.env` (``FieldSpec.env_var``) is listed there."""

from __future__ import annotations

import re
from pathlib import Path

from bracket.trainer.presets import PRESETS

ROOT = Path(__file__).resolve().parents[2]


def test_every_field_read_from_env_is_listed_in_env_example():
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    listed = set(re.findall(r"^#?\s*(BRACKET_[A-Z0-9_]+)=", text, re.MULTILINE))
    read = {spec.env_var: preset.id for preset in PRESETS for spec in preset.fields if spec.env_var}
    missing = {name: preset for name, preset in read.items() if name not in listed}
    assert read and not missing, f"read from .env but not in .env.example (variable: a preset): {missing}"
