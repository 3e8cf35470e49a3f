"""Compare's side of a successive-halving search: the rung steps on the step slider, and the
"Samples at a rung" list (``bracket.app.rung_grid``: every config that reached a rung, side by
side at the rung's step, the best there first; hidden when the search has no rungs)."""

from __future__ import annotations

import math
from typing import Any

import gradio as gr

from bracket.app.rung_grid import RungPick, rung_picks

RUNG_LABEL = "Samples at a rung: every config that reached it, at its step, the best there first"


def slider_label(steps: list[int], rungs: list[tuple[int, str]] = ()) -> str:
    """``Step (samples at 10, 20, 30; rungs: 1/9 at 10, 1/3 at 30)``: the saved steps, and of a
    halving search the rung steps among them (the samples every run of a rung has)."""
    marks = [f"{label} at {step}" for step, label in rungs if step in set(steps)]
    return f"Step (samples at {', '.join(map(str, steps))}" + (f"; rungs: {', '.join(marks)})" if marks else ")")


def step_slider(steps: list[int], step: int | None, rungs: list[tuple[int, str]] = ()) -> Any:
    """The step slider over the saved steps ``steps`` at ``step``, the rung steps named in its label."""
    if len(steps) < 2:
        value = steps[0] if steps else 0
        return gr.Slider(minimum=value, maximum=value + 1, value=value, step=1, interactive=False,
                         label="Step (only one saved step)" if steps else "Step (no samples)")
    gaps = [b - a for a, b in zip(steps, steps[1:])]
    return gr.Slider(minimum=steps[0], maximum=steps[-1], value=step, step=math.gcd(*gaps) or 1, interactive=True,
                     label=slider_label(steps, rungs))


def rung_choices(manager: Any) -> list[tuple[str, int]]:
    """(``1/9 at step 10: 7 configs``, rung index) of each rung a run reached; [] without halving."""
    return [(pick.label, pick.index) for pick in rung_picks(manager)] if manager.session else []


def rung_dropdown(choices: list[tuple[str, int]]) -> Any:
    """The "Samples at a rung" list: shown only when the search has a rung some run reached."""
    return gr.Dropdown(choices=choices, visible=bool(choices))  # the rung picked stays picked


def rung_note(pick: RungPick, shown: int) -> str:
    """What the grid of a rung shows: ``Step 10, the rung 1/9: the 7 configs that reached it, the
    best there first (its rung score; the best 8 of 11 runs shown)``."""
    runs = len(pick.run_ids)
    more = f"; the best {shown} of {runs} runs shown" if shown < runs else ""
    return (f"Step {pick.step}, the rung {pick.share}: the {pick.configs} config{'' if pick.configs == 1 else 's'} "
            f"that reached it, the best there first (by its score at the rung{more}).")
