"""What the simulated rater's own judgements allow at best, over ``bench/preset_steering.py``'s sessions.

The pick goal of issue 43 (the session's pick within 5 % of the rater's best *among the configs the
session tried*, 9 sessions in 10) asks a pick among configs rated 1–10 with σ 0.6 points, rounded,
where 5 % of the taste is under one point (``bench.raters.rating_of``: one point is 5.6 %). This
module takes each rated session's record as it ran (the configs it tried, the ratings the rater
gave) and asks how often *any* rule could have picked within 5 % with the information given, so a
miss can be laid on the rule or on the judgements:

* ``ships``: the session's own pick (the standings' winner);
* ``best_rated``: some config the rater rated is within 5 % (the most a pick among rated configs
  can do; a miss here is a config never offered);
* ``given_ties_perfect``: the best mean rating given, ties for the top decided by the taste itself;
* ``given_ties_random``: the same, ties at random;
* ``given_ties_pairs``: the same, the tied configs decided by blind choices as the bench's rater
  makes them (``bench.raters.chooses_left``: 62 % the better way at a 5 % gap) — a champion
  meets each other tied config once;
* ``given_ties_pairs_consistent``: the same with a choice exactly as reliable as the rater's own
  perception behind a rating (the σ 0.6 points without the rounding: 86 % at a 5 % gap);
* ``all_rated_once`` / ``all_rated_once_pairs``: every config the session tried rated once
  (ties at random / by the bench's blind choices): what the budget's configs allow a rater who
  rates everything.

Each share is the mean over many random draws (ties, noise, choices) per session.
``python -m bench.preset_ceiling RESULTS.json [...]`` prints one line per file
(``preset_steering-<rater>.json``, its ``rated`` sessions).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from pathlib import Path
from typing import Any, Callable

from bench.raters import RATING_SPAN, chooses_left, rating_of

TARGET = 1.05
NOISE = 0.6
DRAWS = 400
#: the rater's perception noise behind one rating, on the taste's ratio scale (σ 0.6 points of a
#: scale where 9 points span RATING_SPAN of the optimum)
PERCEIVED = NOISE * RATING_SPAN / 9.0

Choose = Callable[[float, float, random.Random], bool]


def consistent_choice(left: float, right: float, rng: random.Random) -> bool:
    """A blind choice as reliable as the perception behind one rating (Thurstone: each side seen
    with the rating's noise, no rounding)."""
    gap = (right - left) / (math.sqrt(2.0) * PERCEIVED)
    return rng.random() < 0.5 * (1.0 + math.erf(gap / math.sqrt(2.0)))


def _champion(leaders: list[int], ratios: list[float], rng: random.Random, choose: Choose) -> int:
    order = list(leaders)
    rng.shuffle(order)
    champion = order[0]
    for challenger in order[1:]:
        champion = champion if choose(ratios[champion], ratios[challenger], rng) else challenger
    return champion


def _top(values: dict[int, float]) -> list[int]:
    best = max(values.values())
    return sorted(i for i, v in values.items() if v == best)


def session_ceiling(record: dict[str, Any], draws: int = DRAWS, seed: int = 0) -> dict[str, float]:
    """The shares of the module docstring for one rated session's record."""
    tastes = record["tastes"]
    tried = min(tastes)
    within = [t <= TARGET * tried for t in tastes]
    ratios = [t / record["taste_optimum"] for t in tastes]  # what a rating and a choice see
    given: dict[int, list[float]] = {}
    for run_id, value in (record.get("given") or {}).items():
        given.setdefault(int(run_id) - 1, []).append(float(value))
    out = {"ships": float(record["pick"] is not None and record["pick"] <= TARGET)}
    rng = random.Random(seed)
    if given:
        leaders = _top({i: sum(v) / len(v) for i, v in given.items()})
        out["best_rated"] = float(any(within[i] for i in given))
        out["given_ties_perfect"] = float(within[min(leaders, key=lambda i: tastes[i])])
        out["given_ties_random"] = sum(within[i] for i in leaders) / len(leaders)
        out["given_ties_pairs"] = sum(within[_champion(leaders, ratios, rng, chooses_left)]
                                      for _ in range(draws)) / draws
        out["given_ties_pairs_consistent"] = sum(within[_champion(leaders, ratios, rng, consistent_choice)]
                                                 for _ in range(draws)) / draws
        out["tied_at_top"] = float(len(leaders))
    once = pairs = 0.0
    for _ in range(draws):
        leaders = _top({i: float(rating_of(r, rng, NOISE)) for i, r in enumerate(ratios)})
        once += within[rng.choice(leaders)]
        pairs += within[_champion(leaders, ratios, rng, chooses_left)]
    out["all_rated_once"] = once / draws
    out["all_rated_once_pairs"] = pairs / draws
    return out


def ceiling(records: list[dict[str, Any]], draws: int = DRAWS) -> dict[str, float]:
    """Sum over the ``rated`` sessions of each share (a count of sessions), ``tied_at_top`` their mean."""
    rated = [r for r in records if r["mode"] == "rated"]
    total: dict[str, float] = {"sessions": float(len(rated))}
    for n, record in enumerate(rated):
        for key, value in session_ceiling(record, draws, seed=n).items():
            total[key] = total.get(key, 0.0) + value
    if rated and "tied_at_top" in total:
        total["tied_at_top"] /= sum(bool(r.get("given")) for r in rated)
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.preset_ceiling", description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, nargs="+", help="preset_steering-<rater>.json files")
    parser.add_argument("--draws", type=int, default=DRAWS)
    args = parser.parse_args(argv)
    for path in args.results:
        if not path.is_file():
            print(f"error: {path} is not a file; pass a preset_steering-<rater>.json written by "
                  "`python -m bench.preset_steering`", file=sys.stderr)
            return 2
        data = json.loads(path.read_text())
        found = ceiling(data["records"], args.draws)
        plan = data.get("plan", {})
        print(f"{plan.get('rater', '?')} offset {plan.get('seed_offset', '?')}: "
              + ", ".join(f"{k} {v:.1f}" if k == "tied_at_top" else f"{k} {v:.0f}" for k, v in found.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
