"""A config's place among others, the way every screen says it: ``3rd of 12`` (1 = best).

Where a person reads how configs compare, the app says places — ranks by the leaderboard's order
(lower combined score is better; ties share a place) — and what a config achieved by its headline
(``bracket.standings.headline``), never the combined score itself: that is relative to the other
runs and moves when runs are added or rated (docs/SCORING.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def rank(score: float, scores: Iterable[float]) -> int:
    """The place of ``score`` among ``scores`` (lower is better; equal scores share a place)."""
    return 1 + sum(1 for other in scores if other < score)


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``, ``22nd``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def config_key(run: Mapping[str, Any]) -> tuple[str, Any]:
    """(stage, config) of a run of the snapshot (``bracket.session.snapshot``): what a place is of."""
    return run.get("stage") or "search", run.get("config_id", run.get("config_name"))


def run_places(runs: Sequence[Mapping[str, Any]]) -> dict[tuple[str, Any], str]:
    """``"3 of 12"`` by :func:`config_key`: each scored config's place among its stage's scored
    configs by their mean score, as the leaderboard ranks them (the trial table's rank column)."""
    scores: dict[tuple[str, Any], list[float]] = {}
    for run in runs:
        if run.get("score") is not None:
            scores.setdefault(config_key(run), []).append(float(run["score"]))
    means = {key: sum(values) / len(values) for key, values in scores.items()}
    places = {}
    for key, mean in means.items():
        rivals = [m for other, m in means.items() if other[0] == key[0]]
        places[key] = f"{rank(mean, rivals)} of {len(rivals)}"
    return places
