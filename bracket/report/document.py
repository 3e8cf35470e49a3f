"""The session report: what was found, how sure that is, and how to run the winner.

``python -m bracket report PATH`` and the Results tab both call :func:`write_report`, which
gathers everything from the session's store into a :class:`Report` (plain data), lays it out
as a list of sections made of simple blocks (paragraphs, tables, code, pictures), and renders
those twice: ``report.md`` (pictures saved beside it as PNG files) and ``report.html`` (one
self-contained file, pictures embedded as base64 ``data:`` URLs, no external links).

Leaderboards, the winner and parameter importance are those of
:mod:`bracket.standings` (the same the app, ``status``, ``export`` and ``train-winner``
use), recomputed now, per stage: short search runs and long final runs are scored and
summarised separately (their losses are not comparable), and finals get their own section —
never averaged with search scores. A successive-halving search gets a table of its rungs (where
each config stands and why, ``bracket.standings.rungs``), and its winner is its full-length run.
Each row shows the raw figures behind its score and which parts are estimated; an unrated
winner is flagged when people have rated runs. Nothing
secret is written: settings come from ``SearchSettings.to_dict()`` (no VLM key), and the rules
of :mod:`bracket.report.redaction` (the same as ``export``'s) leave out secret-named settings and
fields, hide URL passwords and scrub known secret values from the text as a last guard.
"""

from __future__ import annotations

import math
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bracket.report import render as report_render
from bracket.report.charts import chart_runs, final_step_samples, history_chart, loss_chart, sample_grid
from bracket.report.export import export_run
from bracket.report.image_table import image_rows, image_section
from bracket.report.judges import judge_sections
from bracket.report.redaction import known_secrets, scrub, without_secrets
from bracket.report.render import Block, Picture
from bracket.safe_text import shown
from bracket.session.scoring import effective_weights
from bracket.session.scoring.samples import image_problem
from bracket.session.store import redact_url
from bracket.standings import ConfigRow, RunStanding, StageBoard, Standings, Winner, figures_text, standings
from bracket.standings import importance as standings_importance
from bracket.standings.history import rank_history
from bracket.standings.rungs import RUNG_HEADERS, session_rung_table
from bracket.stats import StatsReport, summarise, verdict

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session import Session

PROBLEM_STATUSES = ("failed", "disqualified", "pruned", "interrupted")
#: the folder (in the session folder) the Results tab writes its copy of the report into
@dataclass
class StageResult:
    """One stage ("search" or "final"): its board from the standings, plus its runs for the charts."""

    stage: str
    rows: list[ConfigRow]
    stats: StatsReport
    verdict: str
    runs: list[dict[str, Any]]
    scores: dict[int, RunStanding]


@dataclass
class Report:
    name: str
    folder: str
    preset_id: str
    status: str
    plan: str
    generated: str
    storage: str
    search: StageResult
    finals: StageResult | None
    winner: Winner | None
    importance: dict[str, float]
    importance_note: str
    pictures: list[Picture]
    problems: list[list[str]]
    judges: list[list[str]]
    ratings: int
    comparisons: int
    settings: dict[str, Any]
    fields: dict[str, str]
    notes: list[str]
    #: the winner's command rebuilt by ``bracket.report.export`` and its script, or why it could not be
    command: list[str] = field(default_factory=list)
    script: Path | None = None
    command_note: str = ""
    #: standings warnings, e.g. an unrated winner
    warnings: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list, repr=False)
    #: sample files that could not be decoded (left out of the pictures)
    unreadable: list[str] = field(default_factory=list)
    #: per search config (best first): name, best step, what it rests on, the loss that scores per step
    best_steps: list[list[str]] = field(default_factory=list)
    #: the loss the loss judge scored the search runs on ("validation", "training")
    loss_basis: str = ""
    #: successive halving: the rungs' plan and one row per config (``RUNG_HEADERS``); "" and [] without
    rung_plan: str = ""
    rungs: list[list[str]] = field(default_factory=list)
    image_steps: list[list[str]] = field(default_factory=list)  #: ``bracket.report.image_table.image_rows``
    judge_sections: list[tuple[str, list[Block]]] = field(default_factory=list)  #: ``bracket.report.judges``

    @property
    def verdict(self) -> str:
        """The verdict of the stage the winner comes from (the finals' once they are scored)."""
        if self.finals is not None and self.winner is not None and self.winner.stage == "final":
            return self.finals.verdict
        return self.search.verdict


# -- gathering ------------------------------------------------------------------------------
def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if math.isfinite(value) else str(value)
    return str(value)


def _stage(table: Standings, stage: str, runs: list[dict[str, Any]]) -> StageResult:
    board = table.board(stage)
    if board is None:
        board = StageBoard(stage, [], summarise([]), verdict(summarise([])))
    members = {r.run_id: r for row in board.rows for r in row.runs}
    return StageResult(stage, board.rows, board.stats, board.verdict, [r for r in runs if r["id"] in members],
                       {i: r for i, r in members.items() if r.score is not None or r.disqualified})


def _drawn(result: StageResult) -> list[dict[str, Any]]:
    """The runs of ``result`` its loss chart draws (``report_charts.chart_runs``)."""
    return chart_runs(result.runs, {i: s.score for i, s in result.scores.items()})


def _with_chart_series(store: Any, results: list[StageResult | None]) -> None:
    """Read the loss series of the runs the loss charts draw (only those: at 2000 runs reading
    every series costs seconds) into their run records."""
    drawn = [run for result in results if result is not None for run in _drawn(result)]
    series = store.series([r["id"] for r in drawn])
    for run in drawn:
        run.update(series.get(run["id"], {}))


def build_report(session: "Session", export_root: Path | None = None) -> Report:
    """Everything the report shows, read from the session's store now."""
    store, name = session.store, session.name
    ratings, comparisons = store.ratings(name), store.comparisons(name)
    table = standings(session)
    runs = [r for r in store.runs(name, with_series=False) if r.get("stage") != "setup" and r.get("kind") != "setup"]
    search = _stage(table, "search", runs)
    finals = _stage(table, "final", runs) if table.board("final") else None
    _with_chart_series(store, [search, finals])
    winner = table.winner
    command, script, command_note = [], None, ""
    if winner is not None:
        try:
            out = export_root / f"run-{winner.run_id}" if export_root is not None else None  # report --out
            exported = export_run(session, run_id=winner.run_id, steps=winner.step or winner.steps, out=out)
            command, script = exported.command, exported.script
        except Exception as error:  # noqa: BLE001 - e.g. trainer paths of another machine; the report goes on
            command_note = f"The command could not be rebuilt here ({type(error).__name__}: {error})."
    importance, importance_note = standings_importance(session, table)
    every = {**search.scores, **(finals.scores if finals else {})}
    problems = []
    for run in store.runs(name, with_series=False):
        standing = every.get(run["id"])
        if run["status"] in PROBLEM_STATUSES or (standing is not None and standing.disqualified):
            reason = run.get("failure_reason") or run["status"]
            problems.append([str(run["id"]), run.get("label") or run["kind"], run.get("stage") or "", run["status"],
                             reason])
    training = search.runs + (finals.runs if finals else [])
    judges = []
    for judge, weight in effective_weights(session.settings.weights).items():
        parts = [p for s in every.values() for p in s.parts if p.judge == judge]
        measured = sum(1 for p in parts if p.value is not None and not p.estimated)
        estimated = sum(1 for p in parts if p.estimated)
        used = sum(1 for p in parts if p.weight > 0)
        judges.append([judge, _fmt(float(weight)), f"{measured} of {len(training)}", str(estimated), str(used)])
    search_board = table.board("search")
    ranked = [r for r in (search_board.rows if search_board else []) if r.rank is not None]
    best_steps = [[r.name, str(r.best_step or "-"), r.best_step_basis or "-", _step_losses(r)] for r in ranked]
    loss_basis = "/".join(sorted({r.loss_basis for r in ranked if r.loss_basis}))
    row = store.get_session(name) or {}
    unreadable: list[str] = []
    judged, judge_pictures = judge_sections(table)
    pictures = report_pictures(search, finals, winner, unreadable, rank_history(table)) + judge_pictures
    rung_plan, rungs = session_rung_table(session)
    return Report(
        name=name, folder=str(session.folder), preset_id=session.parts.preset.id, status=str(row.get("status", "")),
        plan=session.plan_text(), generated=time.strftime("%Y-%m-%d %H:%M:%S"),
        storage=redact_url(store.url), search=search, finals=finals, winner=winner, importance=importance,
        importance_note=importance_note, pictures=pictures, problems=problems, unreadable=unreadable,
        judges=judges, ratings=len(ratings), comparisons=len(comparisons),
        settings=without_secrets({**session.settings.to_dict(),
                                  "weights": effective_weights(session.settings.weights)}),
        fields=without_secrets(dict(session.parts.fields)), notes=list(row.get("notes") or []), command=command,
        script=script, command_note=command_note, warnings=list(table.warnings), secrets=known_secrets(session),
        best_steps=best_steps, loss_basis=loss_basis, rung_plan=rung_plan, rungs=rungs,
        image_steps=image_rows(ranked), judge_sections=judged)


def report_pictures(search: StageResult, finals: StageResult | None, winner: Winner | None,
                    unreadable: list[str] | None = None, history: list[dict[str, Any]] | None = None
                    ) -> list[Picture]:
    """The report's pictures, drawn by :mod:`bracket.report.charts` from plain data: loss curves
    per stage, the rank history (``history``: :func:`bracket.standings.history.rank_history`), best
    and worst sample grids (samples that cannot be decoded are skipped and appended to ``unreadable``)."""
    pictures: list[Picture] = []
    names = {r.config_id: r.name for r in search.rows}
    for result, stem, title in ((search, "report-loss", "Loss curves (search runs)"),
                                (finals, "report-final-loss", "Loss curves (final runs)")):
        if result is None:
            continue
        names.update({r.config_id: r.name for r in result.rows})
        series = [{"label": r["label"], "group": names.get(r["config_id"], r["label"]), "points": r.get("loss") or [],
                   "highlight": winner is not None and winner.stage == result.stage
                   and names.get(r["config_id"]) == winner.config_name} for r in _drawn(result)]
        if len(series) < len(result.runs):
            title += f": the {len(series)} best of {len(result.runs)} runs"
        if (png := loss_chart(series, title)) is not None:
            pictures.append(Picture(stem, title, png))
    if (png := history_chart(history or [])) is not None:
        pictures.append(Picture("report-history", "Rank of each config (1 = best) in the order tried, and the best "
                                                  "so far", png))
    scored = sorted((r for r in search.runs if r["id"] in search.scores and search.scores[r["id"]].score is not None
                     and r.get("samples")), key=lambda r: (search.scores[r["id"]].score, r["id"]))
    picks = [("report-best-samples", "Best run", scored[0])] if scored else []
    if len(scored) > 1:
        picks.append(("report-worst-samples", "Worst run", scored[-1]))
    for stem, word, run in picks:
        line = search.scores[run["id"]].headline
        caption = f"{word}: run {run['id']} ({run['label']})" + (f": {line.text}" if line is not None else "")
        tiles = []
        for sample in final_step_samples(run["samples"]):
            if image_problem(sample["path"]) is None:
                tiles.append(sample)
            elif unreadable is not None:
                unreadable.append(str(sample["path"]))
        if (png := sample_grid(tiles, caption)) is not None:
            pictures.append(Picture(stem, caption, png))
    return pictures


# -- layout: sections of blocks, rendered as markdown and as HTML by bracket.report.render -------


def _headline(row: ConfigRow) -> str:
    """The row's headline (``bracket.standings.headline``), as the app and ``status`` show it."""
    if row.mean is None or row.headline is None:
        return "no score"
    return row.headline.text


def _board(result: StageResult, *, with_verdict: bool = True) -> list[Block]:
    headers = ["rank", "kind", "config", "headline", "raw figures", "scored / runs", "ratings", "key params"]
    rows = [[str(r.rank or "-"), r.kind, r.name, _headline(r), r.raw_text or "-", f"{r.seeds} / {len(r.runs)}",
             str(r.ratings), ", ".join(f"{k}={_fmt(v)}" for k, v in r.params.items())] for r in result.rows]
    blocks: list[Block] = ([("quote", result.verdict)] if with_verdict else []) + [("table", headers, rows)]
    blocks += [("p", f"Note: {note}.") for note in result.stats.notes]
    if any(r.estimated for r in result.rows):
        blocks.append(("p", "Parts marked 'estimated' were predicted for runs that judge has not seen "
                            "(see docs/SCORING.md)."))
    return blocks


def _step_losses(row: Any) -> str:
    """A config's loss that scores at each sampled step (the mean over its seeds, one scale for every config,
    as the app's chart draws it; ``step_scores`` are rescaled per config), its best step starred."""
    cells = [f"{step}: {loss:.4g}" + (" ★" if step == row.best_step else "")
             for step, loss in sorted(row.step_loss.items())]
    return ", ".join(cells) or "no loss per step"


def _winner_blocks(report: Report) -> list[Block]:
    winner = report.winner
    if winner is None:
        return [("p", "No config has a finished score yet.")]
    seeds = ", ".join(str(s) for s in winner.seeds) or "-"
    line = winner.headline.text if winner.headline else "not scored yet"
    blocks: list[Block] = [("p", f"Config {winner.config_name!r} ({winner.kind}, {winner.stage} stage): "
                                 f"{line} ({figures_text(winner.figures) or 'no raw figure'}); "
                                 f"{'full-length run' if report.rungs and winner.full_length else 'best run'} "
                                 f"{winner.run_id}, {winner.steps} steps"
                                 + (f", best step {winner.step} (by {winner.step_basis})" if winner.step else "")
                                 + f", seeds {seeds}; scored by "
                                 f"{', '.join(winner.judges) or 'no judge'}"
                                 + (f" (estimated: {', '.join(winner.estimated)})" if winner.estimated else "")
                                 + f"; {'rated' if winner.rated else 'not rated'}.")]
    blocks += [("quote", f"Warning: {w}.") for w in report.warnings]
    blocks.append(("table", ["parameter", "value"], [[k, _fmt(v)] for k, v in winner.params.items()]))
    if report.command:
        blocks.append(("code", shlex.join(report.command)))
        blocks.append(("p", f"Ready-to-run script: {report.script}. For a full-length run: "
                            f"python -m bracket export {shlex.quote(report.folder)} --steps N."))
    if report.command_note:
        blocks.append(("p", report.command_note))
    return blocks


def sections(report: Report) -> list[tuple[str, list[Block]]]:
    """The report's sections, in order, as (title, blocks)."""
    pictures = {p.stem: p for p in report.pictures}
    finals: list[Block] = _board(report.finals) if report.finals else [
        ("p", "No final runs yet. Finals are longer runs of the best configs; they are scored on their own.")]
    importance: list[Block] = [("p", report.importance_note)] if report.importance_note else []
    if report.importance:
        importance.append(("table", ["parameter", "importance"],
                           [[k, f"{v:.3f}"] for k, v in report.importance.items()]))
    samples: list[Block] = [("img", pictures[s]) for s in ("report-best-samples", "report-worst-samples")
                            if s in pictures]
    if report.unreadable:
        samples.append(("p", "Unreadable sample files (left out): " + ", ".join(report.unreadable) + "."))
    settings_rows = [[k, _fmt(v)] for k, v in report.settings.items() if k != "sample_prompts"]
    settings_rows += [[f"field {k}", v] for k, v in report.fields.items()] + [["storage", report.storage]]
    verdict_blocks: list[Block] = [("quote", report.verdict)]
    if report.finals and report.verdict != report.finals.verdict:
        verdict_blocks.append(("quote", f"Finals: {report.finals.verdict}"))
    elif report.finals:
        verdict_blocks.append(("quote", f"Search (short runs): {report.search.verdict}"))
    verdict_blocks += [("quote", f"Warning: {w}.") for w in report.warnings]
    verdict_blocks += [("p", f"Note: {n}") for n in report.notes]
    return [
        ("Verdict", verdict_blocks),
        ("Leaderboard (search runs)", _board(report.search, with_verdict=False)),
        *([("Rungs (successive halving)", [("p", f"The {report.rung_plan}; the answer is a full-length run."),
                                           ("table", RUNG_HEADERS, report.rungs)])] if report.rungs else []),
        ("Finals (long runs, scored separately)", finals),
        ("Winner", _winner_blocks(report)),
        ("Best step per config (the loss that scores at each sampled step, lower is better; ★ best step)",
         [("table", ["config", "best step", "based on", "loss per step"], report.best_steps)] if report.best_steps
         else [("p", "No config has a best step yet.")]),
        *image_section(report.image_steps),
        *report.judge_sections,
        ("Parameter importance", importance),
        ("Loss curves", [("img", pictures[s]) for s in ("report-loss", "report-final-loss") if s in pictures]
         or [("p", "No loss was logged.")]),
        ("Score history", [("img", pictures["report-history"])] if "report-history" in pictures
         else [("p", "No run has a score yet.")]),
        ("Samples: best and worst run", samples or [("p", "No image samples to show.")]),
        ("Failed, disqualified and pruned runs", [("table", ["run", "label", "stage", "status", "reason"],
                                                   report.problems)] if report.problems else [("p", "None.")]),
        ("Judges and weights", [("table", ["judge", "weight", "runs it scored", "runs estimated", "runs where used"],
                                 report.judges),
                                ("p", f"{report.ratings} human rating(s), {report.comparisons} comparison(s)."),
                                ("p", f"The loss judge scored the search runs on the {report.loss_basis or 'training'} "
                                      "loss" + (" (held-out validation split)." if report.loss_basis == "validation"
                                                else "; no validation loss was logged."))]),
        ("Settings", [("table", ["setting", "value"], settings_rows),
                      ("code", str(report.settings.get("sample_prompts") or ""))]),
    ]


def _intro(report: Report) -> str:
    return f"Preset {report.preset_id}; status {report.status}; {report.plan}. Generated {report.generated}."


def render_markdown(report: Report) -> str:
    """Markdown; pictures are referenced as ``<stem>.png`` beside the file."""
    return shown(scrub(report_render.markdown(f"Bracket report: {report.name}", _intro(report), sections(report)),
                       report.secrets))  # a trainer's escape sequences land escaped, not raw


def render_html(report: Report) -> str:
    """One self-contained HTML page; pictures are embedded as base64 PNG data URLs."""
    return shown(scrub(report_render.html(f"Bracket report: {report.name}", _intro(report), sections(report)),
                       report.secrets))
