"""A preset's fields as the Setup form shows them: which box each takes, what it may hold.

The form has as many field slots as the preset with the most fields (:data:`SLOTS`); a field is
a text box, or a list when it has choices or is a program the browser may not type
(:func:`choices_of`: the configured value and the trainer's built-in names), and a list shows only
one of its entries (:func:`shown_value`). ``ui.setup_fields`` draws the slots from these.
"""

from __future__ import annotations

from typing import Any

from bracket.fields import allowed_values
from bracket.registry import get_preset, presets_by_family

#: as many slots as the preset with the most fields has
SLOTS = max(len(p.fields) for presets in presets_by_family().values() for p in presets)


def preset_fields(preset_id: str) -> tuple[Any, ...]:
    """The ``FieldSpec`` list of ``preset_id``, in the form's order (none without a preset)."""
    return tuple(get_preset(preset_id).fields) if preset_id else ()


def choices_of(spec: Any, allow_custom: bool) -> list[str] | None:
    """The list a field is picked from (its choices; a program's configured value and the trainer's
    built-in names when the browser may not type one), or None for a text box."""
    if spec.executable and not allow_custom:
        return allowed_values(spec)
    if spec.kind == "choice" and spec.choices:
        return list(spec.choices)
    return None


def shown_value(spec: Any, value: Any, allow_custom: bool) -> str:
    """What the field's box shows for ``value``: a list shows only one of its entries (a program not
    allowed shows the configured one, a choice not offered shows none)."""
    value = "" if value is None else str(value)
    listed = choices_of(spec, allow_custom)
    if listed is None or value in listed:
        return value
    return spec.resolved_default() if spec.executable else ""


def shown_fields(preset_id: str, fields: dict[str, Any], allow_custom: bool) -> dict[str, str]:
    """The preset's fields as its boxes show them, in the preset's order."""
    return {spec.name: shown_value(spec, fields.get(spec.name, spec.resolved_default()), allow_custom)
            for spec in preset_fields(preset_id)}


def field_help(spec: Any, allow_custom: bool) -> str:
    """The help under a field's box (a program the browser may not type says where it is set)."""
    if spec.executable and not allow_custom:
        return f"{spec.help} Set in .env; `python app.py --allow-custom-executables` lets the form type another."
    return spec.help
