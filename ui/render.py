"""Turning engine data into what Gradio displays: HTML, tables and plotly figures.

Pure presentation: every function takes plain data (a snapshot, a ``GridData``, loss
series, leaderboard rows) and returns a string, a DataFrame or a figure. Images are never
opened here; the HTML points at files through ``gradio_api/file=<path>`` (relative, so a
``root_path`` behind a proxy keeps working), which Gradio serves only under the runs folder.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

import pandas as pd
import plotly.graph_objects as go

from bracket.app.grid import GridCell, GridData
from bracket.app.judge_text import scores_text
from bracket.session.loop.plan import progress_text

MAX_POINTS = 400


def file_url(path: str) -> str:
    return "gradio_api/file=" + quote(str(path), safe="/")


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def format_duration(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "–"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m" if hours else (f"{minutes}m {secs:02d}s" if minutes else f"{secs}s")


def params_text(params: Mapping[str, Any]) -> str:
    """``key=value, …`` of the knobs that apply (a knob whose condition is unmet holds None: left out)."""
    parts = []
    for key, value in params.items():
        if value is None:
            continue
        parts.append(f"{key}={value:.3g}" if isinstance(value, float) else f"{key}={value}")
    return ", ".join(parts)


# -- Compare grid ------------------------------------------------------------------------
def _cell_html(cell: GridCell, row: int, col: int, caption: str) -> str:
    common = f'data-row="{row}" data-col="{col}" data-caption="{_esc(caption)}"'
    judged = scores_text(cell.scores) if cell.scores else ""  # on hover, and under the picture when asked for
    common += f' title="{_esc(judged)}"' if judged else ""
    below = f'<figcaption class="bk-scores">{_esc(judged)}</figcaption>' if judged else ""
    if cell.kind == "image":
        return (f'<figure class="bk-cell" {common} data-kind="image" data-full="{_esc(file_url(cell.path))}">'
                f'<img src="{_esc(file_url(cell.thumb))}" loading="lazy" alt="{_esc(caption)}">{below}</figure>')
    if cell.kind == "video":
        url = _esc(file_url(cell.path))
        return (f'<figure class="bk-cell" {common} data-kind="video" data-full="{url}">'
                f'<video src="{url}" muted loop autoplay playsinline preload="metadata"></video>{below}</figure>')
    if cell.kind == "text":
        return (f'<figure class="bk-cell" {common} data-kind="text" data-full="text">'
                f'<pre>{_esc(cell.text)}</pre></figure>')
    return f'<div class="bk-missing">{_esc(cell.text or "no sample yet")}</div>'


def grid_html(grid: GridData, *, blind: bool = False, titles: Sequence[str] | None = None,
              element_id: str = "") -> str:
    """The grid as an HTML table; ``blind`` hides run names and parameters (pairwise)."""
    if not grid.columns:
        return "<p>Pick 2–8 runs and press <b>Show grid</b>.</p>"
    if grid.empty:
        return "<p>These runs have no samples yet (the trainer writes them while it trains).</p>"
    heads = list(titles) if titles else [c.label for c in grid.columns]
    has_control = any(grid.controls)
    head = "".join(f"<th title=\"{_esc('' if blind else params_text(c.params))}\">{_esc(t)}</th>"
                   for c, t in zip(grid.columns, heads))
    control_head = "<th>control</th>" if has_control else ""
    body = []
    for row, (prompt, cells) in enumerate(zip(grid.prompts, grid.rows)):
        seed = next((c.seed for c in cells if c.seed is not None), None)
        label = f"{prompt}" + (f" (seed {seed})" if seed is not None else "")
        control = ""
        if has_control:
            pair = grid.controls[row] if row < len(grid.controls) else None
            control = (f'<td class="bk-control"><img src="{_esc(file_url(pair[0]))}" alt="control"></td>'
                       if pair else "<td></td>")
        tds = "".join(f"<td>{_cell_html(cell, row, col, f'{heads[col]} · {label}')}</td>"
                      for col, cell in enumerate(cells))
        body.append(f'<tr><th class="bk-prompt">{_esc(label)}</th>{control}{tds}</tr>')
    step = "" if grid.step is None else f' data-step="{grid.step}"'
    ident = f' id="{_esc(element_id)}"' if element_id else ""
    return (f'<div class="bk-grid-wrap"{ident}><table class="bk-grid"{step}><thead><tr><th>prompt</th>'
            f"{control_head}{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


# -- Search tab -------------------------------------------------------------------------------
def _bar(label: str, fraction: float) -> str:
    width = max(0.0, min(1.0, fraction)) * 100
    return (f'<div class="bk-progress-label">{_esc(label)}</div>'
            f'<div class="bk-bar" role="progressbar" aria-valuenow="{width:.0f}"><div style="width:{width:.1f}%">'
            "</div></div>")


def progress_html(snapshot: Any) -> str:
    if snapshot is None:
        return "<p>No search is open.</p>"
    current = snapshot.current or {}
    parts = []
    if current:
        step, total = current.get("step") or 0, current.get("max_steps") or 0
        parts.append(_bar(f"Current trial {current.get('label') or current.get('run_id')}: step {step} / {total}",
                          step / total if total else 0.0))
    timing = ""
    if snapshot.status == "running":  # a finished search's clock would change every tick
        timing = f" · ETA {format_duration(snapshot.eta_s)} · elapsed {format_duration(snapshot.elapsed_s)}"
    elif snapshot.status == "paused":  # the clock stands still while paused (a run in progress still ends)
        timing = (f" · paused · ETA {format_duration(snapshot.eta_s)} once resumed · elapsed "
                  f"{format_duration(snapshot.elapsed_s)}")
    spent = (f"{snapshot.runs_spent} / {snapshot.total_runs} runs" if snapshot.full_runs_spent is None
             else snapshot.spent_label)  # a halving search: configs and the full runs of GPU time they used
    parts.append(_bar(f"Search: {spent}{timing}", snapshot.progress))
    return '<div id="bk-progress">' + "".join(parts) + "</div>"


def status_markdown(snapshot: Any, rungs: str = "") -> str:
    """The Search tab's status; ``rungs``: a halving search's line of where its configs stand
    (``bracket.app.rungs.rung_summary``)."""
    if snapshot is None:
        return "No search is open. Start one in **Setup**, or open a past session there."
    lines = [f"**{snapshot.name}** ({snapshot.preset_id}) — status **{snapshot.status}**, phase *{snapshot.phase}*",
             f"{snapshot.plan}"]
    if getattr(snapshot, "phases", None):  # the plan, and where the search is in it
        lines.append(f"Plan: {progress_text(snapshot.phases)}")
    if rungs:
        lines.append(rungs)
    if snapshot.error:
        lines.append(f"**Error:** {snapshot.error}")
    if snapshot.stopped_early:
        lines.append(f"Divergence stop: {snapshot.stopped_early} run(s) stopped early, about "
                     f"{format_duration(snapshot.time_saved_s)} of training saved.")
    if not snapshot.writes_samples:
        lines.append("This trainer writes no samples: its runs are scored by loss only (nothing to compare).")
    lines += [f"- note: {note}" for note in snapshot.notes[-5:]]
    return "\n\n".join(lines)


#: status, step and rank first after the run's name (a 1280-px window shows them without a
#: scroll); the long "why" and the details after them
RUN_COLUMNS = ["run", "config", "status", "step", "rank", "kind", "seed", "why", "raw figures", "params", "duration",
               "reason"]


def step_text(run: Mapping[str, Any], current: Mapping[str, Any] | None = None) -> str:
    """``12/50``: a run's step; a running run's live step, the one its progress bar shows
    (``current``, the snapshot's live run), when it is that run; a paused run's pause step, as
    ``status`` says it (``bracket.standings.rungs.trained_steps``: a trainer stopped a little past
    its rung resumes from the rung and is scored there)."""
    step = (run.get("pause_step") if run.get("status") == "paused" else None) or run.get("last_step") or 0
    if current and current.get("run_id") == run["id"]:
        step = current.get("step") or 0
    return f"{step}/{run.get('max_steps') or '?'}"


def with_live_step(frame: pd.DataFrame, current: Mapping[str, Any] | None) -> pd.DataFrame:
    """``frame`` (the trial table) with the live run's step cell set from ``current``, as the
    progress bar reads it; ``frame`` itself when the live run is not on it (it is kept, shared)."""
    if not current or frame.empty or current.get("run_id") not in set(frame["run"]):
        return frame
    patched = frame.copy()
    row = patched.index[patched["run"] == current["run_id"]]
    max_steps = current.get("max_steps") or patched.loc[row, "step"].iloc[0].rpartition("/")[2]
    patched.loc[row, "step"] = f"{current.get('step') or 0}/{max_steps}"
    return patched


def runs_frame(snapshot: Any, *, page: int = 1, page_rows: int | None = None,
               reasons: Mapping[int, str] | None = None, rungs: Mapping[int, Any] | None = None,
               places: Mapping[int, str] | None = None, figures: Mapping[int, str] | None = None) -> pd.DataFrame:
    """The trial table, newest run first; with ``page_rows``, one page of it (page 1 = the
    newest runs). A running run shows its live step, as its progress bar (the Search tab keeps
    the table once per store change and sets that one cell per tick, :func:`with_live_step`).
    ``reasons``: why each config was proposed, by config id (the "why" column; finals and
    promote runs say their stage, and their kind column is that stage, e.g. ``final``). ``rungs``
    (a halving search; ``bracket.app.rungs.config_rungs``): a "rung" column after the status with
    where each config stands, and the "why" opening with why it stands there (promoted, stopped).
    ``places`` and ``figures`` (by run id; ``bracket.app.places.board_places`` and
    ``bracket.app.judge_text.run_figures`` of the session's standings): the rank column, its
    config's rank on the Results leaderboard, and the raw figures column, what the judges
    measured of the run (``loss 0.1534 · rating 9.0``; an estimated part marked), as Results and
    ``status`` say them."""
    runs = [] if snapshot is None else [r for r in snapshot.runs if r["kind"] != "setup"]
    if page_rows:
        end = max(0, len(runs) - (max(1, page) - 1) * page_rows)
        runs = runs[max(0, end - page_rows):end]
    rows = []
    current = getattr(snapshot, "current", None)
    for run in reversed(runs):
        stage = run.get("stage") or "search"
        why = (reasons or {}).get(run.get("config_id"), "") if stage == "search" else (
            f"{stage} stage, not a proposal")
        kind = run["kind"] if stage == "search" else stage
        rung = (rungs or {}).get(run.get("config_id"))
        if rung is not None and rung.note:
            why = f"{rung.note} · {why}" if why else rung.note
        rows.append([run["id"], run["config_name"], run["status"], *([rung.text if rung else ""] if rungs else []),
                     step_text(run, current), (places or {}).get(run["id"], ""), kind, run["seed"], why,
                     (figures or {}).get(run["id"], ""),
                     params_text(run["params"]), format_duration(run["duration_s"]) if run["duration_s"] else "",
                     run["failure_reason"] or ""])
    return pd.DataFrame(rows, columns=RUN_COLUMNS[:3] + ["rung"] + RUN_COLUMNS[3:] if rungs else RUN_COLUMNS)


def smooth(values: Sequence[float], weight: float) -> list[float]:
    """TensorBoard-style exponential smoothing (0 = raw)."""
    out, last = [], None
    for value in values:
        last = value if last is None or not math.isfinite(last) else weight * last + (1 - weight) * value
        out.append(last)
    return out


def thin_points(series: Sequence[Sequence[float]]) -> list[Sequence[float]]:
    if len(series) <= MAX_POINTS:
        return list(series)
    stride = math.ceil(len(series) / MAX_POINTS)
    return list(series[::stride]) + [series[-1]]


#: the loss chart before any run logged a loss: hidden axes and one line that says so
EMPTY_LOSS_LAYOUT: dict[str, Any] = {
    "xaxis": {"visible": False}, "yaxis": {"visible": False},
    "annotations": [{"text": "No loss logged yet: each run's training loss is drawn here as it trains.",
                     "showarrow": False, "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5,
                     "font": {"size": 14, "color": "#888"}}]}


#: the loss chart's title when runs logged a validation loss: that is the loss that scores
VALIDATION_TITLE = "Training loss, and validation loss dashed (the loss that scores)"


def validation_trace(points: Sequence[Sequence[float]], name: str) -> dict[str, Any]:
    """A run's validation loss as a plain ``scattergl`` trace: dashed, with markers, not smoothed
    (each point is already an average at fixed timesteps and noise)."""
    points = thin_points(points)
    return {"line": {"dash": "dash", "width": 2}, "mode": "lines+markers", "name": f"{name} validation",
            "opacity": 1.0, "x": [p[0] for p in points],
            "y": [p[1] if math.isfinite(p[1]) else None for p in points], "type": "scattergl"}


def loss_figure(series: Mapping[int, Sequence[Sequence[float]]], labels: Mapping[int, str], *,
                smoothing: float = 0.0, highlight: int | None = None, title: str = "Training loss",
                validation: Mapping[int, Sequence[Sequence[float]]] | None = None) -> go.Figure:
    """The loss chart: each run's training loss, and — where ``validation`` has it — its
    validation loss dashed (the loss the loss judge scores, docs/JUDGES.md)."""
    figure = go.Figure()
    for run_id, points in series.items():
        points = thin_points(points)
        if not points:
            continue
        steps = [p[0] for p in points]
        values = smooth([p[1] for p in points], smoothing)
        current = run_id == highlight
        mode = "lines" if len(points) > 1 else "markers"  # a one-step run's single point is drawn too
        figure.add_trace(go.Scattergl(x=steps, y=values, mode=mode, name=labels.get(run_id, f"#{run_id}"),
                                      line={"width": 3 if current else 1.5}, opacity=1.0 if current else 0.6))
    for run_id, points in (validation or {}).items():
        if points:
            figure.add_trace(go.Scattergl(validation_trace(points, labels.get(run_id, f"#{run_id}"))))
    if validation and any(validation.values()) and title == "Training loss":
        title = VALIDATION_TITLE
    figure.update_layout(title=title, xaxis_title="step", yaxis_title="loss", height=360,
                         margin={"l": 40, "r": 10, "t": 40, "b": 40}, legend={"font": {"size": 10}})
    if not figure.data:  # no axes from -1 around nothing: say what will be here
        figure.update_layout(**EMPTY_LOSS_LAYOUT)
    return figure


# -- Results tab ------------------------------------------------------------------------------
LEADERBOARD_COLUMNS = ["stage", "rank", "config", "kind", "headline", "raw figures", "seeds",
                       "best step", "loss scored", "ratings", "comparisons", "runs", "params"]


def headline_text(row: Any) -> str:
    """A leaderboard row's headline (``bracket.standings.headline``): what the config achieved,
    in words other runs do not move; "" for a config not scored yet."""
    line = getattr(row, "headline", None)
    return line.text if line is not None and row.mean is not None else ""


def leaderboard_frame(boards: Sequence[Any], rungs: Mapping[int, str] | None = None,
                      paused: Mapping[int, str] | None = None) -> pd.DataFrame:
    """One row per config, grouped by stage (each stage ranked on its own), with its headline;
    a config of a
    halving search that stands at a lower rung is ranked after the full-length ones, and says so.
    ``rungs`` (a halving search, ``bracket.app.rungs.board_marks``): a "rung" column after the
    config, where each config stands and why; ``paused``: a paused run's step beside it in "runs"."""
    data = []
    for board in boards:
        for row in board.rows:
            best = "" if row.best_step is None else f"{row.best_step} ({row.best_step_basis})"
            rank = row.rank or ""
            if rank and not getattr(row, "full_length", True):
                rank = f"{rank} (below full length)"
            runs = ", ".join(f"#{i}" + (f" ({(paused or {})[i]})" if i in (paused or {}) else "") for i in row.run_ids)
            rung = [(rungs or {}).get(row.config_id, "") if board.stage == "search" else ""] if rungs else []
            data.append([board.stage, rank, row.name, *rung, row.kind,
                         headline_text(row), row.raw_text, row.seeds, best,
                         row.loss_basis, row.ratings, row.comparisons, runs, params_text(row.params)])
    columns = LEADERBOARD_COLUMNS[:3] + ["rung"] + LEADERBOARD_COLUMNS[3:] if rungs else LEADERBOARD_COLUMNS
    return pd.DataFrame(data, columns=columns)


def step_figure(rows: Sequence[Any]) -> go.Figure | None:
    """The loss that scores at each sampled step of each config row (validation loss where the
    runs logged one: the mean over the config's seeds), each config's best step marked ★; None
    without any. Raw losses, so the configs compare on one axis (the per-step *scores* are
    normalised within each config and would not)."""
    figure = go.Figure()
    bases = set()
    for row in rows:
        losses = getattr(row, "step_loss", None) or {}
        if not losses:
            continue
        bases.add("validation" if "validation" in (getattr(row, "loss_basis", "") or row.best_step_basis)
                  else "training")
        steps = sorted(losses)
        figure.add_trace(go.Scatter(x=steps, y=[losses[s] for s in steps], mode="lines+markers", name=row.name))
        if row.best_step in losses:
            figure.add_trace(go.Scatter(x=[row.best_step], y=[losses[row.best_step]], mode="markers",
                                        marker={"symbol": "star", "size": 14, "color": "#d62728"}, showlegend=False,
                                        name=f"{row.name}: best step {row.best_step} ({row.best_step_basis})"))
    if not figure.data:
        return None
    which = "Validation loss" if bases == {"validation"} else "Loss" if len(bases) > 1 else "Training loss"
    figure.update_layout(title=f"{which} at each sampled step, the loss that scores (lower is better; ★ best step)",
                         height=320, margin={"l": 50, "r": 10, "t": 40, "b": 40}, xaxis_title="step",
                         yaxis_title="loss")
    return figure


def winner_markdown(winner: Any, *, halving: bool = False) -> str:
    """The winner in one line: config, stage, run, steps, seeds, judges, rated or not (``halving``:
    the search has rungs, so the line says the run it names is the winner's full-length one)."""
    seeds = ", ".join(str(s) for s in winner.seeds) or "-"
    judges = ", ".join(winner.judges) or "no judge"
    estimated = f" (estimated: {', '.join(winner.estimated)})" if winner.estimated else ""
    at = f" at its best step **{winner.step}** (by {winner.step_basis})" if winner.step else ""
    run = "full-length run" if halving and getattr(winner, "full_length", True) else "run"
    return (f"Winner: **{winner.config_name}** ({winner.stage}) — {run} #{winner.run_id}, {winner.steps} steps{at}, "
            f"seeds {seeds}: **{winner.headline.text if getattr(winner, 'headline', None) else 'not scored yet'}**; "
            f"scored by {judges}{estimated}; {'rated' if winner.rated else 'not rated'}."
            + ("" if getattr(winner, "full_length", True) else
               " No config has trained to full length yet: this one stands at a lower rung."))


def importance_figure(importances: Mapping[str, float]) -> go.Figure:
    names = list(importances)[::-1]
    figure = go.Figure(go.Bar(x=[importances[n] for n in names], y=names, orientation="h"))
    figure.update_layout(title="Parameter importance (Optuna)", height=300, margin={"l": 120, "r": 10, "t": 40,
                                                                                     "b": 40})
    return figure


def history_figure(history: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Each config's rank on the leaderboard now (1 = best), in the order they were tried, and the
    best rank reached so far: where the search found its best configs."""
    figure = go.Figure()
    xs = list(range(1, len(history) + 1))
    places = [h["rank"] for h in history]
    best = [h["best_rank"] for h in history]
    figure.add_trace(go.Scatter(x=xs, y=places, mode="markers", name="config's rank now",
                                text=[f"{h['config']} ({h['kind']})" for h in history]))
    figure.add_trace(go.Scatter(x=xs, y=best, mode="lines", name="best rank so far", line={"shape": "hv"}))
    figure.update_xaxes(tickformat="d")
    figure.update_yaxes(autorange="reversed", tickformat="d")
    figure.update_layout(title="Rank of each config among the scored configs (1 = best), in the order tried",
                         xaxis_title="config #", yaxis_title="rank (1 = best)", height=320,
                         margin={"l": 40, "r": 10, "t": 40, "b": 40})
    return figure


def fingerprint(value: Any) -> str:
    """A stable hash of plain data, to tell whether an output changed since it was last sent."""
    import hashlib

    return hashlib.sha1(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()
