"""The Setup tab's search-space table as the editor of a search's bounds.

One row per knob of the preset; a person narrows or locks a knob by editing its cells:

    knob           | status   | min    | max   | choices          | lock  | trainer's range     | only when
    optimizer_type | searched |        |       | AdamW, Adam, SGD |       | AdamW, Adam, SGD    |
    learning_rate  | narrowed | 1e-05  | 0.001 |                  |       | 1e-05 … 0.03 (log)  |
    lr_scheduler   | locked   |        |       |                  | cosine| constant, cosine    |
    batch_size     | fixed    |        |       |                  | 16    | 16                  |

* **min / max** narrow a numeric knob (a blank side is the trainer's);
* **choices** keeps some of a categorical knob's choices, or turns a fixed number into
  searched choices (``1,2,4`` batch sizes);
* **lock** fixes a knob at one value (clear it to search the knob again); a fixed knob's
  lock cell shows its value.

:func:`edited_bounds` turns the rows back into bounds through the one bounds parser
(``bracket.app.forms.parse_bounds``, as the CLI's ``--lr-min``/``--lr-max``,
``--batch-sizes`` and ``--bound``): the learning rate's cells are the LR min/max,
the batch knob's choices or lock are the batch sizes, any other edited knob becomes a
``--bound KNOB=…`` value — so a bad cell gets the CLI's message, word for word, and every
bad cell is named (:class:`TableError`: one sentence each), not only the first. A cell
that says what the form would search anyway (the trainer's range, capped warm-up
included) is no bound. :func:`editor_rows` is the other way: the cells of a narrowed space.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from bracket.app.forms import parse_bounds
from bracket.app.space_table import describe
from bracket.errors import BracketError
from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, IntKnob, SearchSpace
from bracket.session import SettingsError

EDIT_COLUMNS = ("knob", "status", "min", "max", "choices", "lock", "trainer's range", "only when")
#: the columns a person types into (indices of EDIT_COLUMNS); the others are read-only
EDITABLE = (2, 3, 4, 5)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "" if value is None else str(value)


def _text(value: Any) -> str:
    """A cell as text ('' for blank, NaN or None: pandas gives NaN for an emptied cell)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def _choices(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _same_number(text: str, number: float) -> bool:
    try:
        return math.isclose(float(text), float(number), rel_tol=1e-6, abs_tol=1e-12)
    except ValueError:
        return False


def editor_rows(space: SearchSpace, reference: SearchSpace, base: SearchSpace | None = None) -> list[dict[str, str]]:
    """The table's rows for ``space`` (narrowed by bounds), against ``reference`` (the same
    form's space without bounds) and ``base`` (the trainer's own ranges, for the last columns)."""
    base = base if base is not None else reference
    rows = []
    for name, knob in space.items():
        ref = reference[name] if name in reference else knob
        row = {"knob": name, "status": "searched", "min": "", "max": "", "choices": "", "lock": "",
               "trainer's range": describe(base[name]) if name in base else describe(ref),
               "only when": "; ".join(f"{p} = {' or '.join(map(str, a))}" for p, a in knob.when.items())}
        if isinstance(knob, FixedKnob):
            row["lock"] = _cell(knob.value)
            row["status"] = ("fixed" if isinstance(ref, FixedKnob) and ref.value == knob.value
                             else "locked")
        elif isinstance(knob, (FloatKnob, IntKnob)):
            if knob.low == knob.high and not (isinstance(ref, (FloatKnob, IntKnob)) and ref.low == ref.high):
                row["status"], row["lock"] = "locked", _cell(knob.low)
            else:
                row["min"], row["max"] = _cell(knob.low), _cell(knob.high)
                narrowed = isinstance(ref, (FloatKnob, IntKnob)) and (knob.low, knob.high) != (ref.low, ref.high)
                row["status"] = "narrowed" if narrowed else "one value" if knob.low == knob.high else "searched"
        elif isinstance(knob, CategoricalKnob):
            ref_choices = tuple(ref.choices) if isinstance(ref, CategoricalKnob) else ()
            if len(knob.choices) == 1 and len(ref_choices) != 1:
                row["status"], row["lock"] = "locked", _cell(knob.choices[0])
            else:
                row["choices"] = ", ".join(_cell(c) for c in knob.choices)
                row["status"] = ("narrowed" if ref_choices and tuple(knob.choices) != ref_choices
                                 else "searched")
        rows.append(row)
    return rows


def _row_bound(name: str, row: Mapping[str, Any], ref: Any) -> tuple[str, str] | None:
    """(``min:max`` | ``choices`` | ``lock``, the ``--bound`` value) of one edited row; None when
    its cells say what the form searches anyway."""
    low, high, choices, lock = (_text(row.get(c)) for c in ("min", "max", "choices", "lock"))
    if isinstance(ref, FixedKnob):
        if low or high:
            raise SettingsError(f"{name} is fixed: type one value in its lock cell, or choices such as 1,2,4 "
                                "in its choices cell, not a min/max.")
        same = lock == "" or lock == _cell(ref.value) or (
            isinstance(ref.value, (int, float)) and not isinstance(ref.value, bool) and _same_number(lock, ref.value))
        if choices and same:
            return "choices", ",".join(_choices(choices))
        return None if same else ("lock", lock)
    if isinstance(ref, (FloatKnob, IntKnob)):
        if choices:
            raise SettingsError(f"{name} is a range: narrow it with its min and max cells (or lock one value), "
                                "not choices.")
        if lock:
            return "lock", f"{lock}:{lock}"
        if (not low or _same_number(low, ref.low)) and (not high or _same_number(high, ref.high)):
            return None
        return "range", f"{low or _cell(ref.low)}:{high or _cell(ref.high)}"
    if low or high:
        raise SettingsError(f"{name} has choices: keep some in its choices cell (or lock one), not a min/max.")
    if lock:
        return "lock", lock
    kept = _choices(choices)
    if not kept or kept == [_cell(c) for c in ref.choices]:
        return None
    return "choices", ",".join(kept)


class TableError(SettingsError):
    """Bad cells of the table: one sentence per bad cell in :attr:`problems` (each the CLI's
    words for the same value); the message joins them, as the CLI's one ``error:`` line does."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__(" ".join(self.problems))


def _bounds_and_problems(rows: Sequence[Mapping[str, Any]], reference: SearchSpace, batch_knob: str
                         ) -> tuple[dict[str, Any], list[str]]:
    """(the bounds of the good rows, one sentence per bad row): each row goes through the
    parser alone first, so a bad cell never hides the next one."""
    lr_min = lr_max = None
    batch_sizes = ""
    knobs: dict[str, str] = {}
    problems: list[str] = []
    for row in rows:
        name = _text(row.get("knob"))
        if not name:
            continue
        try:
            if name not in reference:
                raise SettingsError(f"Bound for {name!r}: this trainer has no such knob.")
            found = _row_bound(name, row, reference[name])
            if found is None:
                continue
            how, value = found
            if name == "learning_rate" and isinstance(reference[name], FloatKnob):
                low, _, high = value.partition(":")  # the LR cells are --lr-min / --lr-max
                parse_bounds(low, high)
                lr_min, lr_max = low, high
            elif name == batch_knob and how != "range":
                parse_bounds(batch_sizes=value)
                batch_sizes = value  # --batch-sizes
            else:
                parse_bounds(knobs={name: value})
                knobs[name] = value  # --bound KNOB=value
        except SettingsError as error:
            problems.append(str(error))
    return parse_bounds(lr_min, lr_max, batch_sizes, knobs), problems


def edited_bounds(rows: Sequence[Mapping[str, Any]], reference: SearchSpace, batch_knob: str = "batch_size"
                  ) -> dict[str, Any]:
    """The bounds the table's ``rows`` ask for (``parse_bounds``' result; {} when nothing is
    edited), ``reference`` being the form's space without bounds. Raises :class:`TableError`
    naming every bad cell, each with the CLI's message."""
    bounds, problems = _bounds_and_problems(rows, reference, batch_knob)
    if problems:
        raise TableError(problems)
    return bounds


def _trainer(preset_id: str, fields: Mapping[str, str] | None) -> Any:
    """The preset's trainer with the form's fields (its default fields when those do not build
    one yet: the space is the same, and the start refuses the fields with their own message)."""
    from bracket.fields import merge_with_defaults
    from bracket.registry import get_preset

    preset = get_preset(preset_id)
    try:
        return preset.trainer_factory(merge_with_defaults(preset.fields, dict(fields or {})))
    except (BracketError, ValueError, TypeError):
        return preset.trainer_factory(merge_with_defaults(preset.fields, {}))


def preset_editor_rows(preset_id: str, fields: Mapping[str, str] | None, bounds: Mapping[str, Any] | None, *,
                       steps: int | None = None, warmup_share: float | None = None
                       ) -> tuple[list[dict[str, str]], SearchSpace]:
    """(rows, narrowed space) of the table for a preset, the form's fields, run length and
    ``bounds``; raises ``BracketError`` when a bound does not fit (the message says why)."""
    trainer = _trainer(preset_id, fields)
    reference = trainer.session_space({}, steps=steps, warmup_share=warmup_share)
    space = trainer.session_space(dict(bounds or {}), steps=steps, warmup_share=warmup_share)
    return editor_rows(space, reference, trainer.declare_search_space()), space


def table_bounds(preset_id: str, fields: Mapping[str, str] | None, rows: Sequence[Mapping[str, Any]] | None, *,
                 steps: int | None = None, warmup_share: float | None = None) -> dict[str, Any]:
    """The bounds the edited table ``rows`` ask for, checked against the preset's space; {}
    without rows. Raises :class:`TableError` naming every bad cell — a value the parser
    refuses or a bound that does not fit the trainer — with the CLI's message for each."""
    if not rows:
        return {}
    trainer = _trainer(preset_id, fields)
    reference = trainer.session_space({}, steps=steps, warmup_share=warmup_share)
    bounds, problems = _bounds_and_problems(rows, reference, trainer.batch_knob)
    for name, bound in bounds.items():  # each alone, so every bound that does not fit is named
        try:
            trainer.session_space({name: bound}, steps=steps, warmup_share=warmup_share)
        except BracketError as error:
            problems.append(str(error))
    if problems:
        raise TableError(problems)
    trainer.session_space(bounds, steps=steps, warmup_share=warmup_share)  # raises when they do not fit together
    return bounds
