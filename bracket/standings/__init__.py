"""Standings: the one answer of a session — leaderboards per stage, the winner, importance.

Everything that ranks configs or names a winner calls this package: the Results tab and
the Compare labels (through ``SessionManager``), ``python -m bracket status`` (and its
``--json``), the report, ``export``, finals (their top-k) and promotion (``bracket.app.stages``).
So they all name the same run and config. It sits above the engine (``bracket.session``),
which never imports it: it reads a session's store and current scores.

* :func:`standings` — a :class:`Standings` read from the session's store now: one
  :class:`StageBoard` per stage (search, final, promote; each scored on its own scale, never
  mixed), the :class:`Winner` (finals first, then search; with its own step count and seeds,
  which judges scored it and whether it is rated) and warnings, e.g. an unrated winner;
* :func:`require_winner` — the winner, or a :class:`NoWinnerError` saying why there is none
  (nothing scored, or the best is disqualified) — what ``export`` and ``promote`` use;
* :func:`importance` — parameter importance of the search (one method, see ``importance``);
* score parts (:class:`ScorePart`): each judge's normalised value next to its raw figure
  (final smoothed loss, mean rating, pairwise strength), and whether it was estimated;
* :func:`with_judges` — the front of fidelity against flexibility (``Standings.front``,
  :mod:`bracket.standings.front`; the person's pick on it is the winner) and how far each
  automatic judge agrees with the person (``Standings.trust``, :mod:`bracket.standings.trust`),
  part of every :func:`standings`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bracket.errors import BracketError
from bracket.session.scoring import effective_weights
from bracket.session.scoring.best_step import sampled_steps, step_curves
from bracket.session.store.change_memo import peek, per_change, stored_rows
from bracket.standings.board import (
    STAGES,
    UNRATED_WINNER,
    StageBoard,
    Standings,
    Winner,
    build_standings,
)
from bracket.standings.front import apply_pick, build_front
from bracket.standings.importance import MIN_CONFIGS, parameter_importance
from bracket.standings.parts import ScorePart, figures_text, score_parts
from bracket.standings.rows import ConfigRow, RunStanding
from bracket.standings.rungs import session_rungs, uses_rungs
from bracket.standings.short_answer import short_answer
from bracket.standings.trust import judge_trust, run_goodness

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session import Session

__all__ = ["STAGES", "UNRATED_WINNER", "MIN_CONFIGS", "ConfigRow", "NoWinnerError", "RunStanding", "ScorePart",
           "StageBoard", "Standings", "Winner", "build_standings", "figures_text", "importance", "parameter_importance",
           "require_winner", "with_judges",
           "score_parts", "standings"]


class NoWinnerError(BracketError):
    """There is no usable winner: nothing is scored yet, or the best config's run is disqualified."""


def _searched(session: "Session"):
    def searched(params: dict) -> dict:
        try:
            return session.space.searched_params(params) or params
        except Exception:  # noqa: BLE001 - a config from an older space shows all its params
            return params
    return searched


def standings(session: "Session") -> Standings:
    """The session's standings, from its store and current scores (ratings included, as of now),
    with each config's best step (``bracket.session.scoring.best_step``). Computed once per store change
    in a process (``bracket.session.store.change_memo``): the report, its export and the app share it."""
    return per_change(session, "standings", lambda: _compute_standings(session))


def _compute_standings(session: "Session") -> Standings:
    store, name = session.store, session.name
    stored_runs, configs = stored_rows(session)  # shared with the snapshot and the scores of this change
    runs = [r for r in stored_runs if r.get("stage") != "setup" and r.get("kind") != "setup"]
    weights = effective_weights(session.settings.weights)
    ratings = store.ratings(name)
    with_series = _with_step_losses(session, runs)  # the series only of runs not summarised yet
    series = {r["id"]: {"loss": r["loss"], "eval_loss": r["eval_loss"]} for r in with_series if "loss" in r}
    curves = {stage: step_curves([r for r in with_series if r.get("stage") == stage], ratings, weights)
              for stage in ("search", "final")}
    scores = per_change(session, "scores",  # the session's scores (what ``Session.scores()`` keeps), series read once
                        lambda: session.scores([{**r, **series[r["id"]]} if r["id"] in series else r for r in runs]))
    session.scoreboard.save_summaries()
    comparisons = store.comparisons(name)
    table = build_standings(runs, configs, scores, ratings,
                            comparisons, human_weight=float(weights.get("human", 0.0)),
                            searched=_searched(session), curves=curves,
                            rungs=session_rungs(session.settings) if uses_rungs(session.settings, configs) else None)
    if table.winner is None or not table.winner.full_length:
        table.budget_short = short_answer(session, runs, configs)
        table.warnings += [table.budget_short] if table.budget_short else []
    return with_judges(table, runs, ratings, comparisons, weights, getattr(session.settings, "pick", None))


def with_judges(table: Standings, runs: list[dict], ratings: list[dict], comparisons: list[dict],
                weights: dict[str, float], pick: int | None) -> Standings:
    """``table`` with the front of fidelity against flexibility of the winner's stage (the
    person's ``pick`` on it the answer: ``bracket.standings.front``) and how far each automatic
    judge agrees with the person (``bracket.standings.trust``)."""
    by_id = {r["id"]: r for r in runs}
    board = table.board(table.winner.stage) if table.winner else None
    apply_pick(table, build_front(board, by_id, pick) if board is not None else None)
    goodness, stage = run_goodness(table, by_id)
    table.trust = judge_trust(goodness, ratings, comparisons, weights, stage)
    return table


def _with_step_losses(session: "Session", runs: list[dict]) -> list[dict]:
    """``runs`` as the best step needs them: each finished run with its loss series, or with the
    step losses its kept summary holds (``bracket.session.scoring.summaries``) at its config's steps."""
    kept = session.scoreboard.summaries
    step_losses = getattr(kept, "step_losses", None)
    steps: dict[Any, set[int]] = {}
    for run in runs:
        if run.get("status") == "done":
            steps.setdefault(run.get("config_id"), set()).update(sampled_steps(run))
    found = {r["id"]: losses for r in runs if r.get("status") == "done" and step_losses is not None
             and (losses := step_losses(r, sorted(steps[r.get("config_id")]))) is not None}
    series = session.store.series([r["id"] for r in runs if r.get("status") == "done" and r["id"] not in found])
    with_series = [{**r, **series[r["id"]]} if r["id"] in series else
                   {**r, "step_losses": found[r["id"]]} if r["id"] in found else r for r in runs]
    remember = getattr(kept, "remember", None)
    for run in with_series:
        if remember is not None and "loss" in run:
            remember(run)
    return with_series


def require_winner(session: "Session", table: Standings | None = None) -> Winner:
    """The winner of ``session``; raises :class:`NoWinnerError` when there is none to use."""
    table = table if table is not None else standings(session)
    winner = table.winner
    if table.budget_short:  # a halving search that ended with no config at full length
        answer = table.budget_short
        raise NoWinnerError(f"{answer[0].upper()}{answer[1:]}, or name another run with --run ID.")
    if winner is None:
        raise NoWinnerError("No run of this session has a score yet, so there is no winner; let the search "
                            "finish a run (python -m bracket resume PATH), or name one with --run ID.")
    if winner.disqualified and not winner.full_length and not winner.failed:
        raise NoWinnerError(f"No config has trained to full length yet: the best, {winner.config_name!r} (run "
                            f"{winner.run_id}), stands at a lower rung; let the search promote configs to full length "
                            "(python -m bracket resume PATH), or name a run with --run ID.")
    if winner.disqualified:
        raise NoWinnerError(f"The best config {winner.config_name!r} has no usable run (run {winner.run_id} was "
                            "disqualified or did not finish); check the failed runs in `python -m bracket status "
                            "PATH`, fix the cause and resume, or name a run with --run ID.")
    return winner


def importance(session: "Session", table: Standings | None = None) -> tuple[dict[str, float], str]:
    """Parameter importance over the search configs' current scores, and a note (with a warning
    below :data:`MIN_CONFIGS` configs)."""
    if table is not None and table is not peek(session, "standings"):
        board = table.board("search")  # a table of another moment: computed for it, not kept
        return parameter_importance(board.rows if board else [], session.space)

    def build() -> tuple[dict[str, float], str]:
        board = standings(session).board("search")
        return parameter_importance(board.rows if board else [], session.space)

    return per_change(session, "importance", build)
