"""Whether stored settings' values fit the types of their fields (``SearchSettings.stored_problem``): a
session row read back from a store that may be damaged is checked before anything uses it."""

from __future__ import annotations

import math
import types
import typing
from typing import Any

#: a stored whole number past this is damage, whatever the setting (budgets, steps and seeds stay far below)
STORED_LIMIT = 10 ** 12


def type_problem(cls: type, data: dict[str, Any], prefix: str = "") -> str | None:
    """The first value of ``data`` that its field of dataclass ``cls`` cannot hold, said in words."""
    hints = typing.get_type_hints(cls)
    for name, value in data.items():
        if name not in hints:
            continue  # an older field, no longer read
        hint = hints[name]
        union = typing.get_origin(hint) in (typing.Union, types.UnionType)
        plain = tuple(typing.get_origin(t) or t for t in (typing.get_args(hint) if union else (hint,)))
        if value is None and type(None) in plain:
            continue
        if not any(holds(kind, value) for kind in plain):
            return f"its setting {prefix}{name} is {str(value)[:60]!r}, not {' or '.join(k.__name__ for k in plain)}"
    return None


def holds(kind: Any, value: Any) -> bool:
    """Whether a stored ``value`` fits a settings field of type ``kind`` (int, float, bool, str, dict, list)."""
    if kind is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind is int:
        return isinstance(value, int) and abs(value) <= STORED_LIMIT
    if kind is float:
        return isinstance(value, (int, float)) and math.isfinite(value) and abs(value) <= STORED_LIMIT
    return isinstance(kind, type) and isinstance(value, kind)
