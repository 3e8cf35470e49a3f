"""Search tab: control the running search and watch it.

A ``gr.Timer`` polls the module-level :class:`SessionManager` once a second. The poll
handler compares a fingerprint of every output with what this browser tab last got (kept
in a small per-tab ``gr.State``) and returns ``gr.skip()`` for everything unchanged, so
nothing flickers and an idle search costs almost nothing to watch. The manager caches the
snapshot briefly, so many open tabs share one read of the store.
"""

from __future__ import annotations

import functools
from typing import Any

import gradio as gr

from bracket.errors import BracketError
from bracket.session.manager import SessionManager
from ui.common import QUIET, inline_errors
from ui.render import fingerprint, loss_figure, progress_html, runs_frame, status_markdown

#: finished runs drawn in the live chart besides the current one (the Results tab overlays any)
RECENT_RUNS = 30
LOG_LINES = 40


def chart_series(manager: SessionManager) -> tuple[dict[int, list], dict[int, str], int | None]:
    """Loss series of the current run and the most recent finished ones, with their labels."""
    snap = manager.snapshot()
    if snap is None:
        return {}, {}, None
    current = (snap.current or {}).get("run_id")
    finished = [r["id"] for r in snap.runs if r["kind"] != "setup" and r["id"] != current
                and r["status"] not in ("pending", "running")][-RECENT_RUNS:]
    wanted = finished + ([current] if current is not None else [])
    series = manager.loss_series(wanted)
    labels = {r["id"]: f"#{r['id']} {r['config_name']} s{r['seed']}" for r in snap.runs}
    return series, labels, current


def poll(manager: SessionManager, sent: dict[str, str] | None, smoothing: float) -> tuple[Any, ...]:
    """Everything the Search tab shows; unchanged parts come back as ``gr.skip()``."""
    sent = dict(sent or {})
    snap = manager.snapshot()
    outputs: dict[str, Any] = {
        "status": status_markdown(snap),
        "progress": progress_html(snap),
        "log": "\n".join(manager.log_tail(LOG_LINES)) if snap else "",
    }
    frame = runs_frame(snap)
    outputs["table"] = frame
    keys = {"status": outputs["status"], "progress": outputs["progress"], "log": outputs["log"],
            "table": frame.to_dict("split")}
    series, labels, current = chart_series(manager) if snap else ({}, {}, None)
    keys["plot"] = [smoothing, current, sorted((k, len(v), v[-1] if v else None) for k, v in series.items())]
    result = []
    for name in ("status", "progress", "plot", "log", "table"):
        mark = fingerprint(keys[name])
        if sent.get(name) == mark:
            result.append(gr.skip())
            continue
        sent[name] = mark
        if name == "plot":
            result.append(loss_figure(series, labels, smoothing=smoothing, highlight=current))
        else:
            result.append(outputs[name])
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


@inline_errors(1)
def resume(manager: SessionManager) -> str:
    session = manager.resume()
    return f"Resumed **{session.name}**."


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


def build(manager: SessionManager) -> dict[str, Any]:
    sent = gr.State({})
    with gr.Row():
        start_btn = gr.Button("Start / resume", variant="primary", elem_id="bk-resume", interactive=False)
        pause_btn = gr.Button("Pause", elem_id="bk-pause", interactive=False)
        stop_after_btn = gr.Button("Stop after this trial", elem_id="bk-stop-after", interactive=False)
        stop_btn = gr.Button("Stop now", variant="stop", elem_id="bk-stop", interactive=False)
    control_md = gr.Markdown(elem_id="bk-control-status")
    status_md = gr.Markdown(elem_id="bk-status")
    progress = gr.HTML(elem_id="bk-progress-box")
    with gr.Row():
        with gr.Column(scale=3):
            plot = gr.Plot(label="Loss", elem_id="bk-loss")
            smoothing = gr.Slider(0.0, 0.99, value=0.6, step=0.01, label="Smoothing")
        with gr.Column(scale=2):
            log = gr.Textbox(label="Log of the current (or last) trial, tail", lines=18, max_lines=18, autoscroll=True,
                             interactive=False, elem_id="bk-log")
    table = gr.Dataframe(label="Trials", interactive=False, wrap=False, max_height=420, elem_id="bk-trials")
    timer = gr.Timer(1.0)
    outputs = [status_md, progress, plot, log, table, start_btn, stop_btn, stop_after_btn, pause_btn, sent]
    poll_fn = functools.partial(poll, manager)
    timer.tick(poll_fn, [sent, smoothing], outputs, **QUIET)
    smoothing.release(poll_fn, [gr.State({}), smoothing], outputs, **QUIET)
    # QUIET: no Gradio timer text ("processing | 1.2s") over the messages
    start_btn.click(functools.partial(resume, manager), None, control_md, concurrency_id="session-control",
                    **QUIET)
    stop_btn.click(functools.partial(stop, manager, True), None, control_md, **QUIET)
    stop_after_btn.click(functools.partial(stop, manager, False), None, control_md, **QUIET)
    pause_btn.click(functools.partial(toggle_pause, manager), None, control_md, **QUIET)
    return {"timer": timer, "sent": sent, "smoothing": smoothing, "outputs": outputs, "poll": poll_fn}
