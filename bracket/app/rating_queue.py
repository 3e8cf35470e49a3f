"""What to put in front of a person to score next, and how Compare labels each run.

Both read the standings (``bracket.standings``: the same ranking the Results tab shows).
"Next unrated" offers the runs whose rating could change the answer most — an unrated
winner with a close runner-up, contenders within reach of it, configs on the edge of TPE's
good set, runs unlike those already rated (``bracket.judge.informative``) — and, when the
pick's leader is rated and a rated rival is too close to call, both again for one more
rating (``bracket.judge.tied``, at most ``RERATE_CAP`` ratings a run) — and says why. Both
kinds are ordered by one value (the chance to matter times the share of uncertainty the
rating removes), so an unrated contender comes before a tie and a tie before unrated runs
that cannot change the pick.
"""

from __future__ import annotations

from collections.abc import Set

from bracket.judge.informative import candidates_from_standings, rank_unrated, why_line
from bracket.judge.tied import rank_tied_leaders
from bracket.standings import Standings, figures_text


def rate_next(table: Standings | None, scorable: Set[int], k: int = 4) -> tuple[list[int], str]:
    """(up to ``k`` finished runs to rate next, the one line saying why): unrated runs whose
    rating could change the pick or TPE's good set, and rated runs of tied leaders, by one
    value (``bracket.judge.informative``, ``bracket.judge.tied``); so possibly a single run.
    When nothing is worth a rating and every run is rated: the best rated runs again (finals
    first), with no why."""
    candidates = candidates_from_standings(table, scorable)
    stage = table.winner.stage if table and table.winner else None
    proposals = rank_unrated(candidates, leader_stage=stage) + rank_tied_leaders(candidates, leader_stage=stage)
    proposals = sorted(proposals, key=lambda p: -p.value)[:max(k, 0)]  # stable: unrated first on equal value
    if proposals:
        return [p.run_id for p in proposals], why_line(proposals)
    best = sorted(candidates, key=lambda c: (c.stage != "final", c.score, c.run_id))
    return [c.run_id for c in best][:max(k, 0)], ""


def run_labels(table: Standings | None, scorable: Set[int]) -> dict[int, str]:
    """Label per finished run: stage, seed, score with its raw figures, rated or not."""
    labels: dict[int, str] = {}
    for board in (table.boards.values() if table else ()):
        for row in board.rows:
            for run in row.runs:
                if run.run_id not in scorable:
                    continue
                score = "" if run.score is None else f" · score {run.score:.3f}"
                raw = figures_text({k: v for p in run.parts if not p.estimated for k, v in p.figures.items()})
                labels[run.run_id] = (f"#{run.run_id} {row.name} · {run.stage} · seed {run.seed}{score}"
                                      + (f" ({raw})" if raw else "") + ("" if run.rated else " · unrated"))
    return labels
