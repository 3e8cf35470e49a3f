"""The session report: what was found, how sure that is, and how to run the winner.

``python -m bracket report PATH`` and the Results tab both call :func:`write_report`, which
gathers everything from the session's store into a :class:`Report` (plain data), lays it out
as a list of sections made of simple blocks (paragraphs, tables, code, pictures), and renders
those twice: ``report.md`` (pictures saved beside it as PNG files) and ``report.html`` (one
self-contained file, pictures embedded as base64 ``data:`` URLs, no external links).

Scores are those of :mod:`bracket.session.scoring`, recomputed now, per stage: short search
runs and long final runs are scored and summarised separately (their losses are not
comparable), and finals get their own section — never averaged with search scores. Nothing
secret is written: settings come from ``SearchSettings.to_dict()`` (no VLM key), URLs are
shown through ``redact_url``, and known secret values are scrubbed from the text as a last guard.
"""

from __future__ import annotations

import base64
import html
import math
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bracket import settings as app_settings
from bracket.export import SECRET_NAME, export_run, staged_scores
from bracket.report_charts import Picture, report_pictures
from bracket.session.scoring import RunScore, effective_weights
from bracket.session.store import redact_url
from bracket.stats import ConfigScores, StatsReport, summarise, verdict

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.session import Session

PROBLEM_STATUSES = ("failed", "disqualified", "pruned", "interrupted")


@dataclass
class LeaderRow:
    rank: int | None
    config_id: int
    name: str
    kind: str
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    scored: int
    runs: int
    ratings: int
    params: dict[str, Any]


@dataclass
class StageResult:
    """One stage ("search" or "final"): its leaderboard, statistics and verdict sentence."""

    stage: str
    rows: list[LeaderRow]
    stats: StatsReport
    verdict: str
    runs: list[dict[str, Any]]
    scores: dict[int, RunScore]


@dataclass
class Winner:
    stage: str
    config_name: str
    kind: str
    run_id: int
    seed: int | None
    mean: float | None
    params: dict[str, Any]
    command: list[str] = field(default_factory=list)
    script: Path | None = None
    note: str = ""


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
    secrets: list[str] = field(default_factory=list, repr=False)
    #: per search config (best first): name, best step, what it rests on, score per step
    best_steps: list[list[str]] = field(default_factory=list)
    #: the loss the loss judge scored the search runs on ("validation", "training")
    loss_basis: str = ""

    @property
    def verdict(self) -> str:
        return self.search.verdict


@dataclass
class ReportFiles:
    markdown: Path
    html: Path
    images: list[Path]
    report: Report


# -- gathering ------------------------------------------------------------------------------
def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if math.isfinite(value) else str(value)
    return str(value)


def _stage(session: "Session", stage: str, runs: list[dict[str, Any]], scores: dict[int, RunScore],
           ratings: Sequence[Mapping[str, Any]]) -> StageResult:
    configs = [c for c in session.store.configs(session.name) if (c.get("stage") or "search") == stage]
    by_config = {c["id"]: [r for r in runs if r["config_id"] == c["id"]] for c in configs}
    values = {cid: [scores[r["id"]].value for r in rs if r["id"] in scores] for cid, rs in by_config.items()}
    disqualified = {cid: sum(1 for r in rs if r["id"] in scores and scores[r["id"]].disqualified)
                    for cid, rs in by_config.items()}
    stats = summarise(ConfigScores(c["id"], str(c["name"]), str(c["kind"]), values[c["id"]], disqualified[c["id"]])
                      for c in configs)
    rated: dict[int, int] = {}
    for rating in ratings:
        rated[rating["run_id"]] = rated.get(rating["run_id"], 0) + 1
    params = {c["id"]: c.get("params") or {} for c in configs}
    rows, rank = [], 0
    for s in stats.summaries:
        rank += 1 if s.n else 0
        try:
            key = session.space.searched_params(params[s.config_id]) or params[s.config_id]
        except Exception:  # noqa: BLE001 - a config from an older space shows all its params
            key = params[s.config_id]
        rows.append(LeaderRow(rank if s.n else None, s.config_id, s.name, s.kind, s.mean, s.ci_low, s.ci_high,
                              s.n, len(by_config[s.config_id]),
                              sum(rated.get(r["id"], 0) for r in by_config[s.config_id]), dict(key)))
    return StageResult(stage, rows, stats, verdict(stats), runs, scores)


def _winner(session: "Session", result: StageResult) -> Winner | None:
    best = result.stats.best
    if best is None:
        return None
    runs = [r for r in result.runs if r["config_id"] == best.config_id and r["id"] in result.scores
            and result.scores[r["id"]].value is not None]
    run = min(runs, key=lambda r: (r["status"] != "done", result.scores[r["id"]].value, r["id"]))
    winner = Winner(result.stage, best.name, best.kind, run["id"], run.get("seed"), best.mean,
                    dict(run.get("params") or {}))
    try:
        exported = export_run(session, run_id=run["id"])
        winner.command, winner.script = exported.command, exported.script
    except Exception as error:  # noqa: BLE001 - e.g. trainer paths of another machine; the report goes on
        winner.note = f"The command could not be rebuilt here ({type(error).__name__}: {error})."
    return winner


def _importance(session: "Session") -> tuple[dict[str, float], str]:
    import optuna

    try:
        study = session.store.study(session.name)
        complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
        if len(complete) < 2:
            return {}, f"Parameter importance needs at least 2 finished configs; this study has {len(complete)}."
        note = "fANOVA importance (optuna.importance), over the search configs."
        try:
            evaluator = optuna.importance.FanovaImportanceEvaluator(seed=0)
            importance = optuna.importance.get_param_importances(study, evaluator=evaluator)
        except ImportError:  # fANOVA needs scikit-learn; PED-ANOVA needs only scipy
            evaluator = optuna.importance.PedAnovaImportanceEvaluator()
            importance = optuna.importance.get_param_importances(study, evaluator=evaluator)
            note = "PED-ANOVA importance (optuna.importance; install scikit-learn for fANOVA)."
        if not importance:
            return {}, "No searched parameter varied between the finished configs."
        return {k: float(v) for k, v in importance.items()}, note
    except Exception as error:  # noqa: BLE001 - optuna raises several kinds; the report goes on
        return {}, f"Parameter importance is not available ({type(error).__name__}: {error})."


def _safe(value: Any) -> Any:
    """``value`` without secret-named keys and with passwords hidden in URLs."""
    if isinstance(value, Mapping):
        return {k: _safe(v) for k, v in value.items() if not SECRET_NAME.search(str(k))}
    if isinstance(value, (list, tuple)):
        return [_safe(v) for v in value]
    if isinstance(value, str) and "://" in value and "@" in value:
        return redact_url(value)
    return value


def _secret_values(session: "Session") -> list[str]:
    import sqlalchemy as sa

    found = [str(session.settings.vlm.get("api_key") or ""), app_settings.env("BRACKET_VLM_API_KEY")]
    for url in (session.store.url, app_settings.env("BRACKET_STORAGE_URL")):
        try:
            found.append(str(sa.engine.make_url(url).password or "") if url else "")
        except Exception:  # noqa: BLE001 - an unparsable URL has no password we can find
            pass
    return sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)


def build_report(session: "Session") -> Report:
    """Everything the report shows, read from the session's store now."""
    store, name = session.store, session.name
    ratings, comparisons = store.ratings(name), store.comparisons(name)
    stages = staged_scores(session)
    search = _stage(session, "search", *stages.get("search", ([], {})), ratings)
    finals = _stage(session, "final", *stages["final"], ratings) if "final" in stages else None
    if finals is None and store.configs(name, stage="final"):
        finals = _stage(session, "final", [], {}, ratings)
    winner = _winner(session, finals) if finals and finals.stats.best else _winner(session, search)
    if winner is not None and winner.stage == "search" and winner.command:
        from bracket.export import winner_best_step

        best, basis = winner_best_step(session, store.get_run(winner.run_id) or {})
        if best and best != session.settings.steps:
            winner.note = (winner.note + " " if winner.note else "") + (
                f"Best step {best} (by {basis}); `python -m bracket export` writes the winner at that step.")
    importance, importance_note = _importance(session)
    all_scores = {**search.scores, **(finals.scores if finals else {})}
    problems = []
    for run in store.runs(name, with_series=False):
        score = all_scores.get(run["id"])
        if run["status"] in PROBLEM_STATUSES or (score is not None and score.disqualified):
            reason = run.get("failure_reason") or (score.reason if score else "") or run["status"]
            problems.append([str(run["id"]), run.get("label") or run["kind"], run.get("stage") or "", run["status"],
                             reason])
    training = search.runs + (finals.runs if finals else [])
    judges = []
    for judge, weight in effective_weights(session.settings.weights).items():
        with_score = sum(1 for s in all_scores.values() if s.judges.get(judge) is not None)
        used = sum(1 for s in all_scores.values() if judge in s.used)
        judges.append([judge, _fmt(float(weight)), f"{with_score} of {len(training)}", str(used)])
    from bracket.session.best_step import session_step_curves

    curves = session_step_curves(session)
    best_steps = []
    for leader in search.rows:
        curve = curves.get(leader.config_id)
        if leader.rank is None or curve is None:
            continue
        shape = ", ".join(f"{s}: {v:.2f}" for s, v in zip(curve.steps, curve.scores)) or "no per-step evidence"
        best_steps.append([leader.name, str(curve.best_step or "-"), curve.basis, shape])
    bases = {(s.details.get("loss") or {}).get("basis") for s in search.scores.values()} - {None}
    row = store.get_session(name) or {}
    return Report(
        name=name, folder=str(session.folder), preset_id=session.parts.preset.id, status=str(row.get("status", "")),
        plan=session.settings.plan(), generated=time.strftime("%Y-%m-%d %H:%M:%S"),
        storage=redact_url(store.url), search=search, finals=finals, winner=winner, importance=importance,
        importance_note=importance_note, pictures=report_pictures(search, finals, winner), problems=problems,
        judges=judges, ratings=len(ratings), comparisons=len(comparisons),
        settings=_safe({**session.settings.to_dict(), "weights": effective_weights(session.settings.weights)}),
        fields=_safe(dict(session.parts.fields)),
        notes=list(row.get("notes") or []), secrets=_secret_values(session), best_steps=best_steps,
        loss_basis="/".join(sorted(bases)))


# -- layout: sections of blocks, rendered as markdown and as HTML -----------------------------
Block = tuple  # ("p", text) | ("quote", text) | ("code", text) | ("table", headers, rows) | ("img", Picture)


def _ci(row: LeaderRow) -> str:
    if row.mean is None:
        return "no score"
    if row.ci_low is None or row.ci_high is None:
        return f"{row.mean:.3f} (one seed, no CI)"
    return f"{row.mean:.3f} ± {(row.ci_high - row.ci_low) / 2:.3f}"


def _board(result: StageResult, *, with_verdict: bool = True) -> list[Block]:
    headers = ["rank", "kind", "config", "mean score ± 95% CI", "scored / runs", "ratings", "key params"]
    rows = [[str(r.rank or "-"), r.kind, r.name, _ci(r), f"{r.scored} / {r.runs}", str(r.ratings),
             ", ".join(f"{k}={_fmt(v)}" for k, v in r.params.items())] for r in result.rows]
    blocks: list[Block] = ([("quote", result.verdict)] if with_verdict else []) + [("table", headers, rows)]
    blocks += [("p", f"Note: {note}.") for note in result.stats.notes]
    return blocks


def sections(report: Report) -> list[tuple[str, list[Block]]]:
    """The report's sections, in order, as (title, blocks)."""
    pictures = {p.stem: p for p in report.pictures}
    winner = report.winner
    if winner is None:
        winner_blocks: list[Block] = [("p", "No config has a finished score yet.")]
    else:
        winner_blocks = [("p", f"Config {winner.config_name!r} ({winner.kind}, {winner.stage} stage), mean score "
                               f"{winner.mean:.3f}; best run {winner.run_id} (seed {winner.seed}).")]
        winner_blocks.append(("table", ["parameter", "value"], [[k, _fmt(v)] for k, v in winner.params.items()]))
        if winner.command:
            winner_blocks.append(("code", shlex.join(winner.command)))
            winner_blocks.append(("p", f"Ready-to-run script: {winner.script}. For a full-length run: "
                                       f"python -m bracket export {shlex.quote(report.folder)} --steps N."))
        if winner.note:
            winner_blocks.append(("p", winner.note))
    finals: list[Block] = _board(report.finals) if report.finals else [
        ("p", "No final runs yet. Finals are longer runs of the best configs; they are scored on their own.")]
    importance: list[Block] = [("p", report.importance_note)] if report.importance_note else []
    if report.importance:
        importance.append(("table", ["parameter", "importance"], [[k, f"{v:.3f}"] for k, v in report.importance.items()]))
    samples = [("img", pictures[s]) for s in ("report-best-samples", "report-worst-samples") if s in pictures]
    settings_rows = [[k, _fmt(v)] for k, v in report.settings.items() if k != "sample_prompts"]
    settings_rows += [[f"field {k}", v] for k, v in report.fields.items()] + [["storage", report.storage]]
    return [
        ("Verdict", [("quote", report.verdict)] + ([("quote", f"Finals: {report.finals.verdict}")] if report.finals
                                                   else []) + [("p", f"Note: {n}") for n in report.notes]),
        ("Leaderboard (search runs)", _board(report.search, with_verdict=False)),
        ("Finals (long runs, scored separately)", finals),
        ("Winner", winner_blocks),
        ("Best step per config (score per step, lower is better)",
         [("table", ["config", "best step", "based on", "score per step"], report.best_steps)] if report.best_steps
         else [("p", "No config has a score per step yet.")]),
        ("Parameter importance", importance),
        ("Loss curves", [("img", pictures[s]) for s in ("report-loss", "report-final-loss") if s in pictures]
         or [("p", "No loss was logged.")]),
        ("Score history", [("img", pictures["report-history"])] if "report-history" in pictures
         else [("p", "No run has a score yet.")]),
        ("Samples: best and worst run", samples or [("p", "No image samples to show.")]),
        ("Failed, disqualified and pruned runs", [("table", ["run", "label", "stage", "status", "reason"],
                                                   report.problems)] if report.problems else [("p", "None.")]),
        ("Judges and weights", [("table", ["judge", "weight", "runs with a score", "runs where used"], report.judges),
                                ("p", f"{report.ratings} human rating(s), {report.comparisons} comparison(s)."),
                                ("p", f"The loss judge scored the search runs on the {report.loss_basis or 'training'} "
                                      "loss" + (" (held-out validation split)." if report.loss_basis == "validation"
                                                else "; no validation loss was logged."))]),
        ("Settings", [("table", ["setting", "value"], settings_rows),
                      ("code", str(report.settings.get("sample_prompts") or ""))]),
    ]


def _scrub(text: str, report: Report) -> str:
    for secret in report.secrets:
        text = text.replace(secret, "***")
    return text


def render_markdown(report: Report) -> str:
    """Markdown; pictures are referenced as ``<stem>.png`` beside the file."""
    cell = lambda value: str(value).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    lines = [f"# Bracket report: {report.name}", "",
             f"Preset {report.preset_id}; status {report.status}; {report.plan}. Generated {report.generated}.", ""]
    for title, blocks in sections(report):
        lines += [f"## {title}", ""]
        for block in blocks:
            if block[0] == "p":
                lines += [block[1], ""]
            elif block[0] == "quote":
                lines += [f"> {block[1]}", ""]
            elif block[0] == "code":
                lines += ["```", block[1], "```", ""]
            elif block[0] == "img":
                lines += [f"![{cell(block[1].title)}]({block[1].stem}.png)", ""]
            elif block[0] == "table":
                lines += ["| " + " | ".join(cell(h) for h in block[1]) + " |", "|" + "---|" * len(block[1])]
                lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in block[2]] + [""]
    return _scrub("\n".join(lines), report)


_STYLE = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
          "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
          "text-align:left;font-size:14px}th{background:#f3f3f3}blockquote{border-left:4px solid #2ca02c;"
          "margin:0;padding:.3em 1em;background:#f6fbf6}pre{background:#f5f5f5;padding:.6em;"
          "white-space:pre-wrap;word-break:break-all}img{max-width:100%}")


def render_html(report: Report) -> str:
    """One self-contained HTML page; pictures are embedded as base64 PNG data URLs."""
    e = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>Bracket report: {e(report.name)}</title><style>{_STYLE}</style></head><body>",
             f"<h1>Bracket report: {e(report.name)}</h1>",
             f"<p>Preset {e(report.preset_id)}; status {e(report.status)}; {e(report.plan)}. "
             f"Generated {e(report.generated)}.</p>"]
    for title, blocks in sections(report):
        parts.append(f"<h2>{e(title)}</h2>")
        for block in blocks:
            if block[0] == "p":
                parts.append(f"<p>{e(block[1])}</p>")
            elif block[0] == "quote":
                parts.append(f"<blockquote>{e(block[1])}</blockquote>")
            elif block[0] == "code":
                parts.append(f"<pre><code>{e(block[1])}</code></pre>")
            elif block[0] == "img":
                data = base64.b64encode(block[1].png).decode("ascii")
                parts.append(f'<figure><img alt="{e(block[1].title)}" src="data:image/png;base64,{data}">'
                             f"<figcaption>{e(block[1].title)}</figcaption></figure>")
            elif block[0] == "table":
                head = "".join(f"<th>{e(str(h))}</th>" for h in block[1])
                body = "".join("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>" for row in block[2])
                parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    parts.append("</body></html>")
    return _scrub("\n".join(parts), report)


def write_report(session: "Session", folder: Path | None = None) -> ReportFiles:
    """Write report.md (with its PNGs beside it) and report.html into the session folder."""
    folder = Path(folder) if folder is not None else session.folder
    folder.mkdir(parents=True, exist_ok=True)
    report = build_report(session)
    images = []
    for picture in report.pictures:
        path = folder / f"{picture.stem}.png"
        path.write_bytes(picture.png)
        images.append(path)
    markdown, page = folder / "report.md", folder / "report.html"
    markdown.write_text(render_markdown(report), encoding="utf-8")
    page.write_text(render_html(report), encoding="utf-8")
    return ReportFiles(markdown, page, images, report)


def report_markdown(session: "Session") -> str:
    """Write the report files and return the markdown (what the Results tab shows)."""
    return write_report(session).markdown.read_text(encoding="utf-8")
