"""What to put in front of a person to score next, and how Compare labels each run.

Both read the standings (``bracket.standings``: the same ranking the Results tab shows).
"Next unrated" offers the runs whose rating could change the answer most — an unrated
winner with a close runner-up, contenders within reach of it, configs on the edge of TPE's
good set, runs unlike those already rated (``bracket.judge.informative``) — and says why.
Once a search run is judged, TPE's good set is read as the sampler reads it (the person's
verdicts and their predictions with their spread, ``readings``), the pick as the standings rank.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from bracket.judge.informative import candidates_from_standings, rank_unrated, why_line, with_readings
from bracket.standings import Standings, figures_text


def rate_next(table: Standings | None, scorable: Set[int], k: int = 4,
              readings: Mapping[int, Any] | None = None) -> tuple[list[int], str]:
    """(up to ``k`` finished runs nobody rated yet, the one line saying why): those whose rating
    could change the pick or TPE's good set most (``bracket.judge.informative``). Never a rated
    run while unrated ones exist (so possibly a single run); only when every run is rated, the
    best rated runs again (finals first), with no why. ``readings``: the search configs as the
    sampler reads them (``rating_effect.search_readings``): TPE's good set is cut on them once a
    search run is judged."""
    candidates = candidates_from_standings(table, scorable)
    seen = with_readings(candidates, readings) if readings else None
    proposals = rank_unrated(candidates, leader_stage=table.winner.stage if table and table.winner else None,
                             seen=seen if seen != candidates else None)
    if proposals:
        return [p.run_id for p in proposals[:max(k, 0)]], why_line(proposals[:max(k, 0)])
    best = sorted(candidates, key=lambda c: (c.stage != "final", c.score, c.run_id))
    return [c.run_id for c in best][:max(k, 0)], ""


def run_labels(table: Standings | None, scorable: Set[int], marks: Mapping[int, str] | None = None) -> dict[int, str]:
    """Label per finished run: stage, seed, ``marks``' word on it (a halving search: where it stands
    on the rungs, ``bracket.app.rungs.run_marks``), its reading (``bracket.standings.run_reading``) with its
    raw figures, rated or not."""
    labels: dict[int, str] = {}
    for board in (table.boards.values() if table else ()):
        for row in board.rows:
            for run in row.runs:
                if run.run_id not in scorable:
                    continue
                line = run.reading  # its own seed's reading: the interval is its config's
                score = "" if run.score is None or not line else f" · {line}"
                raw = figures_text({k: v for p in run.parts if not p.estimated for k, v in p.figures.items()})
                mark = (marks or {}).get(run.run_id)
                labels[run.run_id] = (f"#{run.run_id} {row.name} · {run.stage} · seed {run.seed}"
                                      + (f" · {mark}" if mark else "") + score
                                      + (f" ({raw})" if raw else "") + ("" if run.rated else " · unrated"))
    return labels
