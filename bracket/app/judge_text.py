"""How the UI words the judges' side of the answer: a point of the front, an image's scores,
which judges' weights it can set, and what it says when nobody rated anything."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bracket.judge.combine import JUDGE_NAMES
from bracket.session.scoring.image_judges import SHORT
from bracket.standings.quality import quality_text
from bracket.standings.trust import NO_AGREEMENT

__all__ = ["NO_AGREEMENT", "point_label", "scores_text", "settable"]


def point_label(point: Any) -> str:
    """``search-3 · quality 7.41 · step 20``: a point of the front (``bracket.standings.front.FrontPoint``)."""
    return f"{point.name} · quality {quality_text(point.score, '-')} · step {point.step if point.step else '-'}"


def scores_text(scores: Mapping[str, float]) -> str:
    """``likeness 0.81 · prompt 0.27 · quality 5.2``: an image's judge scores (raw, higher is better)."""
    return " · ".join(f"{SHORT.get(judge, judge)} {value:.3g}" for judge, value in scores.items())


def settable(judge: str) -> bool:
    """Whether ``judge`` has a weight the session's settings can set (``bracket.judge.combine``)."""
    return judge in JUDGE_NAMES
