"""Results tab: the leaderboard, the winner as a command and files, charts, the report.

All numbers come from the engine's standings (``bracket.standings``, the same
answer as ``status``, the report and ``export``): ``SessionManager.results.leaderboard`` (one board
per stage, mean ± confidence interval per config, the raw figures behind each score),
``winner_export`` (the winner's trainer command at its own step count, and JSON/TOML files
under the session folder), ``param_importance``, ``score_history`` and ``report_markdown``. The
tab refreshes when it is opened and on demand, in two halves: the leaderboard first
(:func:`refresh`), then the importance and the report with
its pictures (:func:`refresh_report`), so a long search's board does not wait for matplotlib.

Also: "+N runs" gives a stopped or finished search more runs and resumes it
(``SessionManager.extend``); the session's search space as a table (``bracket.app.space_table``);
Optuna's parallel-coordinate and slice plots of the configs against their current scores
(``bracket.app.config_plots``); fidelity against flexibility with the answer picked on its front,
and how far each judge agrees with the person (``ui.results_judges``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from bracket.app.manager import SessionManager
from bracket.app.rungs import board_marks
from bracket.errors import BracketError
from ui import results_judges
from ui.common import PRIVATE, QUIET, inline_errors
from ui.render import (
    LEADERBOARD_COLUMNS,
    VALIDATION_TITLE,
    file_url,
    history_figure,
    importance_figure,
    leaderboard_frame,
    loss_figure,
    step_figure,
    winner_markdown,
)

NO_SESSION = "No search is open: start one in **Setup** or open a past session there."


def run_choices(manager: SessionManager) -> list[tuple[str, int]]:
    snap = manager.snapshot()
    if snap is None:
        return []
    return [(f"#{r['id']} {r['config_name']} s{r['seed']} ({r['status']})", r["id"]) for r in snap.runs
            if r["kind"] != "setup" and r["status"] not in ("pending",)]


@inline_errors(10, at=1)
def refresh(manager: SessionManager) -> tuple[Any, ...]:
    """(leaderboard, verdict, command, files, history, importance, report, dashboard, run picker, step plot):
    the leaderboard half of the tab, shown first; the history and importance charts and the
    report (matplotlib pictures: the slow half) come with :func:`refresh_report`, right after it."""
    if manager.session is None:
        return (None, NO_SESSION, "", None, None, None, "", "", gr.Dropdown(choices=[], value=[], multiselect=True),
                None)
    boards, _verdict = manager.results.leaderboard()
    export = manager.results.winner_export()
    command = export.command_text if export else "# no finished, usable run yet"
    files = [str(export.json_path), str(export.toml_path)] if export else None
    choices = run_choices(manager)
    best = [r for board in boards for r in board.top(3)][:3]
    selected = [i for row in best for i in row.run_ids][:6]
    rungs, paused = board_marks(manager)  # a halving search: each config's rung, each paused run's step
    return (leaderboard_frame(boards, rungs, paused), verdict_text(manager), command, files,
            None, None, REPORT_PENDING, manager.results.dashboard_command(),
            gr.Dropdown(choices=choices, value=selected, multiselect=True), None)


#: the leaderboard's column widths by column (the words wrap): the headline, raw figures and params
#: get the room, the counts little; a halving search's "rung" column takes its room from them
_WIDTHS = {"stage": 6, "rank": 5, "config": 10, "kind": 7, "headline": 15, "raw figures": 9, "seeds": 5,
           "best step": 6, "loss scored": 7, "ratings": 6, "comparisons": 9, "runs": 5, "params": 10}
_RUNG_WIDTH = 8
BOARD_WIDTHS = [f"{_WIDTHS[c]:g}%" for c in LEADERBOARD_COLUMNS]


def board_widths(columns: Sequence[str]) -> list[str]:
    """The leaderboard's column widths for ``columns`` (with or without the rung column), summing to
    the page's width: a column Gradio is given no width for is 150 px, past a 1280-px page's edge."""
    extra = _RUNG_WIDTH if "rung" in columns else 0
    shares = {c: _WIDTHS[c] * (100 - extra) / 100 for c in columns if c in _WIDTHS}
    return [f"{round(shares.get(c, extra), 1):g}%" for c in columns]


def shown(manager: SessionManager) -> tuple[Any, ...]:
    """:func:`refresh` as the tab shows it: the board with its column widths (the rung column of a
    halving search among them)."""
    board, *rest = refresh(manager)
    if isinstance(board, pd.DataFrame):
        board = gr.Dataframe(value=board, column_widths=board_widths(list(board.columns)))
    return (board, *rest)

REPORT_PENDING = "*Writing the report (charts, parameter importance)…*"


def report_pointer(manager: SessionManager) -> str:
    """Where the report is: one link to report.html, not its copy. The tab shows the leaderboard,
    the charts and the importance itself; embedding the report would repeat all of them."""
    return (f"The full report (leaderboards per stage, best and worst sample grids, judges and weights, "
            f"run problems) is {report_link(manager)}.")


def verdict_text(manager: SessionManager) -> str:
    """The verdict, the winner, the loss it rests on, and a link to the report when it is written."""
    _boards, verdict = manager.results.leaderboard()
    table = manager.standings()
    halving = bool(getattr(getattr(manager.session, "settings", None), "halving", False))
    winner = f"{verdict}\n\n{winner_markdown(table.winner, halving=halving)}" if table and table.winner else verdict
    search = table.board("search") if table else None
    basis = search.top(1)[0].loss_basis if search and search.top(1) else ""
    if basis:
        winner += f"\n\nLoss scores are based on the **{basis} loss**" + (
            " (held-out validation split)." if basis == "validation" else "; this search logged no validation loss.")
    verdict_links = report_link(manager)
    if verdict_links:
        winner += f"\n\nOpen {verdict_links}."
    return winner


@inline_errors(5, at=2)
def refresh_report(manager: SessionManager) -> tuple[Any, Any, str, str, Any]:
    """(history, importance, report, verdict with the report's link, step plot): the slow half of
    the tab — the charts and the report with its pictures (written under the session folder) —
    run after :func:`refresh` has shown the leaderboard."""
    if manager.session is None:
        return None, None, "", NO_SESSION, None
    table = manager.standings()
    search = table.board("search") if table else None
    history = manager.results.score_history()
    importances, message = manager.results.param_importance()
    manager.results.report_markdown(lambda path: file_url(str(path)))  # writes report.md/.html (its one place)
    report = report_pointer(manager)
    if message:
        report = f"*{message}*\n\n" + report
    return (history_figure(history) if history else None, importance_figure(importances) if importances else None,
            report, verdict_text(manager), step_figure(search.top(3) if search else []))


def refresh_more(manager: SessionManager, judges: Any = None) -> tuple[Any, ...]:
    """(search-space table, parallel-coordinate plot, slice plot) of the open session, then the
    fidelity-against-flexibility and trust section's outputs (``judges()``: ``ui.results_judges``)."""
    section = tuple(judges()) if judges is not None else ()
    if manager.session is None:
        return None, None, None, *section
    import pandas as pd

    from bracket.app.space_table import COLUMNS

    parallel, slices = manager.results.config_figures()
    return pd.DataFrame(manager.results.space_table(), columns=list(COLUMNS)), parallel, slices, *section


@inline_errors(1)
def extend(manager: SessionManager, more: Any) -> str:
    """``+N runs``: more runs for the open search, which resumes at once."""
    try:
        count = int(more)
    except (TypeError, ValueError):
        raise BracketError(f"+N runs must be a whole number, got {more!r}.") from None
    session = manager.extend(count)
    return (f"Added {count} run{'' if count == 1 else 's'}: {session.plan_text()}. "
            "The search resumed — watch it on the Search tab, "
            "then press Refresh here.")


def served_link(manager: SessionManager, path: Path, text: str) -> str:
    """A markdown link to ``path`` — only for a file under the runs folder (the one folder the
    app serves); anything else is named, not linked, and a file of the runs folder not written
    yet says it is being written."""
    path = Path(path).resolve()
    if not path.is_relative_to(Path(manager.runs_dir).resolve()):
        return f"{text} (`{path}`, outside the runs folder: not served)"
    if not path.is_file():
        return f"{text} (being written: `{path}`)"
    return f"[{text}]({file_url(str(path))})"


def report_link(manager: SessionManager) -> str:
    path = manager.results.report_html()  # where the Results tab's refresh writes the report
    return "" if path is None else served_link(manager, path, "report.html")


def _steps(value: Any) -> int | None:
    try:
        steps = int(value or 0)
    except (TypeError, ValueError):
        raise BracketError(f"Steps must be a whole number (0: the default), got {value!r}.") from None
    if steps < 0:
        raise BracketError("Steps must be 0 (the default) or more.")
    return steps or None


@inline_errors(1)
def start_job(manager: SessionManager, kind: str, steps: Any) -> str:
    job = manager.start_job(kind, steps=_steps(steps))
    what = "the top 3 configs × 2 new seeds" if kind == "finals" else "the winner"
    return f"{job.kind}: started ({what}); the run in progress shows below and on the Search tab."


@inline_errors(1)
def export(manager: SessionManager, steps: Any) -> str:
    result = manager.results.export_winner(_steps(steps))
    links = ", ".join(served_link(manager, p, p.name) for p in (result.script, result.json_path, result.toml_path))
    return (f"Exported run #{result.run_id} ({result.config_name}) at {result.steps} steps to `{result.folder}`: "
            f"{links} · {report_link(manager)}. Train it with `bash {result.script}` (Windows: "
            f"`powershell -ExecutionPolicy Bypass -File {result.windows_script}`); it reads your own dataset"
            + (f" and makes the trainer's caches in `{result.cache_dir}` first unless the session's are still there."
               if result.cache_dir is not None else "."))


def job_progress(manager: SessionManager) -> str:
    """The background job's state with the step of its run in progress (polled)."""
    job = manager.job
    if job is None:
        return gr.skip()
    text = job.status()
    current = (manager.snapshot().current or {}) if manager.session else {}
    if job.running and current:
        text += f" — run #{current.get('run_id')} step {current.get('step') or 0}/{current.get('max_steps') or '?'}"
    if not job.running and not job.error:
        text += f" · {report_link(manager)} (press Refresh for the new standings)"
    return text


def overlay(manager: SessionManager, run_ids: list[int] | None, smoothing: float) -> Any:
    if manager.session is None or not run_ids:
        return None
    snap = manager.snapshot()
    labels = {r["id"]: f"#{r['id']} {r['config_name']} s{r['seed']}" for r in snap.runs}
    wanted = [int(i) for i in run_ids]
    validation = manager.reading.loss_series(wanted, kind="eval_loss")  # the loss that scores, dashed, where logged
    return loss_figure(manager.reading.loss_series(wanted), labels, smoothing=smoothing, validation=validation,
                       title=VALIDATION_TITLE if any(validation.values()) else "Loss of the selected runs")


def build(manager: SessionManager) -> dict[str, Any]:
    refresh_btn = gr.Button("Refresh", size="sm", elem_id="bk-results-refresh")
    verdict = gr.Markdown(NO_SESSION, elem_id="bk-verdict")
    with gr.Row():
        job_steps = gr.Number(0, label="Steps (0: finals 4× the search's, train winner/export the winner's own)",
                              precision=0, elem_id="bk-job-steps", scale=2)
        finals_btn = gr.Button("Run finals", elem_id="bk-finals", scale=1)
        promote_btn = gr.Button("Train winner", elem_id="bk-promote", scale=1)
        export_btn = gr.Button("Export train.sh", elem_id="bk-export", scale=1)
    with gr.Row():
        more_runs = gr.Number(4, label="+N runs: give the stopped or finished search N more runs (it resumes)",
                              precision=0, elem_id="bk-more-runs", scale=2)
        extend_btn = gr.Button("+N runs", elem_id="bk-extend", scale=1)
    extend_md = gr.Markdown(elem_id="bk-extend-msg")
    job_md = gr.Markdown(elem_id="bk-job")
    export_md = gr.Markdown(elem_id="bk-export-msg")
    # wrapped to the page's width (at 1280 px it scrolled sideways, the raw figures cut off)
    board = gr.Dataframe(label="Leaderboard per stage (each config against your baseline; stages are scored apart)",
                         interactive=False, wrap=True, elem_id="bk-leaderboard", column_widths=BOARD_WIDTHS)
    with gr.Row():
        with gr.Column(scale=3):
            command = gr.Code(label="Winner's trainer command", language="shell", interactive=False,
                              elem_id="bk-winner-cmd")
        with gr.Column(scale=1):
            files = gr.File(label="Winner config (JSON, TOML)", file_count="multiple", interactive=False)
    judges = results_judges.build()  # fidelity against flexibility, and trust in each judge
    with gr.Row():
        runs_dd = gr.Dropdown(choices=[], multiselect=True, label="Runs to overlay", scale=4)
        smoothing = gr.Slider(0.0, 0.99, value=0.6, step=0.01, label="Smoothing", scale=1)
    overlay_plot = gr.Plot(label="Loss curves")
    steps_plot = gr.Plot(label="The loss that scores at each sampled step (top configs, ★ best step)",
                         elem_id="bk-step-losses")
    with gr.Row():
        history = gr.Plot(label="Score history")
        importance = gr.Plot(label="Parameter importance")
    # full width, one under the other: side by side their axis labels ran into each other
    parallel = gr.Plot(label="Configs vs their rank (1 = best): parallel coordinates (Optuna)", elem_id="bk-parallel")
    slices = gr.Plot(label="Each knob vs the config's rank (1 = best): slice plot (Optuna)", elem_id="bk-slice")
    # the columns wrap to the page's width, as Setup's table of the same knobs (at 1280 px it ran past the edge)
    space = gr.Dataframe(label="Search space of this session (narrowed by its bounds)", interactive=False,
                         wrap=True, elem_id="bk-space-results", max_height=4000,
                         column_widths=["18%", "10%", "24%", "24%", "24%"])
    dashboard = gr.Code(label="Open the study in optuna-dashboard", language="shell", interactive=False)
    report = gr.Markdown(elem_id="bk-report")
    outputs = [board, verdict, command, files, history, importance, report, dashboard, runs_dd, steps_plot]
    refresh_fn = functools.partial(shown, manager)
    report_fn, report_outputs = functools.partial(refresh_report, manager), [history, importance, report, verdict,
                                                                           steps_plot]
    refresh_btn.click(refresh_fn, None, outputs, **PRIVATE).then(report_fn, None, report_outputs, **PRIVATE)
    judges_fn = results_judges.wire(manager, judges, after=(refresh_fn, outputs))
    more_fn = functools.partial(refresh_more, manager, judges_fn)
    more = [space, parallel, slices, *judges["outputs"]]
    refresh_btn.click(more_fn, None, more, **PRIVATE)
    extend_btn.click(functools.partial(extend, manager), more_runs, extend_md, concurrency_id="session-control",
                     **QUIET)
    overlay_fn = functools.partial(overlay, manager)
    runs_dd.change(overlay_fn, [runs_dd, smoothing], overlay_plot, **PRIVATE)
    smoothing.release(overlay_fn, [runs_dd, smoothing], overlay_plot, **PRIVATE)
    for button, kind in ((finals_btn, "finals"), (promote_btn, "train-winner")):
        button.click(functools.partial(start_job, manager, kind), job_steps, job_md,
                     concurrency_id="session-control", **QUIET)
    export_btn.click(functools.partial(export, manager), job_steps, export_md, **QUIET)
    gr.Timer(2.0).tick(functools.partial(job_progress, manager), None, job_md, **QUIET)
    return {"refresh": refresh_fn, "outputs": outputs, "refresh_report": report_fn, "report_outputs": report_outputs,
            "refresh_more": more_fn, "more": more}
