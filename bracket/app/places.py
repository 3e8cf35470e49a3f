"""A config's place among others, the way every screen says it: ``3rd of 12`` (1 = best).

Where a person reads how configs compare, the app says places — ranks by the leaderboard's order
(lower combined score is better; ties share a place) — and what a config achieved by its headline
(``bracket.standings.headline``), never the combined score itself: that is relative to the other
runs and moves when runs are added or rated (docs/SCORING.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def rank(score: float, scores: Iterable[float]) -> int:
    """The place of ``score`` among ``scores`` (lower is better; equal scores share a place)."""
    return 1 + sum(1 for other in scores if other < score)


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``, ``22nd``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def board_places(table: Any) -> dict[int, str]:
    """Run id -> ``"3 of 12"``: its config's rank on its stage's leaderboard (``table``, the
    session's ``bracket.standings.Standings``; None gives {}) among the ranked configs there — the
    rank the Results tab, ``status`` and the report show, ratings and blind choices included
    (``bracket.standings.evidence``). A run of an unranked config (unscored, or below full length
    while a full-length one is scored) has none (the trial table's rank column)."""
    places: dict[int, str] = {}
    for board in (table.boards.values() if table is not None else ()):
        ranked = [row for row in board.rows if row.rank is not None]
        for row in ranked:
            for run in row.runs:
                places[run.run_id] = f"{row.rank} of {len(ranked)}"
    return places
