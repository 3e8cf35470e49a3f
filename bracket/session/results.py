"""What the Results tab shows, as plain data: leaderboard, winner export, importance, history.

* :func:`leaderboard` — one row per config: mean combined score over its seeds with a
  confidence interval (:mod:`bracket.stats`), seeds, human ratings and comparisons counted;
* :func:`export_winner` — the best config as a ready-to-run trainer command (the winner
  run's ``command.json`` when the session wrote one, else the adapter's ``prepare_run``
  re-created in ``<session>/export/``, so every file the command names exists) and as
  JSON/TOML files beside it;
* :func:`param_importance` — Optuna's parameter importances of the session's study;
* :func:`score_history` — combined score per config in trial order, and the best so far;
* :func:`report_markdown` — ``bracket.report``'s markdown report, written into the session folder.
"""

from __future__ import annotations

import importlib
import math
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any


from bracket.stats import ConfigScores, StatsReport, summarise, verdict
from bracket.session.store import redact_url

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.session import Session
    from bracket.session.snapshot import SessionSnapshot

EXPORT_FOLDER = "export"
REPORT_FOLDER = "report"


@dataclass
class LeaderboardRow:
    rank: int | None
    config_id: int
    config_name: str
    kind: str
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    seeds: int
    ratings: int
    comparisons: int
    params: dict[str, Any]
    run_ids: list[int]
    #: the config's best step (``bracket.session.best_step``) and what it rests on
    best_step: int | None = None
    best_step_basis: str = ""
    #: "validation" or "training": the loss the loss judge scored this config's runs on
    loss_basis: str = ""


def leaderboard(snapshot: "SessionSnapshot", ratings: Sequence[Mapping[str, Any]] = (),
                comparisons: Sequence[Mapping[str, Any]] = (), curves: Mapping[int, Any] | None = None
                ) -> tuple[list[LeaderboardRow], StatsReport]:
    """Rows best first (lower score is better), then the configs without a score; ``curves``
    (config id -> ``StepCurve``) fills in each config's best step."""
    per_config: dict[int, list[dict[str, Any]]] = {}
    for run in snapshot.runs:
        if run.get("config_id") is not None and run.get("kind") != "setup":
            per_config.setdefault(run["config_id"], []).append(run)
    configs = {c["id"]: c for c in snapshot.configs}
    items = []
    for config_id, runs in per_config.items():
        config = configs.get(config_id, {})
        items.append(ConfigScores(config_id, str(config.get("name") or runs[0].get("config_name", "")),
                                  str(config.get("kind") or runs[0].get("kind", "")), [r.get("score") for r in runs],
                                  sum(1 for r in runs if r.get("disqualified"))))
    report = summarise(items)
    rating_count: dict[int, int] = {}
    for rating in ratings:
        rating_count[rating["run_id"]] = rating_count.get(rating["run_id"], 0) + 1
    comparison_count: dict[int, int] = {}
    for comparison in comparisons:
        for key in ("left_run_id", "right_run_id"):
            comparison_count[comparison[key]] = comparison_count.get(comparison[key], 0) + 1
    rows = []
    rank = 0
    for summary in report.summaries:
        runs = per_config.get(summary.config_id, [])
        ids = [r["id"] for r in runs]
        rank += 1 if summary.n else 0
        curve = (curves or {}).get(summary.config_id)
        bases = {r.get("loss_basis") for r in runs if r.get("loss_basis")}
        rows.append(LeaderboardRow(
            rank if summary.n else None, summary.config_id, summary.name, summary.kind, summary.mean,
            summary.ci_low, summary.ci_high, summary.n, sum(rating_count.get(i, 0) for i in ids),
            sum(comparison_count.get(i, 0) for i in ids), dict(runs[0].get("params") or {}) if runs else {}, ids,
            curve.best_step if curve else None, curve.basis if curve else "", "/".join(sorted(bases))))
    return rows, report


def winner_verdict(report: StatsReport) -> str:
    return verdict(report)


@dataclass
class WinnerExport:
    config_name: str
    run_id: int
    command: list[str]
    command_text: str
    json_path: Path
    toml_path: Path


def _best_run(snapshot: "SessionSnapshot", config_id: int) -> dict[str, Any] | None:
    runs = [r for r in snapshot.runs if r.get("config_id") == config_id and r.get("score") is not None]
    return min(runs, key=lambda r: r["score"]) if runs else None


def export_winner(session: "Session", snapshot: "SessionSnapshot", rows: Sequence[LeaderboardRow]
                  ) -> WinnerExport | None:
    """The best-ranked config's command and its JSON/TOML files (None when nothing is ranked).

    The same export as ``python -m bracket export`` (``bracket.export.export_run``).
    """
    from bracket.export import export_run

    best = next((row for row in rows if row.rank == 1), None)
    run = _best_run(snapshot, best.config_id) if best else None
    if best is None or run is None:
        return None
    result = export_run(session, run_id=run["id"], steps=best.best_step or session.settings.steps)
    return WinnerExport(best.config_name, run["id"], result.command, shlex.join(result.command),
                        result.json_path, result.toml_path)


def _plain(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if v is not None and not (isinstance(v, float) and not math.isfinite(v))}


def param_importance(session: "Session") -> tuple[dict[str, float], str]:
    """(importance per searched parameter, message) from the session's Optuna study."""
    import optuna

    try:
        study = session.store.study(session.name)
        complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
        if len(complete) < 2:
            return {}, "Parameter importance needs at least 2 finished configs."
        return dict(optuna.importance.get_param_importances(study)), ""
    except (RuntimeError, ValueError) as error:
        return {}, f"Parameter importance is not available yet ({error})."


def score_history(snapshot: "SessionSnapshot") -> list[dict[str, Any]]:
    """Per scored config in trial order: its mean score and the best mean so far."""
    values: dict[int, list[float]] = {}
    for run in snapshot.runs:
        if run.get("config_id") is not None and run.get("score") is not None:
            values.setdefault(run["config_id"], []).append(float(run["score"]))
    history, best = [], math.inf
    for config in snapshot.configs:
        scores = values.get(config["id"])
        if not scores:
            continue
        mean = sum(scores) / len(scores)
        best = min(best, mean)
        history.append({"trial": config.get("trial_number"), "config": config.get("name"), "kind": config.get("kind"),
                        "score": mean, "best": best})
    return history


def report_markdown(session: "Session", image_url: Callable[[Path], str] | None = None) -> str | None:
    """The session report of ``bracket.report`` (written to ``<session>/report/``), None without it.

    ``image_url`` turns each picture's path into the link the markdown should use (the UI
    gives a served URL); by default the links stay relative to the report file.
    """
    try:
        report = importlib.import_module("bracket.report")
    except ImportError:
        return None
    write = getattr(report, "write_report", None)
    if not callable(write):
        return None
    files = write(session, session.folder / REPORT_FOLDER)
    text = Path(files.markdown).read_text(encoding="utf-8")
    if image_url is not None:
        for image in files.images:
            text = text.replace(f"]({Path(image).name})", f"]({image_url(Path(image))})")
    return text


def dashboard_command(session: "Session") -> str:
    """The shell command that opens this session's study in optuna-dashboard."""
    return shlex.join(["optuna-dashboard", redact_url(session.store.url)])
