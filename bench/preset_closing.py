"""What the simulated rater of ``bench/preset_steering.py`` does once the session's last trial is trained.

The session's rater looks at Compare before each proposal, so the runs trained after its last look
were never offered, and a tie at the top of its ratings may be left to the loss. Two closing acts,
measured beside the session's own pick on the same sessions (they change no proposal):

* :func:`settle`: the rater answers every blind choice "Next pair" offers while the top of its
  ratings is tied (``bracket.judge.pairs.tied_at_the_top``), with the bench's choice or one as
  reliable as a rating (:data:`CHOICES`);
* :func:`closing`: one more look at "Next unrated", rating what it offers first.

``value(config_id)`` is the rater's taste of a config ÷ its optimum (1.0 = the optimum).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from bench.preset_ceiling import NOISE, consistent_choice
from bench.raters import chooses_left, rating_of

#: how the rater makes a blind choice when it settles a tie at the top (:func:`settle`): ``bench`` as
#: in the session (``chooses_left``: 62 % the better way at a 5 % gap), ``consistent`` as reliable as
#: the perception behind one rating (``bench.preset_ceiling.consistent_choice``: 86 % at 5 %)
CHOICES = ("bench", "consistent")
#: the most blind choices a rater makes to settle the top (one per config tied with the leader)
SETTLE_LIMIT = 5


def chooser(kind: str) -> Any:
    """The blind-choice model named ``kind`` (:data:`CHOICES`)."""
    return chooses_left if kind == "bench" else consistent_choice


def settle(table: Any, runs: list[dict[str, Any]], configs: list[dict[str, Any]], ratings: list[dict[str, Any]],
           comparisons: list[dict[str, Any]], value: Callable[[int], float], weights: Mapping[str, float], kind: str,
           rng: random.Random) -> tuple[int | None, int]:
    """After the last trial: the rater answers every blind choice "Next pair" offers while the top of
    its ratings is tied (``tied_at_the_top``), at most :data:`SETTLE_LIMIT`; (the winner then, the
    choices made). What a person who decides the tie before taking the answer gets."""
    from bracket.judge.informative import candidates_from_standings
    from bracket.judge.pairs import tied_at_the_top
    from bracket.session.scoring import score_runs
    from bracket.standings import build_standings

    choose = chooser(kind)
    made = list(comparisons)
    for _ in range(SETTLE_LIMIT):
        pool = [c for c in candidates_from_standings(table, [r["id"] for r in runs]) if c.stage == "search"]
        tie = tied_at_the_top(pool, made)
        if tie is None:
            break
        left, right = sorted(tie)
        ratios = [value(i) for i in (left, right)]
        made.append({"left_run_id": left, "right_run_id": right,
                     "winner": "left" if choose(*ratios, rng) else "right"})
        scores = score_runs(runs, ratings, made, weights)
        table = build_standings(runs, configs, scores, ratings, made, human_weight=weights["human"])
    return (table.winner.config_id if table.winner else None), len(made) - len(comparisons)


def closing(runs: list[dict[str, Any]], configs: list[dict[str, Any]], ratings: list[dict[str, Any]],
            comparisons: list[dict[str, Any]], value: Callable[[int], float], weights: Mapping[str, float],
            per_round: int, rng: random.Random) -> int | None:
    """After the last trial: one more look at "Next unrated" (the runs trained since the rater's last
    look were never offered), rating the first ``per_round`` runs it offers; the winner then."""
    from bracket.app.rating_queue import rate_next
    from bracket.session.scoring import score_runs
    from bracket.session.scoring.sampler_values import taste_readings
    from bracket.standings import build_standings

    scores = score_runs(runs, ratings, comparisons, weights)
    table = build_standings(runs, configs, scores, ratings, comparisons, human_weight=weights["human"])
    readings = taste_readings(runs, scores, {c["id"]: c["params"] for c in configs})
    ids, _why = rate_next(table, {r["id"] for r in runs}, 4, readings)
    done = {r["run_id"] for r in ratings}
    offered = [i for i in ids if i not in done][:per_round]
    more = [{"run_id": i, "prompt_index": None, "value": float(rating_of(value(i), rng, NOISE))} for i in offered]
    scores = score_runs(runs, ratings + more, comparisons, weights)
    table = build_standings(runs, configs, scores, ratings + more, comparisons, human_weight=weights["human"])
    return table.winner.config_id if table.winner else None
