"""Which pair to offer for a blind choice ("Next pair"): the one whose choice could change most.

First a **tie at the top of the ratings** the person has not decided (:func:`tied_at_the_top`):
the configs a person rated alike are ordered by their blind choices, then by what was measured
(``bracket.standings.evidence``), so a choice between the top config and one rated the same is
what decides the answer. Otherwise the pair of contenders (the runs of the three best configs
and of every config with a chance to matter, ``bracket.judge.informative``) whose order is least
certain. docs/SCORING.md, "Which run to rate next", gives the rule.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from bracket.judge.informative import (
    CONTENDER,
    GOOD_FRACTION,
    Candidate,
    chance_beyond,
    config_chances,
    config_means,
)


def _field(record: Any, name: str) -> Any:
    """``name`` of a comparison given as a mapping or as an object."""
    return record.get(name) if isinstance(record, Mapping) else getattr(record, name)


def informative_pairs(candidates: Sequence[Candidate], comparisons: Sequence[Any] = (), k: int = 1, *,
                      good_fraction: float = GOOD_FRACTION, pair_penalty: float = 1.0,
                      rng: random.Random | None = None) -> list[tuple[int, int]]:
    """Up to ``k`` (left, right) run pairs for a blind choice: a tie at the top the person has not
    decided first (:func:`tied_at_the_top`), then the least certain order first.

    Contenders are the runs of the three best configs and of every config with a chance to
    matter of at least :data:`CONTENDER`. A pair's worth is ``min(p, 1 - p)`` with
    ``p = P(a better than b)`` from the two scores and uncertainties, divided by
    ``1 + pair_penalty × times compared``; the pair compared last is skipped. ``comparisons``:
    mappings or objects with ``left_run_id`` and ``right_run_id``. Sides are shuffled with ``rng``.
    """
    rng = rng or random.Random()
    pairs_done: Counter[frozenset[int]] = Counter()
    last = None
    for record in comparisons:
        last = frozenset((int(_field(record, "left_run_id")), int(_field(record, "right_run_id"))))
        pairs_done[last] += 1
    stages = {c.stage for c in candidates}
    stage = "final" if "final" in stages else "search"
    pool = [c for c in candidates if c.stage == stage]
    tie = tied_at_the_top(pool, comparisons)
    configs = config_means(pool)
    chances = config_chances(configs, good_fraction)
    keep = {cid for cid, (chance, _) in chances.items() if chance >= CONTENDER}
    keep |= {c.config_id for c in configs[:3]}  # the best three always (the leader and its nearest)
    runs = sorted((c for c in pool if c.config_id in keep), key=lambda c: c.run_id)
    scored = []
    for i, a in enumerate(runs):
        for b in runs[i + 1:]:
            pair = frozenset((a.run_id, b.run_id))
            if pair == last or (tie is not None and pair == frozenset(tie)):
                continue
            p = chance_beyond(b.score - a.score, math.hypot(a.uncertainty, b.uncertainty))
            worth = min(p, 1.0 - p) / (1.0 + pair_penalty * pairs_done[pair])
            scored.append((-worth, abs(a.score - b.score), a.run_id, b.run_id))
    scored.sort()
    ordered = ([tie] if tie is not None else []) + [(a, b) for *_, a, b in scored]
    return [(a, b) if rng.random() < 0.5 else (b, a) for a, b in ordered[:max(0, k)]]


def tied_at_the_top(pool: Sequence[Candidate], comparisons: Sequence[Any] = ()) -> tuple[int, int] | None:
    """(a run of the top config, a run of the highest config rated the same) when the person's
    ratings tie at the top of the leaderboard (``Candidate.place``, ``Candidate.rating``) and no
    blind choice was made between the two configs yet: that choice is what decides the answer
    (``bracket.standings.evidence``), so it is the pair to offer first. None otherwise."""
    placed = sorted((c for c in pool if c.place is not None), key=lambda c: (c.place or 0, c.run_id))
    if not placed or placed[0].rating is None:
        return None
    top, level = placed[0], round(placed[0].rating, 9)
    config_of = {c.run_id: c.config_id for c in pool}
    met = {frozenset(config_of.get(int(_field(r, side)), -1) for side in ("left_run_id", "right_run_id"))
           for r in comparisons}
    for c in placed[1:]:
        if c.config_id == top.config_id or c.rating is None:  # an unrated config is not part of a tie
            continue
        if round(c.rating, 9) != level:
            return None  # the judged configs rank by rating: below the top's, nothing ties with it
        if frozenset((top.config_id, c.config_id)) not in met:
            return top.run_id, c.run_id
    return None
