"""What to put in front of a person to score next, and how Compare labels each run.

Both read the standings (``bracket.standings``: the same ranking the Results tab shows),
so the run Compare offers first is the winner's when it is unrated — the rating that
matters most for trusting the answer.
"""

from __future__ import annotations

from collections.abc import Set

from bracket.standings import STAGES, Standings, figures_text


def next_unrated(table: Standings | None, rated: Set[int], scorable: Set[int], k: int = 4) -> list[int]:
    """Up to ``k`` finished runs nobody rated yet: the winner's first, then by stage (finals
    first) and score. Never a rated run while unrated ones exist (so possibly a single run);
    only when every run is rated does it offer the best rated runs again."""
    winner = set(table.winner.run_ids) if table and table.winner else set()
    order = {stage: i for i, stage in enumerate(STAGES)}
    ranked = sorted(((run, row) for board in (table.boards.values() if table else ()) for row in board.rows
                     for run in row.runs if run.run_id in scorable),
                    key=lambda pair: (pair[0].run_id not in winner, order.get(pair[0].stage, 9),
                                      pair[0].score is None, pair[0].score or 0.0, pair[0].run_id))
    unrated = [run.run_id for run, _ in ranked if run.run_id not in rated]
    if unrated:
        return unrated[:k]
    return [run.run_id for run, _ in ranked][:max(k, 0)]


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
