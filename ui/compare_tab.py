"""Compare tab: samples of 2–8 runs side by side, ratings, and blind pairwise choices.

The grid (rows = prompts, columns = runs, every cell the same prompt and seed) comes from
``SessionManager.compare_grid`` as paths — thumbnails written once, full-size PNGs for the
lightbox — and is drawn as HTML (``ui.render.grid_html``); clicking a cell opens the
lightbox of ``ui.assets`` (←/→ runs, ↑/↓ prompts). A step slider moves through every saved
step. Ratings (1–10, per run or per prompt) are saved the moment they are clicked. The
blind pairwise panel shows two runs without names in random order (pairs from the human
judge's ``next_pairs``); 1/2/3 or ←/→/↓ choose.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import gradio as gr

from bracket.errors import BracketError
from bracket.session.manager import SessionManager
from ui.common import PRIVATE, user_errors
from ui.render import grid_html

MIN_RUNS, MAX_RUNS = 2, 8
NO_PAIR = "<p>No pair to compare yet: pairs come from finished runs (at least two, and not the pair just judged).</p>"
WHOLE_RUN = -1


def run_choices(manager: SessionManager) -> list[tuple[str, int]]:
    """(label, run id) of every finished run; labels from the standings (stage, score, raw figures)."""
    labels = manager.run_labels()
    return [(labels.get(run["id"], f"#{run['id']} {run['config_name']}"), run["id"])
            for run in manager.scorable_runs()]


def refresh_runs(manager: SessionManager) -> Any:
    return gr.Dropdown(choices=run_choices(manager))


def _slider(steps: list[int], step: int | None) -> Any:
    if len(steps) < 2:
        value = steps[0] if steps else 0
        return gr.Slider(minimum=value, maximum=value + 1, value=value, step=1, interactive=False,
                         label="Step (only one saved step)" if steps else "Step (no samples)")
    gaps = [b - a for a, b in zip(steps, steps[1:])]
    return gr.Slider(minimum=steps[0], maximum=steps[-1], value=step, step=math.gcd(*gaps) or 1, interactive=True,
                     label=f"Step (samples at {', '.join(map(str, steps))})")


def _scope_choices(prompts: list[str]) -> list[tuple[str, int]]:
    return [("the whole run", WHOLE_RUN)] + [(f"prompt {i}: {p[:40]}", i) for i, p in enumerate(prompts)]


@user_errors
def show_grid(manager: SessionManager, run_ids: list[int] | None, step: float | None = None, *,
              least: int = MIN_RUNS) -> tuple[str, Any, list[int], Any]:
    """(grid HTML, step slider, the runs shown, rating-scope choices)."""
    ids = [int(i) for i in run_ids or []]
    if not least <= len(ids) <= MAX_RUNS:
        raise BracketError(f"Pick {MIN_RUNS} to {MAX_RUNS} runs to compare (you picked {len(ids)}), "
                           "or press 'Next unrated'.")
    grid = manager.compare_grid(ids, None if step is None else int(step))
    scope = gr.Dropdown(choices=_scope_choices(grid.prompts), value=WHOLE_RUN)
    return grid_html(grid), _slider(grid.steps, grid.step), ids, scope


@user_errors
def change_step(manager: SessionManager, shown: list[int] | None, step: float) -> Any:
    if not shown:
        return gr.skip()
    return grid_html(manager.compare_grid(list(shown), int(step)))


@user_errors
def next_unrated(manager: SessionManager, k: float) -> tuple[Any, str, Any, list[int], Any]:
    ids = manager.next_unrated(int(k or 4))  # the winner's runs first; a lone unrated run is shown alone
    if not ids:
        raise BracketError("No finished run with samples so far; wait for a trial to finish.")
    html, slider, shown, scope = show_grid(manager, ids, least=1)
    return gr.Dropdown(choices=run_choices(manager), value=ids, multiselect=True), html, slider, shown, scope


@user_errors
def rate(manager: SessionManager, run_id: int, value: Any, scope: Any, step: Any = None) -> str:
    """Save a rating of the samples shown, at the step the slider shows (the best-step score uses it)."""
    if value in (None, ""):
        return gr.skip()
    prompt_index = None if scope in (None, WHOLE_RUN) else int(scope)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise gr.Error(f"A rating must be a number from 1 to 10, got {value!r}.") from None
    shown_step = None if step in (None, "") else int(float(step))
    effect = manager.rate(run_id, number, prompt_index, shown_step)  # "Run #12 rated 7: its config moved ..."
    target = "" if prompt_index is None else f" (prompt {prompt_index})"
    at = "" if shown_step is None else f" at step {shown_step}"
    return f"Saved{target}{at}. {effect}"


def next_pair(manager: SessionManager) -> tuple[Any, str, Any, Any, Any]:
    """A new blind pair (or none), its HTML, and the three choice buttons."""
    pairs = manager.next_pairs(1) if manager.session else []
    if not pairs:
        return None, NO_PAIR, *([gr.Button(interactive=False)] * 3)
    left, right = pairs[0]
    grid = manager.compare_grid([left, right], blind=True)
    html = grid_html(grid, blind=True, titles=["Left (1 / ←)", "Right (2 / →)"], element_id="bk-pair")
    return [left, right], html, *([gr.Button(interactive=True)] * 3)


@user_errors
def choose(manager: SessionManager, pair: list[int] | None, winner: str) -> tuple[Any, ...]:
    if not pair:
        raise BracketError("No pair is shown; press 'Next pair' first.")
    manager.compare(pair[0], pair[1], winner)
    said = {"left": "left is better", "right": "right is better", "tie": "a tie"}[winner]
    return (f"Saved: {said}.", *next_pair(manager))


def build(manager: SessionManager) -> dict[str, Any]:
    shown = gr.State([])
    pair = gr.State(None)
    with gr.Row():
        runs_dd = gr.Dropdown(choices=[], multiselect=True, label="Runs to compare (2–8)", scale=4,
                              elem_id="bk-compare-runs")
        with gr.Column(scale=1, min_width=180):
            count = gr.Slider(MIN_RUNS, MAX_RUNS, value=4, step=1, label="How many")
            unrated_btn = gr.Button("Next unrated", elem_id="bk-next-unrated")
        with gr.Column(scale=1, min_width=140):
            show_btn = gr.Button("Show grid", variant="primary", elem_id="bk-show-grid")
            refresh_btn = gr.Button("Refresh runs", size="sm")
    step = gr.Slider(0, 1, value=0, step=1, label="Step", interactive=False, elem_id="bk-step")
    grid = gr.HTML(grid_html(_empty_grid()), elem_id="bk-grid")
    gr.Markdown("### Rate (saved at once; 10 = best)")
    scope = gr.Dropdown(choices=[("the whole run", WHOLE_RUN)], value=WHOLE_RUN, label="A rating applies to")
    rated_md = gr.Markdown(elem_id="bk-rated")

    @gr.render(inputs=[shown])
    def rating_rows(run_ids: list[int]) -> None:
        labels = dict((value, label) for label, value in run_choices(manager)) if manager.session else {}
        with gr.Row():
            for run_id in run_ids or []:
                radio = gr.Radio([str(v) for v in range(1, 11)], label=f"Rate {labels.get(run_id, f'#{run_id}')}",
                                 key=f"rate-{run_id}", elem_id=f"bk-rate-{run_id}", min_width=220)
                radio.input(functools.partial(rate, manager, run_id), [radio, scope, step], rated_md,
                            key=f"rate-input-{run_id}", **PRIVATE)

    gr.Markdown("### Blind pairwise (configs hidden, order random)")
    pair_btn = gr.Button("Next pair", elem_id="bk-next-pair")
    pair_html = gr.HTML(NO_PAIR, elem_id="bk-pair-box")
    with gr.Row():
        left_btn = gr.Button("Left better (1 / ←)", elem_id="bk-pair-left", interactive=False)
        right_btn = gr.Button("Right better (2 / →)", elem_id="bk-pair-right", interactive=False)
        tie_btn = gr.Button("Tie (3 / ↓)", elem_id="bk-pair-tie", interactive=False)
    pair_md = gr.Markdown(elem_id="bk-pair-status")

    grid_outputs = [grid, step, shown, scope]
    show_btn.click(functools.partial(show_grid, manager), [runs_dd], grid_outputs, **PRIVATE)
    unrated_btn.click(functools.partial(next_unrated, manager), [count], [runs_dd, *grid_outputs], **PRIVATE)
    refresh_btn.click(functools.partial(refresh_runs, manager), None, runs_dd, **PRIVATE)
    step.release(functools.partial(change_step, manager), [shown, step], grid, **PRIVATE)
    pair_outputs = [pair, pair_html, left_btn, right_btn, tie_btn]
    pair_btn.click(functools.partial(next_pair, manager), None, pair_outputs, **PRIVATE)
    for button, winner in ((left_btn, "left"), (right_btn, "right"), (tie_btn, "tie")):
        button.click(functools.partial(choose, manager, winner=winner), [pair], [pair_md, *pair_outputs],
                     concurrency_id="scoring", **PRIVATE)
    return {"runs": runs_dd, "refresh": functools.partial(refresh_runs, manager)}


def _empty_grid() -> Any:
    from bracket.session.grid import GridData

    return GridData([], [], [], None, [])
