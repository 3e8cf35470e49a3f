"""The search space as a table: every knob, its range or choices, searched or fixed.

A person should see what a search will vary before pressing Start, and what it varied
afterwards. :func:`space_rows` lists each knob of a session's space (the trainer's space
narrowed by the session's bounds, ``Trainer.session_space``) beside the trainer's own
range, so a narrowed knob says so:

    knob           | searched | range / choices                | trainer's range
    learning_rate  | searched | 1e-05 … 0.001 (log)  narrowed   | 1e-05 … 0.03 (log)
    lr_warmup_steps| locked   | 0                              | 0 … 20 step 5
    batch_size     | fixed    | 16                             | 16

:func:`preset_space_rows` does this for a preset and form values before a session exists
(the Setup tab); the Results tab passes the open session's ``space`` and trainer. Bounds
come from the one bounds parser (``bracket.app.forms.parse_bounds``), so the table shows
exactly what ``--bound``/``--batch-sizes`` or the LR fields would search.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, IntKnob, SearchSpace

COLUMNS = ("knob", "searched", "range / choices", "trainer's range", "only when")


def _number(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def describe(knob: Any) -> str:
    """``1e-05 … 0.03 (log)``, ``0 … 5 step 5``, ``AdamW, Adam`` or the fixed value."""
    if isinstance(knob, FloatKnob):
        return f"{_number(knob.low)} … {_number(knob.high)}" + (" (log)" if knob.log else "")
    if isinstance(knob, IntKnob):
        step = f" step {knob.step}" if knob.step != 1 else ""
        return f"{knob.low} … {knob.high}{step}" + (" (log)" if knob.log else "")
    if isinstance(knob, CategoricalKnob):
        return ", ".join(_number(c) for c in knob.choices)
    if isinstance(knob, FixedKnob):
        return _number(knob.value)
    return str(knob)


def _one_value(knob: Any) -> Any:
    """The one value a knob can take (a fixed knob, a range MIN:MIN, one choice), else None."""
    if isinstance(knob, FixedKnob):
        return knob.value
    if isinstance(knob, (FloatKnob, IntKnob)) and knob.low == knob.high:
        return knob.low
    if isinstance(knob, CategoricalKnob) and len(knob.choices) == 1:
        return knob.choices[0]
    return None


def space_rows(space: SearchSpace, base: SearchSpace | None = None) -> list[dict[str, str]]:
    """One row per knob of ``space`` (in order): searched, fixed (by the trainer) or locked (a
    bound of one value, as Setup's lock cell writes it), its range or choices, ``base``'s (the
    trainer's unnarrowed) range beside it, and its condition."""
    rows = []
    for name, knob in space.items():
        own = describe(knob)
        original = describe(base[name]) if base is not None and name in base else own
        when = "; ".join(f"{parent} = {' or '.join(map(str, allowed))}" for parent, allowed in knob.when.items())
        status = "fixed" if isinstance(knob, FixedKnob) else "searched"
        if original != own and _one_value(knob) is not None:  # a bound of one value: the knob was locked
            status, own = "locked", _number(_one_value(knob))
        rows.append({"knob": name, "searched": status,
                     "range / choices": own + (" (narrowed)" if status == "searched" and original != own else ""),
                     "trainer's range": original, "only when": when})
    return rows


def range_of(space: SearchSpace, name: str) -> str:
    """The range of one knob as the table writes it ("" when the space has no such knob)."""
    return describe(space[name]) if name in space else ""


def preset_space_rows(preset_id: str, fields: Mapping[str, str] | None = None, bounds: Mapping[str, Any] | None = None,
                      *, steps: int | None = None, warmup_share: float | None = None
                      ) -> tuple[list[dict[str, str]], SearchSpace | None]:
    """(rows, narrowed space) of ``preset_id`` with the form's ``fields`` and ``bounds``;
    raises ``BracketError``/``ValueError`` when the trainer cannot be built or a bound does
    not fit (the message says what to fix)."""
    from bracket.fields import merge_with_defaults
    from bracket.registry import get_preset

    preset = get_preset(preset_id)
    trainer = preset.trainer_factory(merge_with_defaults(preset.fields, dict(fields or {})))
    space = trainer.session_space(dict(bounds or {}), steps=steps, warmup_share=warmup_share)
    return space_rows(space, trainer.declare_search_space()), space
