"""How the UI words the judges' side of the answer: a point of the front, an image's scores,
which judges' weights it can set, and what it says when nobody rated anything."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bracket.app.places import ordinal, rank
from bracket.judge.combine import JUDGE_NAMES
from bracket.session.scoring.image_judges import SHORT
from bracket.standings.trust import NO_AGREEMENT

__all__ = ["NO_AGREEMENT", "point_label", "run_figures", "scores_text", "settable"]


def point_label(point: Any, points: Sequence[Any]) -> str:
    """``search-3 · 2nd of 7 by combined score · step 20``: a point of the front
    (``bracket.standings.front.FrontPoint``) with its place among ``points`` (the front's), as the
    leaderboard orders them — a place, not the combined score, which is relative to the other runs."""
    scored = [p.score for p in points if p.score is not None]
    place = "not scored" if point.score is None else \
        f"{ordinal(rank(point.score, scored))} of {len(scored)} by combined score"
    return f"{point.name} · {place} · step {point.step if point.step else '-'}"


def scores_text(scores: Mapping[str, float]) -> str:
    """``likeness 0.81 · prompt 0.27 · quality 5.2``: an image's judge scores (raw, higher is better)."""
    return " · ".join(f"{SHORT.get(judge, judge)} {value:.3g}" for judge, value in scores.items())


def settable(judge: str) -> bool:
    """Whether ``judge`` has a weight the session's settings can set (``bracket.judge.combine``)."""
    return judge in JUDGE_NAMES


def run_figures(table: Any) -> dict[int, str]:
    """Run id -> what the judges measured of it (``loss 0.1534 · rating 9.0; human ≈ rating 6.8
    (est.)``: ``bracket.standings.rows.RunStanding.raw_text``), from the session's standings
    (``table``; None gives {}): the trial table's raw figures, the numbers Results and ``status``
    show, never a judge's normalised part (which moves with the other runs)."""
    return {run.run_id: run.raw_text for board in (table.boards.values() if table is not None else ())
            for row in board.rows for run in row.runs}
