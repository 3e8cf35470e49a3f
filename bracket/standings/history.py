"""Where the search found its best configs: each scored search config's place on the leaderboard
now, in the order the configs were tried, and the best place reached so far.

It is drawn as a rank, not as the combined score: the combined score stays internal
(docs/SCORING.md), and a rank is what every other screen shows of a config. The app's Results
tab and the report draw the same points.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bracket.standings.board import Standings


def rank_history(table: "Standings") -> list[dict[str, Any]]:
    """Per scored search config, in trial order: ``trial``, ``config`` (its name), ``kind``,
    ``score`` (its mean combined score), ``best`` (the lowest so far), ``rank`` (its place on the
    leaderboard, ratings and blind choices above estimates) and ``best_rank`` (the best so far)."""
    board = table.board("search")
    rows = sorted(((r, r.mean, r.rank) for r in (board.rows if board else [])
                   if r.mean is not None and r.rank is not None),
                  key=lambda p: (p[0].trial_number if p[0].trial_number is not None else math.inf, p[0].config_id))
    history, best, best_rank = [], math.inf, math.inf
    for row, mean, rank in rows:
        best, best_rank = min(best, mean), min(best_rank, rank)
        history.append({"trial": row.trial_number, "config": row.name, "kind": row.kind, "score": mean,
                        "best": best, "rank": rank, "best_rank": best_rank})
    return history
