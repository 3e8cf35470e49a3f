"""Compare tab: samples of 2–8 runs side by side, ratings, and blind pairwise choices.

The grid (rows = prompts, columns = runs, every cell the same prompt and seed) comes from
``SessionManager.compare.grid`` as paths — thumbnails written once, full-size PNGs for the
lightbox — and is drawn as HTML (``ui.render.grid_html``); clicking a cell opens the
lightbox of ``ui.assets`` (←/→ runs, ↑/↓ prompts, PageUp/PageDown the saved steps of that
run and prompt). A step slider moves through every saved step. Ratings (1–10, of the whole run
or of the prompt picked in "A rating applies to"; the widgets then show that prompt's ratings)
are saved the moment they are clicked. The runs
list (and the picked runs' chips, with their scores and rated marks) is polled every 2 s
(``poll_runs``: a fingerprint compare, nothing redrawn when nothing changed); "Sort columns
by" offers the knobs whose values differ between the runs and every judge that scored a run
(``ui.compare_order``). Each image carries its judge scores: its hover text, and under it
while "Show judge scores" is ticked. The
blind pairwise panel shows two runs without names in random order (the pair whose order is
least certain among the contenders, ``bracket.judge.informative``). "Next unrated" shows the
unrated runs whose rating could change the pick or TPE's good set most, and says why in one
line. Keys vote only in *pairwise mode* — its checkbox ticked and the focus inside the
pairwise panel — so arrow keys elsewhere scroll and never record a blind vote; "Undo last
vote" takes the newest choice back.

Rating widgets belong to a run: each shows that run's stored whole-run rating (or none), its
label says rated or unrated, and both are redrawn after every rating; so are the grid's
column headers (their "rated"/"unrated" mark only, rewritten in place: no image is read).

Below the grid (``ui.compare_views``): **Steps × prompts** shows each picked run's samples
at every saved step (one run at a time; PageUp/PageDown switch runs), and **A/B flicker**
(its A and B start as the first two picked runs)
alternates two runs' samples of each prompt in one place at the slider's step.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import gradio as gr

from bracket.app.manager import SessionManager
from bracket.app.rung_grid import ranked_at_rung
from bracket.app.rungs import compare_rung_steps, run_marks
from bracket.errors import BracketError
from ui.common import PRIVATE, QUIET, inline_errors
from ui.compare_order import differing, sort_choices, sort_runs
from ui.compare_rungs import RUNG_LABEL, rung_choices, rung_dropdown, rung_note, step_slider
from ui.compare_views import NO_FLICKER, NO_MATRIX, flicker_html, progression_html, with_steps
from ui.render import fingerprint, grid_html

MIN_RUNS, MAX_RUNS = 2, 8
NO_PAIR = "<p>No pair to compare yet: pairs come from finished runs (at least two, and not the pair just judged).</p>"
#: before the first "Next pair": what the button gives (saying "no pair yet" there read as if none could come)
PAIR_START = "<p>Press <b>Next pair</b>: two finished runs side by side, their configs hidden, their order random.</p>"
WHOLE_RUN = -1
#: the page script of "Show judge scores": the grid's class shows or hides each image's scores
SHOW_SCORES = "(on) => { document.getElementById('bk-grid')?.classList.toggle('bk-scores-on', !!on); return on; }"


def run_choices(manager: SessionManager) -> list[tuple[str, int]]:
    """(label, run id) of every finished run; labels from the standings (stage, score, raw figures)."""
    labels = manager.compare.run_labels()
    return [(labels.get(run["id"], f"#{run['id']} {run['config_name']}"), run["id"])
            for run in manager.compare.scorable_runs()]


def refresh_runs(manager: SessionManager) -> tuple[Any, Any, Any, Any, Any]:
    """The runs list, the sort keys, the A/B flicker's two run lists and the rungs to show (halving)."""
    choices = run_choices(manager)
    return (gr.Dropdown(choices=choices), gr.Dropdown(choices=[""] + sort_choices(manager)),
            gr.Dropdown(choices=choices), gr.Dropdown(choices=choices), rung_dropdown(rung_choices(manager)))


def poll_runs(manager: SessionManager, sent: str | None) -> tuple[Any, ...]:
    """The runs list, sort keys, A/B lists and rungs, and what this tab has (a fingerprint): polled,
    so new runs, scores, ratings and rungs show in the list and in the picked runs' chips without a
    click; unchanged, all skipped (nothing redrawn, an open list stays open)."""
    mark = fingerprint([run_choices(manager), sort_choices(manager), rung_choices(manager)]
                       if manager.session else None)
    if sent == mark:
        return gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip()
    return (*refresh_runs(manager), mark)


def flicker_defaults(manager: SessionManager, picked: list[int] | None) -> tuple[Any, Any]:
    """The A/B flicker's two run lists set to the first two picked runs (unchanged below two)."""
    ids = [int(i) for i in (picked or [])]
    if len(ids) < 2 or manager.session is None:
        return gr.skip(), gr.skip()
    choices = run_choices(manager)
    return gr.Dropdown(choices=choices, value=ids[0]), gr.Dropdown(choices=choices, value=ids[1])


@inline_errors(2, at=1)
def show_progression(manager: SessionManager, picked: list[int] | None, shown: list[int] | None) -> tuple[str, str]:
    """(steps × prompts stack of the picked runs — else of the shown ones, message)."""
    ids = [int(i) for i in (picked or shown or [])][:MAX_RUNS]
    if not ids:
        raise BracketError("Pick runs in the list (or show a grid) first, then press 'Steps × prompts'.")
    labels = dict((value, label) for label, value in run_choices(manager))
    grids = manager.compare.progressions(ids)
    return progression_html(grids, [labels.get(i, f"#{i}") for i in ids]), ""


@inline_errors(2, at=1)
def show_flicker(manager: SessionManager, a: Any, b: Any, step: Any, shown: list[int] | None = None
                 ) -> tuple[str, str]:
    """(A/B flicker of runs ``a`` and ``b`` at the step slider's step while a grid is shown,
    else at the last step both reached; message)."""
    if a in (None, "") or b in (None, "") or int(a) == int(b):
        raise BracketError("Pick two different runs as A and B for the flicker.")
    ids = [int(a), int(b)]
    grid = manager.compare.grid(ids, None if not shown or step in (None, "") else int(float(step)))
    labels = dict((value, label.split(" · ")[0]) for label, value in run_choices(manager))
    return flicker_html(grid, (labels.get(ids[0], f"#{ids[0]}"), labels.get(ids[1], f"#{ids[1]}"))), ""


def _scope_choices(prompts: list[str]) -> list[tuple[str, int]]:
    return [("the whole run", WHOLE_RUN)] + [(f"prompt {i}: {p[:40]}", i) for i, p in enumerate(prompts)]


def run_ratings(manager: SessionManager, prompt_index: int | None = None) -> dict[int, float]:
    """Each run's latest whole-run rating (per-prompt ratings are not a run's rating), or with
    ``prompt_index`` its latest rating of that prompt."""
    if manager.session is None:
        return {}
    return {r["run_id"]: r["value"] for r in manager.compare.ratings() if r.get("prompt_index") == prompt_index}


def rating_mark(ratings: dict[int, float], run_id: int) -> str:
    value = ratings.get(run_id)
    return "unrated" if value is None else f"rated {value:g}"


def _grid(manager: SessionManager, ids: list[int], step: int | None) -> Any:
    grid = manager.compare.grid(ids, step)
    ratings = run_ratings(manager)  # a grid of rated runs says so in its headers
    keys = differing([c.params for c in grid.columns])  # only what differs between the columns

    def shown(value: Any) -> str:
        return f"{value:.3g}" if isinstance(value, float) else str(value)

    rungs = run_marks(manager)  # a halving search: where each run stands (stopped at 1/9 (paused at step 10))
    titles = [c.label + (f" · {rungs[i]}" if i in rungs else "") + f" · {rating_mark(ratings, i)}"
              + "".join(f" · {k}={shown(c.params[k])}" for k in keys if c.params.get(k) is not None)  # a knob that
              for c, i in zip(grid.columns, ids)]  # does not apply to a run (its condition unmet) is not its value
    by_id = {r["id"]: r for r in manager.compare.scorable_runs()}  # every step of each cell, for PageUp/PageDown
    return grid, with_steps(grid_html(grid, titles=titles), [by_id.get(i, {}) for i in ids], manager.runs_dir)


@inline_errors(5, at=4)
def show_grid(manager: SessionManager, run_ids: list[int] | None, step: float | None = None, *,
              least: int = MIN_RUNS, note: str = "") -> tuple[str, Any, list[int], Any, str]:
    """(grid HTML, step slider, the runs shown, rating-scope choices, message)."""
    ids = [int(i) for i in run_ids or []]
    if not least <= len(ids) <= MAX_RUNS:
        raise BracketError(f"Pick {MIN_RUNS} to {MAX_RUNS} runs to compare (you picked {len(ids)}), "
                           "or press 'Next unrated'.")
    grid, html = _grid(manager, ids, None if step is None else int(step))
    scope = gr.Dropdown(choices=_scope_choices(grid.prompts), value=WHOLE_RUN)
    return html, step_slider(grid.steps, grid.step, compare_rung_steps(manager, ids)), ids, scope, note


@inline_errors(6, at=5)
def show_rung(manager: SessionManager, index: Any) -> tuple[Any, str, Any, list[int], Any, str]:
    """(runs list, grid, slider, shown, scope, message) of the rung ``index``: the runs of every
    config that reached it at its step, the best there first (``bracket.app.rung_grid``)."""
    if index in (None, ""):
        return gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip(), ""
    pick = ranked_at_rung(manager, int(index))
    ids = list(pick.run_ids)[:MAX_RUNS]
    html, slider, shown, scope, note = show_grid(manager, ids, pick.step, least=1, note=rung_note(pick, len(ids)))
    return gr.Dropdown(choices=run_choices(manager), value=ids, multiselect=True), html, slider, shown, scope, note


@inline_errors(5, at=4)
def show_sorted(manager: SessionManager, run_ids: list[int] | None, key: str | None) -> tuple[Any, ...]:
    """Show grid, its columns sorted by hyperparameter ``key`` (none: in the order picked)."""
    return show_grid(manager, sort_runs(manager, [int(i) for i in run_ids or []], key))


@inline_errors(2, at=1)
def change_step(manager: SessionManager, shown: list[int] | None, step: float) -> tuple[Any, str]:
    if not shown:
        return gr.skip(), ""
    return _grid(manager, list(shown), int(step))[1], ""


#: a header's (and its cells' title's) rating mark: "#12 search-3 · seed 42 · unrated"
_MARK = re.compile(r"(#(\d+) [^<>\"]*?) · (?:unrated|rated [0-9.e+-]+)")


def relabel(manager: SessionManager, markup: str, shown: list[int] | None) -> Any:
    """``markup`` (the grid shown) with each shown run's rating mark as stored now: after a
    rating the headers say so at once, without building the grid again."""
    if not shown or not isinstance(markup, str) or manager.session is None:
        return gr.skip()
    ratings, ids = run_ratings(manager), {int(i) for i in shown}

    def mark(match: re.Match[str]) -> str:
        run_id = int(match.group(2))
        return match.group(0) if run_id not in ids else f"{match.group(1)} · {rating_mark(ratings, run_id)}"

    new = _MARK.sub(mark, markup)
    return gr.skip() if new == markup else new


@inline_errors(6, at=5)
def next_unrated(manager: SessionManager, k: float) -> tuple[Any, str, Any, list[int], Any, str]:
    ids, why = manager.compare.rate_next(int(k or 4))  # where a rating could change the answer most; a lone run alone
    if not ids:
        raise BracketError("No finished run with samples so far; wait for a trial to finish.")
    ratings = run_ratings(manager)
    note = (why if any(i not in ratings for i in ids)
            else "Every finished run is rated: these are the best rated runs again (their headers say so).")
    html, slider, shown, scope, note = show_grid(manager, ids, least=1, note=note)
    return gr.Dropdown(choices=run_choices(manager), value=ids, multiselect=True), html, slider, shown, scope, note


@inline_errors(1)
def rate(manager: SessionManager, run_id: int, value: Any, scope: Any, step: Any = None) -> str:
    """Save a rating of the samples shown, at the step the slider shows (the best-step score uses it)."""
    if value in (None, ""):
        return gr.skip()
    prompt_index = None if scope in (None, WHOLE_RUN) else int(scope)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise BracketError(f"A rating must be a number from 1 to 10, got {value!r}.") from None
    shown_step = None if step in (None, "") else int(float(step))
    effect = manager.compare.rate(run_id, number, prompt_index, shown_step)  # "Run #12 rated 7: its config moved ..."
    target = "" if prompt_index is None else f" (prompt {prompt_index})"
    at = "" if shown_step is None else f" at step {shown_step}"
    return f"Saved{target}{at}. {effect}"


def next_pair(manager: SessionManager) -> tuple[Any, str, Any, Any, Any]:
    """A new blind pair (or none), its HTML, and the three choice buttons."""
    pairs = manager.compare.next_pairs(1) if manager.session else []
    if not pairs:
        return None, NO_PAIR, *([gr.Button(interactive=False)] * 3)
    left, right = pairs[0]
    grid = manager.compare.grid([left, right], blind=True)
    html = grid_html(grid, blind=True, titles=["Left (1 / ←)", "Right (2 / →)"], element_id="bk-pair")
    return [left, right], html, *([gr.Button(interactive=True)] * 3)


@inline_errors(6)
def choose(manager: SessionManager, pair: list[int] | None, winner: str) -> tuple[Any, ...]:
    if not pair:
        raise BracketError("No pair is shown; press 'Next pair' first.")
    manager.compare.choose(pair[0], pair[1], winner)
    said = {"left": "left is better", "right": "right is better", "tie": "a tie"}[winner]
    return (f"Saved: {said}.", *next_pair(manager))


@inline_errors(6)
def undo_vote(manager: SessionManager) -> tuple[Any, ...]:
    """Take back the newest pairwise choice and show that pair again."""
    undone = manager.compare.undo_choice()
    if undone is None:
        raise BracketError("There is no pairwise vote to undo.")
    left, right = undone["left_run_id"], undone["right_run_id"]
    grid = manager.compare.grid([left, right], blind=True)
    html = grid_html(grid, blind=True, titles=["Left (1 / ←)", "Right (2 / →)"], element_id="bk-pair")
    return ("Undone: the last vote is taken back; vote on this pair again or press 'Next pair'.", [left, right],
            html, *([gr.Button(interactive=True)] * 3))


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
    with gr.Row():
        step = gr.Slider(0, 1, value=0, step=1, label="Step", interactive=False, elem_id="bk-step", scale=4)
        sort_dd = gr.Dropdown([""], value="", label="Sort columns by (a knob, or a judge: best first)",
                              elem_id="bk-sort", scale=1)
        scores_cb = gr.Checkbox(False, label="Show judge scores under each image", elem_id="bk-show-scores",
                                scale=1)
        rung_dd = gr.Dropdown(choices=[], label=RUNG_LABEL, visible=False, elem_id="bk-rung-pick", scale=2)
    compare_md = gr.Markdown(elem_id="bk-compare-msg")
    grid = gr.HTML(grid_html(_empty_grid()), elem_id="bk-grid")
    gr.Markdown("### Rate (saved at once; 10 = best)")
    # interactive: it is an input of the rating widgets' listeners only, which Gradio cannot see at build time
    scope = gr.Dropdown(choices=[("the whole run", WHOLE_RUN)], value=WHOLE_RUN, label="A rating applies to",
                        interactive=True, elem_id="bk-scope")
    rated_md = gr.Markdown(elem_id="bk-rated")

    @gr.render(inputs=[shown, scope], triggers=[shown.change, rated_md.change, scope.change])
    def rating_rows(run_ids: list[int], picked_scope: Any) -> None:
        # redrawn after every rating: each widget shows ITS run's stored rating of the scope picked
        # (the whole run or one prompt), never a neighbour's
        labels = dict((value, label) for label, value in run_choices(manager)) if manager.session else {}
        prompt = None if picked_scope in (None, "", WHOLE_RUN) else int(picked_scope)
        ratings = run_ratings(manager, prompt)
        about = "" if prompt is None else f" (prompt {prompt})"
        with gr.Row():
            for run_id in run_ids or []:
                value = ratings.get(run_id)
                label = re.sub(r" · (unrated|rated [0-9.e+-]+)", "", labels.get(run_id, f"#{run_id}"))
                radio = gr.Radio([str(v) for v in range(1, 11)],
                                 value=None if value is None else f"{value:g}",
                                 label=f"Rate {label}{about} · {rating_mark(ratings, run_id)}",
                                 key=f"rate-{run_id}-{prompt}-{value}", elem_id=f"bk-rate-{run_id}", min_width=220)
                radio.input(functools.partial(rate, manager, run_id), [radio, scope, step], rated_md,
                            key=f"rate-input-{run_id}", **QUIET)

    with gr.Accordion("Steps × prompts and A/B flicker", open=True):
        with gr.Row():
            matrix_btn = gr.Button("Steps × prompts of the picked runs", elem_id="bk-progression-btn", scale=1)
            flicker_a = gr.Dropdown(choices=[], label="A", elem_id="bk-flicker-a", scale=2)
            flicker_b = gr.Dropdown(choices=[], label="B", elem_id="bk-flicker-b", scale=2)
            flicker_btn = gr.Button("A/B flicker", elem_id="bk-flicker-btn", scale=1)
        views_md = gr.Markdown(elem_id="bk-views-msg")
        matrix = gr.HTML(NO_MATRIX, elem_id="bk-progression-box")
        flicker = gr.HTML(NO_FLICKER, elem_id="bk-flicker-box")

    gr.Markdown("### Blind pairwise (configs hidden, order random)")
    with gr.Column(elem_id="bk-pair-zone"):
        with gr.Row():
            pair_btn = gr.Button("Next pair", elem_id="bk-next-pair")
            mode = gr.Checkbox(False, label="Pairwise mode: keys vote while the focus is in this panel "
                               "(1 / ← left, 2 / → right, 3 / ↓ tie)", elem_id="bk-pair-mode")
            undo_btn = gr.Button("Undo last vote", elem_id="bk-pair-undo", size="sm")
        pair_html = gr.HTML(PAIR_START, elem_id="bk-pair-box")
        with gr.Row():
            left_btn = gr.Button("Left better (1 / ←)", elem_id="bk-pair-left", interactive=False)
            right_btn = gr.Button("Right better (2 / →)", elem_id="bk-pair-right", interactive=False)
            tie_btn = gr.Button("Tie (3 / ↓)", elem_id="bk-pair-tie", interactive=False)
        pair_md = gr.Markdown(elem_id="bk-pair-status")

    grid_outputs = [grid, step, shown, scope, compare_md]
    show_btn.click(functools.partial(show_sorted, manager), [runs_dd, sort_dd], grid_outputs, **PRIVATE)
    sort_dd.input(functools.partial(show_sorted, manager), [shown, sort_dd], grid_outputs, **PRIVATE)
    unrated_btn.click(functools.partial(next_unrated, manager), [count], [runs_dd, *grid_outputs], **PRIVATE)
    rung_dd.input(functools.partial(show_rung, manager), [rung_dd], [runs_dd, *grid_outputs], **PRIVATE)
    lists = [runs_dd, sort_dd, flicker_a, flicker_b, rung_dd]
    refresh_btn.click(functools.partial(refresh_runs, manager), None, lists, **PRIVATE)
    runs_dd.change(functools.partial(flicker_defaults, manager), runs_dd, [flicker_a, flicker_b], **QUIET)
    matrix_btn.click(functools.partial(show_progression, manager), [runs_dd, shown], [matrix, views_md], **PRIVATE)
    flicker_btn.click(functools.partial(show_flicker, manager), [flicker_a, flicker_b, step, shown],
                      [flicker, views_md], **PRIVATE)
    # a drag ends with release; a step typed in the slider's box is an input (no need to leave the box)
    gr.on([step.release, step.input], functools.partial(change_step, manager), [shown, step], [grid, compare_md],
          trigger_mode="always_last", **PRIVATE)
    # after a rating the grid's headers say "rated 7" at once
    rated_md.change(functools.partial(relabel, manager), [grid, shown], grid, **QUIET)
    # new runs, scores and ratings reach the list and the picked runs' chips without a click
    runs_sent = gr.State(None)
    poll_outputs = [*lists, runs_sent]
    gr.Timer(2.0).tick(functools.partial(poll_runs, manager), runs_sent, poll_outputs, **QUIET)
    rated_md.change(functools.partial(poll_runs, manager), runs_sent, poll_outputs, **QUIET)
    pair_outputs = [pair, pair_html, left_btn, right_btn, tie_btn]
    pair_btn.click(functools.partial(next_pair, manager), None, pair_outputs, **PRIVATE)
    for button, winner in ((left_btn, "left"), (right_btn, "right"), (tie_btn, "tie")):
        button.click(functools.partial(choose, manager, winner=winner), [pair], [pair_md, *pair_outputs],
                     concurrency_id="scoring", **QUIET)
    undo_btn.click(functools.partial(undo_vote, manager), None, [pair_md, *pair_outputs], concurrency_id="scoring",
                   **QUIET)
    # on demand, in the page only: the grid keeps each image's scores (also its hover text)
    scores_cb.change(None, scores_cb, None, js=SHOW_SCORES, **QUIET)
    del mode  # read by the page script only (ui.assets)
    return {"runs": lists, "refresh": functools.partial(refresh_runs, manager)}


def _empty_grid() -> Any:
    from bracket.app.grid import GridData

    return GridData([], [], [], None, [])
