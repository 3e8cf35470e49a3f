"""The Setup tab's search-space table: what a search of the form as it stands would vary.

Every knob of the preset — searched or fixed, its range or choices, the trainer's own range
beside it — with the LR and batch-size boxes applied through the one bounds parser
(``bracket.app.forms.parse_bounds``, as ``--bound``/``--batch-sizes``) — and the "other
bounds" box, which narrows or locks any knob (``KNOB=MIN:MAX``, ``KNOB=A,B``, ``KNOB=V``) —
so "(narrowed)" shows what a box changed; a bound that does not fit says why. The LR boxes get the trainer's
range as their placeholder.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from bracket.app.forms import bound_assignments, parse_bounds
from bracket.errors import BracketError
from bracket.session.config import SearchSettings


def space_preview(preset_id: str, fields: dict[str, str] | None, lr_min: Any, lr_max: Any, batch_sizes: str,
                  steps: Any, other_bounds: str = "") -> tuple[Any, Any, Any, str]:
    """(search-space table, LR min box, LR max box, message) for the form as it stands: what the
    search will vary, with the LR/batch-size boxes applied by the one bounds parser."""
    import pandas as pd

    from bracket.search.space import FloatKnob
    from bracket.app.space_table import COLUMNS, preset_space_rows

    if not preset_id:
        return None, gr.skip(), gr.skip(), ""
    try:
        whole = int(steps) if steps not in (None, "") else None
    except (TypeError, ValueError):
        whole = None
    try:
        bounds = parse_bounds(lr_min, lr_max, batch_sizes or "", bound_assignments(other_bounds))
        rows, space = preset_space_rows(preset_id, fields, bounds, steps=whole,
                                        warmup_share=SearchSettings().warmup_share)
    except (BracketError, ValueError, TypeError) as error:
        return gr.skip(), gr.skip(), gr.skip(), f"⚠ {error}"
    try:
        _, whole_space = preset_space_rows(preset_id, fields)
    except (BracketError, ValueError, TypeError):
        whole_space = space
    knob = whole_space.get("learning_rate")  # the trainer's own range, for the LR boxes' placeholders
    if isinstance(knob, FloatKnob):
        low, high = (gr.Textbox(placeholder=f"trainer's range: {knob.low:g}"),
                     gr.Textbox(placeholder=f"trainer's range: {knob.high:g}"))
    else:
        low = high = gr.skip()
    searched = sum(1 for r in rows if r["searched"] == "searched")
    return (pd.DataFrame(rows, columns=list(COLUMNS)), low, high,
            f"{searched} knobs searched, {len(rows) - searched} fixed.")
