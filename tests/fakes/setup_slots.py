"""The Setup form's field slots as the browser holds them, for tests that replay a person's edits
through the app's own listener (``ui.setup_fields``) without a browser."""

from __future__ import annotations

from typing import Any

from bracket.app.field_slots import choices_of, preset_fields
from ui.setup_fields import BOX_NAMES, on_edit, slot_name
from ui.setup_preset import DEFAULTS


def box_values(updates: dict[str, Any], boxes: dict[str, Any] | None = None) -> dict[str, Any]:
    """The boxes' values after ``updates`` (a switch's, a fill's: by name) reached the page holding ``boxes``."""
    boxes = dict(boxes or {})
    for name in BOX_NAMES:
        update = updates.get(name)
        if isinstance(update, dict) and "value" in update:
            boxes[name] = update["value"]
    return boxes


def type_into(preset_id: str, boxes: dict[str, Any], name: str, value: str, allow_custom: bool = True
              ) -> dict[str, Any]:
    """``boxes`` with field ``name`` of ``preset_id``'s form holding ``value`` (typed or picked)."""
    index, spec = next((i, s) for i, s in enumerate(preset_fields(preset_id)) if s.name == name)
    return {**boxes, slot_name(index, "text" if choices_of(spec, allow_custom) is None else "choice"): value}


def change(preset_id: str, fields: dict[str, str], boxes: dict[str, Any], prompts: str = "",
           origin: dict[str, Any] | None = None, allow_custom: bool = True) -> dict[str, Any]:
    """What the form's edit listener returns when a person leaves a box of ``boxes`` (``fields``: what the
    form last checked; {} when the boxes hold no edit)."""
    return on_edit(allow_custom, preset_id=preset_id, fields=fields, prompts=prompts, prompt_origin=origin,
                   budget=DEFAULTS.budget, seeds=DEFAULTS.seeds, confirm=None, lr_bracket=True, algorithm="tpe",
                   bounds={}, steps=DEFAULTS.steps, warm_start_from=[], halving=False, sample_every=None, **boxes)
