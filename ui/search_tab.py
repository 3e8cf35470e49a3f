"""Search tab: control the running search and watch it.

A ``gr.Timer`` polls the module-level :class:`SessionManager` once a second. The poll
handler compares a fingerprint of every output with what this browser tab last got (kept
in a small per-tab ``gr.State``) and returns ``gr.skip()`` for everything unchanged, so
nothing flickers and an idle search costs almost nothing to watch. The manager rebuilds
its snapshot only when the store's change marker moves, and builds the table page and the
loss chart once per change for all open tabs (``SessionManager.memo``). The table shows
``PAGE_ROWS`` trials a page, newest first page. The loss chart is written as Plotly JSON
(:mod:`ui.loss_plot`): a finished run's trace is serialised once, a tick writes the live one.

The table's "why" column says in one line why each config was proposed (baseline, curated,
warm start, learning-rate bracket or TPE; for TPE how many scored configs it saw, what it
changed against the best one and the rating it came after). Each config's line is computed
once and kept (``SessionManager.reading.short_reasons``), so the poll stays a fingerprint compare.
A click on a row — or the "Why this suggestion?" panel — gives the full text: the finished
configs it resembles and every change (``bracket.app.suggestion_reason``). A successive-halving
search adds a "rung" column (where each config stands: running to 1/3, paused at 1/9, stopped at
1/9 and why, full), opens the "why" with the stored reason (``promoted: 1 of 6 at 1/9, top 2 go on
to 1/3``) and says in the status how many configs stand where (``bracket.app.rungs``).
"""

from __future__ import annotations

import functools
from typing import Any

import gradio as gr

from bracket.app import rungs
from bracket.app.judge_text import run_figures
from bracket.app.manager import SessionManager
from bracket.app.places import board_places
from bracket.errors import BracketError
from ui.common import QUIET, inline_errors
from ui.loss_plot import loss_plot
from ui.render import fingerprint, progress_html, runs_frame, status_markdown, with_live_step

#: finished runs drawn in the live chart besides the current one (the Results tab overlays any)
RECENT_RUNS = 30
#: the log panel's height in lines, and the lines it is sent: the newest line is always in view
LOG_LINES = 18
#: rows of the trial table per page (page 1 = the newest); more would slow every browser tab
PAGE_ROWS = 300


def chart_series(manager: SessionManager, snap: Any = None
                 ) -> tuple[dict[int, list], dict[int, str], int | None, dict[int, list]]:
    """Loss series of the current run and the most recent finished ones, with their labels, and
    the finished ones' validation loss (the loss that scores, where logged; ``snap``: the
    snapshot just looked at; else one is taken)."""
    snap = snap if snap is not None else manager.snapshot()
    if snap is None:
        return {}, {}, None, {}
    current = (snap.current or {}).get("run_id")
    finished = [r["id"] for r in snap.runs if r["kind"] != "setup" and r["id"] != current
                and r["status"] not in ("pending", "running")][-RECENT_RUNS:]
    wanted = finished + ([current] if current is not None else [])
    series = manager.reading.loss_series(wanted, snap)
    labels = {r["id"]: f"#{r['id']} {r['config_name']} s{r['seed']}" for r in snap.runs if r["id"] in series}
    return series, labels, current, manager.reading.loss_series(finished, snap, kind="eval_loss")


def _table(manager: SessionManager, page: int) -> tuple[str, Any]:
    """(fingerprint, frame) of one page of the trial table, built once per store change; its ranks
    and raw figures are the session's standings' (the Results leaderboard's, built once per change)."""
    def build() -> tuple[str, Any]:
        snap = manager.snapshot()
        table = manager.standings()
        frame = runs_frame(snap, page=page, page_rows=PAGE_ROWS, reasons=manager.reading.short_reasons(snap),
                           rungs=rungs.config_rungs(manager, snap), places=board_places(table),
                           figures=run_figures(table))
        return fingerprint(frame.to_dict("split")), frame

    # kept until the store changes: the live step is set per tick by ``poll`` (``with_live_step``)
    return manager.memo(("search-table", page), build, structural=True, fresh=False)


def _plot(manager: SessionManager, smoothing: float, snap: Any) -> tuple[str, Any]:
    """(fingerprint, builder) of the loss chart; its key is cheap (series sizes), the figure is
    drawn only for a tab that has not got this one yet, and once for all such tabs."""
    series, labels, current, validation = manager.memo("search-series", lambda: chart_series(manager, snap),
                                                       fresh=False)
    live = (snap.current or {}).get("loss") or []
    mark = fingerprint([smoothing, current, len(live), sorted((k, len(v)) for k, v in series.items() if k != current),
                        sorted((k, len(v)) for k, v in validation.items())])
    return mark, lambda: manager.memo(("search-plot", smoothing), lambda: loss_plot(
        series, labels, smoothing=smoothing, highlight=current, scope=snap.name, validation=validation), fresh=False)


def poll(manager: SessionManager, sent: dict[str, str] | None, smoothing: float,
         page: float | None = 1) -> tuple[Any, ...]:
    """Everything the Search tab shows; what this tab already has comes back as ``gr.skip()``.

    The work is in proportion to what changed: the snapshot is rebuilt only when the store's
    change marker moved, the table page and the chart are built once per change for every
    open tab (``SessionManager.memo``), and per tab only fingerprints are compared."""
    sent = dict(sent or {})
    snap = manager.snapshot()
    page = max(1, int(page or 1))
    parts: dict[str, tuple[str, Any]] = {}
    status = status_markdown(snap, rungs.rung_summary(manager, snap))
    parts["status"] = (fingerprint(status), lambda: status)
    progress = progress_html(snap)
    parts["progress"] = (fingerprint(progress), lambda: progress)
    parts["plot"] = _plot(manager, smoothing, snap) if snap else (fingerprint(None), lambda: loss_plot({}, {}))
    log = "\n".join(manager.reading.log_tail(LOG_LINES, snap)) if snap else ""
    parts["log"] = (fingerprint(log), lambda: log)
    mark, frame = _table(manager, page) if snap else (fingerprint(None), runs_frame(None))
    current = snap.current if snap else None  # the live run's step cell, as the progress bar
    if current:
        mark = fingerprint([mark, current.get("run_id"), current.get("step"), current.get("max_steps")])
    parts["table"] = (mark, lambda: with_live_step(frame, current))
    result = []
    for name in ("status", "progress", "plot", "log", "table"):
        mark, value = parts[name]
        if sent.get(name) == mark:
            result.append(gr.skip())
            continue
        sent[name] = mark
        result.append(value())
    running = bool(snap and snap.status in ("running", "paused"))
    controls = ("running" if running else "idle", snap.status if snap else "none")
    mark = fingerprint(controls)
    if sent.get("controls") == mark:
        result += [gr.skip()] * 4
    else:
        sent["controls"] = mark
        paused = bool(snap and snap.status == "paused")
        result += [gr.Button(interactive=bool(snap) and not running),
                   gr.Button(interactive=running), gr.Button(interactive=running),
                   gr.Button("Resume" if paused else "Pause", interactive=running)]
    return (*result, sent)


def left_text(session: Any) -> str:
    """What a search that has not spent its budget (``Session.budget_spent``) has left to train, in
    the words Resume (here) and Open (Setup tab) share: ``2 of 3 runs left to train``, or — a halving
    search that has started every run of its budget — ``the configs waiting at a rung go on``."""
    spent, total = session.spent_runs(), session.total_runs()
    if total - spent <= 0:  # a halving search whose configs wait at a rung
        return "the configs waiting at a rung go on"
    return f"{total - spent} of {total} run{'s' if total != 1 else ''} left to train"


def spent_text(manager: SessionManager) -> str:
    """What the open session's search spent, in its status line's words (``9/9 runs``; a halving
    search's ``5 configs, 5.8/6 full runs``, its budget being full runs)."""
    snap = manager.snapshot()
    return snap.spent_label if snap is not None else ""


def resumed_text(session: Any, spent: str = "") -> str:
    """What Resume did: the runs it has left to train (:func:`left_text`), or — a search that had
    spent its whole budget (``spent``: :func:`spent_text`) — that there was nothing to train and
    where more runs come from."""
    if session.budget_spent():
        return (f"**{session.name}** had already trained its whole budget ({spent}): "
                "nothing is left to resume. Give it more with **+N runs** (Results tab), or run finals there.")
    return f"Resumed **{session.name}**: {left_text(session)}."


@inline_errors(1)
def resume(manager: SessionManager) -> str:
    session = manager.resume()
    return resumed_text(session, spent_text(manager))


@inline_errors(1)
def stop(manager: SessionManager, now: bool) -> str:
    manager.stop(now=now)
    return ("Stopping now: the current run is killed and will run again when you resume." if now
            else "Stopping after the current run finishes.")


@inline_errors(1)
def toggle_pause(manager: SessionManager) -> str:
    session = manager.session
    if session is None:
        raise BracketError("No search is open.")
    if session.paused:
        manager.unpause()
        return "Resumed: the next run starts now."
    manager.pause()
    return "Paused: a run in progress finishes, then the search waits until you press Resume."


@inline_errors(2, at=1)
def why(manager: SessionManager, config_id: Any = None) -> tuple[Any, str]:
    """(the configs to ask about, why the picked one — default the newest — was proposed)."""
    choices = manager.reading.config_choices()
    if not choices:
        raise BracketError("No config has been proposed yet.")
    chosen = int(config_id) if config_id not in (None, "") else choices[0][1]
    reason = manager.reading.suggestion(chosen)
    return gr.Dropdown(choices=choices, value=chosen), reason.text() if reason else ""


def why_row(manager: SessionManager, event: gr.SelectData) -> tuple[Any, Any, str]:
    """(panel opened, config picked, full reason) for the trial table's clicked row."""
    run_id = (event.row_value or [None])[0] if event is not None else None
    snap = manager.snapshot()
    run = next((r for r in (snap.runs if snap else []) if r["id"] == run_id), None)
    if run is None or run.get("stage") != "search" or run.get("config_id") is None:
        return gr.skip(), gr.skip(), gr.skip()
    dropdown, text = why(manager, run["config_id"])
    return gr.Accordion(open=True), dropdown, text


def build(manager: SessionManager, control_md: gr.Markdown | None = None) -> dict[str, Any]:
    """The Search tab; ``control_md`` (made unrendered by ``ui.blocks``) is its message line,
    which Setup's Start, Open and Resume also write to, as they bring this tab up."""
    sent = gr.State({})
    with gr.Row():
        start_btn = gr.Button("Start / resume", variant="primary", elem_id="bk-resume", interactive=False)
        pause_btn = gr.Button("Pause", elem_id="bk-pause", interactive=False)
        stop_after_btn = gr.Button("Stop after this trial", elem_id="bk-stop-after", interactive=False)
        stop_btn = gr.Button("Stop now", variant="stop", elem_id="bk-stop", interactive=False)
    control_md = control_md.render() if control_md is not None else gr.Markdown(elem_id="bk-control-status")
    status_md = gr.Markdown(elem_id="bk-status")
    progress = gr.HTML(elem_id="bk-progress-box")
    with gr.Row():
        with gr.Column(scale=3):
            plot = gr.Plot(label="Loss", elem_id="bk-loss")
            smoothing = gr.Slider(0.0, 0.99, value=0.6, step=0.01, label="Smoothing")
        with gr.Column(scale=2):
            log = gr.Textbox(label="Log of the current (or last) trial, tail", lines=LOG_LINES, max_lines=LOG_LINES,
                             autoscroll=True,
                             interactive=False, elem_id="bk-log")
    table = gr.Dataframe(label="Trials (rank: the config's place on the Results leaderboard, 1 = best; what "
                               "it achieved is its headline there; raw figures: what the judges measured of "
                               "the run; click a row: why its config was proposed, in full below)", interactive=False,
                         wrap=False, max_height=420, elem_id="bk-trials")
    page = gr.Number(value=1, precision=0, label=f"Trials page ({PAGE_ROWS} a page, 1 = newest)",
                     elem_id="bk-trials-page")
    with gr.Accordion("Why this suggestion", open=False, elem_id="bk-why-acc") as why_acc:
        with gr.Row():
            why_dd = gr.Dropdown(choices=[], label="Config (newest first)", elem_id="bk-why-config", scale=3)
            why_btn = gr.Button("Why this suggestion?", elem_id="bk-why", scale=1)
        why_md = gr.Markdown(elem_id="bk-why-text")
    why_btn.click(functools.partial(why, manager), None, [why_dd, why_md], **QUIET)
    why_dd.input(functools.partial(why, manager), why_dd, [why_dd, why_md], **QUIET)

    def on_row(event: gr.SelectData) -> tuple[Any, Any, str]:  # a closure: Gradio reads the event from its hint
        return why_row(manager, event)

    table.select(on_row, None, [why_acc, why_dd, why_md], **QUIET)
    timer = gr.Timer(1.0)
    outputs = [status_md, progress, plot, log, table, start_btn, stop_btn, stop_after_btn, pause_btn, sent]
    poll_fn = functools.partial(poll, manager)
    timer.tick(poll_fn, [sent, smoothing, page], outputs, **QUIET)
    smoothing.release(poll_fn, [gr.State({}), smoothing, page], outputs, **QUIET)
    page.submit(poll_fn, [gr.State({}), smoothing, page], outputs, **QUIET)
    # QUIET: no Gradio timer text ("processing | 1.2s") over the messages
    start_btn.click(functools.partial(resume, manager), None, control_md, concurrency_id="session-control",
                    **QUIET)
    stop_btn.click(functools.partial(stop, manager, True), None, control_md, **QUIET)
    stop_after_btn.click(functools.partial(stop, manager, False), None, control_md, **QUIET)
    pause_btn.click(functools.partial(toggle_pause, manager), None, control_md, **QUIET)
    return {"timer": timer, "sent": sent, "smoothing": smoothing, "outputs": outputs, "poll": poll_fn}
