"""The Setup tab's search-space table: what a search of the form would vary, edited in its cells.

Every knob of the preset — searched or fixed, its range or choices, the trainer's own range
beside it — in a ``gr.Dataframe`` whose min, max, choices and lock cells a person edits
(``bracket.app.space_editor``): min/max narrow a range, choices keep some choices (or make a
fixed number searched, e.g. batch sizes ``1,2,4``), lock fixes one value. An edit goes
through the one bounds parser of the CLI's ``--lr-min``/``--lr-max``/``--batch-sizes``/
``--bound`` and the table is redrawn from the result; a bad cell gives one ``⚠`` line above
the table with the CLI's message (one line per bad cell when there are several) and changes
nothing: the cells keep what was typed, to be fixed (Start refuses the same table, naming
every bad cell, and starts nothing).
The bounds that the table stands for are kept in a ``gr.State``, so a new run length (the
warm-up cap) redraws the table without losing them.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from bracket.app.space_editor import EDIT_COLUMNS, preset_editor_rows, table_bounds
from bracket.errors import BracketError
from bracket.session.search_settings import SearchSettings

#: the table's read-only columns (knob, status, trainer's range, only when)
STATIC_COLUMNS = [i for i, _ in enumerate(EDIT_COLUMNS) if EDIT_COLUMNS[i] not in ("min", "max", "choices", "lock")]


def _steps(steps: Any) -> int | None:
    try:
        return int(steps) if steps not in (None, "") else None
    except (TypeError, ValueError):
        return None


def table_records(table: Any) -> list[dict[str, Any]]:
    """The table's rows as dicts (a pandas frame from Gradio, a list of dicts in tests, or None)."""
    if table is None:
        return []
    if hasattr(table, "to_dict"):
        return table.to_dict("records")
    return [dict(row) for row in table]


def _frame(rows: list[dict[str, str]]) -> Any:
    import pandas as pd

    return pd.DataFrame(rows, columns=list(EDIT_COLUMNS))


def _summary(rows: list[dict[str, str]]) -> str:
    searched = sum(1 for r in rows if r["status"] in ("searched", "narrowed"))
    return (f"{searched} knobs searched, {len(rows) - searched} fixed or locked. Edit min/max to narrow, "
            "choices to keep some, lock to fix one value (clear it to search the knob again).")


def space_preview(preset_id: str, fields: dict[str, str] | None, steps: Any,
                  bounds: dict[str, Any] | None = None) -> tuple[Any, str]:
    """(table, message) for the form as it stands, with ``bounds`` (the table's last good edit)."""
    if not preset_id:
        return None, ""
    try:
        rows, _ = preset_editor_rows(preset_id, fields, bounds, steps=_steps(steps),
                                     warmup_share=SearchSettings().warmup_share)
    except (BracketError, ValueError, TypeError) as error:
        return gr.skip(), f"⚠ {error}"
    return _frame(rows), _summary(rows)


def space_edit(preset_id: str, fields: dict[str, str] | None, steps: Any, table: Any) -> tuple[Any, Any, str]:
    """(table, bounds, message) after a person edited a cell: the table redrawn from the bounds
    it asks for, or — for a bad cell — the table and bounds as they were and one ``⚠`` line."""
    if not preset_id:
        return gr.skip(), gr.skip(), ""
    share = SearchSettings().warmup_share
    try:
        bounds = table_bounds(preset_id, fields, table_records(table), steps=_steps(steps), warmup_share=share)
        rows, _ = preset_editor_rows(preset_id, fields, bounds, steps=_steps(steps), warmup_share=share)
    except (BracketError, ValueError, TypeError) as error:
        return gr.skip(), gr.skip(), bad_cells_text(error)
    return _frame(rows), bounds, _summary(rows)


def bad_cells_text(error: Exception) -> str:
    """One ``⚠`` line per bad cell (``TableError.problems``), each with the CLI's words."""
    problems = getattr(error, "problems", None) or [str(error)]
    if len(problems) == 1:
        return f"⚠ {problems[0]} — fix that cell; nothing else changed."
    return "\n\n".join([f"⚠ {problem}" for problem in problems]
                       + [f"Fix those {len(problems)} cells; nothing else changed."])


def build_table() -> tuple[Any, Any, Any]:
    """(message, table, bounds state) of the Setup tab's space section (call inside a layout)."""
    message = gr.Markdown(elem_id="bk-space-msg")
    # no scrolling inside the table (issue 43): every knob's row shows (Gradio's 500 px cap cut the
    # larger presets' tables), and the columns wrap to the page's width (checked at 1280 px)
    table = gr.Dataframe(_frame([]), interactive=True, wrap=True, elem_id="bk-space-setup", datatype="str",
                         static_columns=STATIC_COLUMNS, max_height=4000,
                         column_widths=["15%", "8%", "8%", "8%", "20%", "7%", "16%", "18%"],
                         label="Knobs of the preset: edit min / max, choices or lock (Enter keeps a cell)")
    return message, table, gr.State({})
