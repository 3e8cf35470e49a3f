"""The registry: every preset Bracket can search, as one table.

A preset is data (:class:`bracket.trainer.preset.ModelPreset`): an id, a family, LoRA or full
fine-tune, the fields a person fills in and the adapter class that turns them into
commands. Each trainer family keeps its rows in ``bracket/trainer/<family>/presets.py``,
joined in one flat list (``bracket.trainer.presets``); this module checks the table and
looks presets up. Adding a trainer means one adapter module and one row
(docs/ADDING_A_TRAINER.md).
"""

from __future__ import annotations

import re

from bracket.errors import UnknownPresetError
from bracket.trainer.preset import TRAINING_TYPES, ModelPreset
from bracket.trainer.presets import PRESETS

_ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def check_table(presets: tuple[ModelPreset, ...]) -> None:
    """Raise if ids repeat, are not lower-case-hyphenated, or a type is unknown."""
    ids = [p.id for p in presets]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise RuntimeError(f"Duplicate preset ids: {duplicates}")
    for preset in presets:
        if not _ID_PATTERN.match(preset.id):
            raise RuntimeError(f"Preset id {preset.id!r} must be lower-case and hyphenated")
        if preset.training_type not in TRAINING_TYPES:
            raise RuntimeError(f"Preset {preset.id}: training_type must be one of {TRAINING_TYPES}")


check_table(PRESETS)


def get_preset(preset_id: str) -> ModelPreset:
    """The preset with ``preset_id``; an unknown id raises with the list of known ones."""
    for preset in PRESETS:
        if preset.id == preset_id:
            return preset
    known = ", ".join(p.id for p in PRESETS)
    raise UnknownPresetError(
        f"Unknown preset {preset_id!r}. Known presets: {known}. Run `python -m bracket presets` to list them."
    )


def presets_by_family() -> dict[str, list[ModelPreset]]:
    """Presets grouped by model family, in table order (the UI's grouped dropdown)."""
    groups: dict[str, list[ModelPreset]] = {}
    for preset in PRESETS:
        groups.setdefault(preset.model_family, []).append(preset)
    return groups
