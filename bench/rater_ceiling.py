"""What a simulated person's own ratings allow at best: the ceiling of the steering goals.

The steering benchmark (:mod:`bench.steering`) asks two things of a session with a rater:
reach a config within 5 % of the rater's optimum in ≤ 0.5x the trials of the control, and
*pick* such a config at the end in ≥ 80 % of repetitions. This module takes the recorded
sessions as they are (the configs each one trained) and asks how well *any* pick could do with
the information the person gives, so a miss can be blamed on the mechanism or on the ratings:

* :func:`oracle` — the rater's noise-free taste: is a within-5 % config trained at all?
* :func:`pick_by_ratings` — every trained config rated ``times`` times exactly as
  :func:`bench.raters.rating_of` rates (1-10, Gaussian noise, rounded), the best mean rating
  picked, ties broken at random; ``noise=0`` shows what rounding alone costs;
* :func:`pick_second_rating` — one rating each, then a second rating of every config tied for
  the top, the best mean picked (what "rate the tied leaders again" would give);
* :func:`pick_rating_then_loss` — one rating each, ties for the top broken by the noise-free
  loss (the loss is what the app's combined score adds to a rating, and by construction it
  disagrees with the taste);
* :func:`pick_pairwise` — one rating each, then blind pairwise choices
  (:func:`bench.raters.chooses_left`) among the configs tied for the top: a champion meets each
  other tied config once, each meeting decided by ``best_of`` choices.

Records written since the ratings are kept (a trial's ``ratings``) also give two picks from
the ratings the person *actually gave* in that session (:func:`pick_given`): the best mean
given rating, ties at random or by the loss — what a pick by rating first would have named.

Each rule is random (noise, ties, choices), so :func:`pick_share` draws it many times per
session; the ceiling of a mode is the mean share over its sessions. :func:`trials_needed` does
the same for the speed goal: what the control's trials imply the rated sessions must reach, and
whether the warm start and the learning-rate bracket (the first trials, before the sampler
proposes) leave room.

``python -m bench.rater_ceiling RECORDS [--draws N]`` prints both tables for a
``steering.records.jsonl`` (or ``steering.json``) written by ``python -m bench steer``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any, Callable

from bench.common import median
from bench.landscape_trainer import quality
from bench.raters import TASTES, Rater, chooses_left, rating_of
from bench.steering_summary import TARGET, pick_ratio, trials_to_target

#: the rating noise the benchmark's rater uses (:class:`bench.raters.Rater`)
NOISE = next(f.default for f in fields(Rater) if f.name == "noise")
DRAWS = 1000

Rule = Callable[[list[float], random.Random], int]


def trained(record: dict[str, Any]) -> list[float]:
    """The rater's noise-free value ÷ optimum of every config the session trained, in order."""
    return [t["taste"] for t in record["trials"]]


def losses(record: dict[str, Any]) -> list[float] | None:
    """The noise-free loss of every trained config on the taste's loss landscape (None for a
    taste this module does not know, as in a hand-built record)."""
    taste = TASTES.get(record["taste"])
    if taste is None:
        return None
    steps = record.get("steps", 100)
    return [quality(taste.loss, t["params"], steps) for t in record["trials"]]


def oracle(ratios: list[float]) -> bool:
    """Could a pick be within ``TARGET`` at all: is any trained config that close?"""
    return any(r <= TARGET for r in ratios)


def _best(scores: list[float], rng: random.Random) -> int:
    top = max(scores)
    return rng.choice([i for i, s in enumerate(scores) if s == top])


def _leaders(scores: list[float]) -> list[int]:
    top = max(scores)
    return [i for i, s in enumerate(scores) if s == top]


def pick_by_ratings(ratios: list[float], rng: random.Random, noise: float = NOISE, times: int = 1) -> int:
    """Index picked when every config is rated ``times`` times: best mean rating, ties at random."""
    means = [sum(rating_of(r, rng, noise) for _ in range(times)) / times for r in ratios]
    return _best(means, rng)


def pick_second_rating(ratios: list[float], rng: random.Random, noise: float = NOISE) -> int:
    """One rating each, a second for every config tied for the top; best mean, ties at random."""
    first = [float(rating_of(r, rng, noise)) for r in ratios]
    leaders = _leaders(first)
    if len(leaders) == 1:
        return leaders[0]
    means = [(first[i] + rating_of(ratios[i], rng, noise)) / 2 for i in leaders]
    return leaders[_best(means, rng)]


def pick_rating_then_loss(ratios: list[float], losses: list[float], rng: random.Random,
                          noise: float = NOISE) -> int:
    """One rating each; among the configs tied for the top, the lowest loss."""
    return min(_leaders([float(rating_of(r, rng, noise)) for r in ratios]), key=lambda i: losses[i])


def pick_pairwise(ratios: list[float], rng: random.Random, noise: float = NOISE, best_of: int = 1) -> int:
    """One rating each, then blind pairwise choices among the configs tied for the top: a random
    champion meets every other leader once (in random order), ``best_of`` choices a meeting,
    and the winner stays champion. A meeting costs ``best_of`` choices (m - 1 meetings)."""
    leaders = _leaders([float(rating_of(r, rng, noise)) for r in ratios])
    rng.shuffle(leaders)
    champion = leaders[0]
    for challenger in leaders[1:]:
        wins = sum(chooses_left(ratios[champion], ratios[challenger], rng) for _ in range(best_of))
        champion = champion if 2 * wins > best_of else challenger
    return champion


def pick_given(given: list[list[float]], rng: random.Random, losses: list[float] | None = None) -> int | None:
    """Index with the best mean of the ratings the person gave (``given[i]``, empty = unrated),
    ties at random or, with ``losses``, by the lowest loss; None when nothing was rated."""
    means = {i: sum(g) / len(g) for i, g in enumerate(given) if g}
    if not means:
        return None
    top = max(means.values())
    leaders = [i for i, m in means.items() if m == top]
    return min(leaders, key=lambda i: losses[i]) if losses is not None else rng.choice(leaders)


def tied_leaders(ratios: list[float], rng: random.Random, noise: float = NOISE) -> int:
    """How many configs share the top single rating (one noisy draw)."""
    return len(_leaders([float(rating_of(r, rng, noise)) for r in ratios]))


def pick_share(ratios: list[float], rule: Rule, draws: int = DRAWS, seed: int = 0) -> float:
    """Share of ``draws`` random draws of ``rule`` whose pick is within ``TARGET``."""
    if not ratios:
        return 0.0
    rng = random.Random(seed)
    return sum(ratios[rule(ratios, rng)] <= TARGET for _ in range(draws)) / draws


def rules(noise: float = NOISE, losses: list[float] | None = None) -> dict[str, Rule]:
    """The pick rules of the ceiling table, by column name (``losses``: the trained configs'
    noise-free losses, for the rule that breaks ties by the loss)."""
    by_loss = {} if losses is None else {
        "one_rating_ties_by_loss": lambda r, rng: pick_rating_then_loss(r, losses, rng, noise)}
    return by_loss | {
        "one_rating_no_noise": lambda r, rng: pick_by_ratings(r, rng, 0.0),
        "one_rating": lambda r, rng: pick_by_ratings(r, rng, noise),
        "two_ratings": lambda r, rng: pick_by_ratings(r, rng, noise, times=2),
        "second_rating_for_leaders": lambda r, rng: pick_second_rating(r, rng, noise),
        "pairwise_for_leaders": lambda r, rng: pick_pairwise(r, rng, noise),
        "pairwise_best_of_3": lambda r, rng: pick_pairwise(r, rng, noise, best_of=3),
    }


def pick_ceiling(records: list[dict[str, Any]], draws: int = DRAWS, noise: float = NOISE) -> dict[str, Any]:
    """Per taste and mode: the share of sessions whose pick is within ``TARGET`` with the oracle,
    with each rule of :func:`rules` (mean over sessions of :func:`pick_share`), and as shipped
    (the session's own final pick); plus the mean number of configs tied for the top rating."""
    out: dict[str, Any] = {}
    for n, record in enumerate(records):
        ratios = trained(record)
        named = rules(noise, losses(record))
        cell = out.setdefault(record["taste"], {}).setdefault(record["mode"], {"sessions": 0})
        cell["sessions"] += 1
        seed = 7919 * n + record["repetition"]
        got = {"oracle": float(oracle(ratios)), "ships": float(pick_ratio(record) <= TARGET)}
        got |= {name: pick_share(ratios, rule, draws, seed) for name, rule in named.items()}
        given = [t.get("ratings") for t in record["trials"]]
        if all(g is not None for g in given) and any(given):
            rng = random.Random(seed)
            got["given_ratings"] = sum(ratios[pick_given(given, rng)] <= TARGET for _ in range(draws)) / draws
            by_loss = losses(record)
            if by_loss is not None:
                got["given_ratings_ties_by_loss"] = float(ratios[pick_given(given, rng, by_loss)] <= TARGET)
        rng = random.Random(seed)
        got["tied_leaders"] = sum(tied_leaders(ratios, rng, noise) for _ in range(100)) / 100
        for key, value in got.items():
            cell[key] = cell.get(key, 0.0) + value
            cell.setdefault("counted", {})[key] = cell.get("counted", {}).get(key, 0) + 1
    for modes in out.values():
        for cell in modes.values():
            counted = cell.pop("counted")
            for key, n in counted.items():
                cell[key] /= n
    return out


def first_free_trial(record: dict[str, Any]) -> int:
    """1-based trial of the first sampler proposal: before it come the warm start and the bracket."""
    trials = record["trials"]
    return next((i + 1 for i, t in enumerate(trials) if t["kind"] == "search"), len(trials) + 1)


def trials_needed(records: list[dict[str, Any]], rated: str = "rated") -> dict[str, Any]:
    """Per taste: the control's median trials to a within-``TARGET`` config (a miss = budget + 1,
    so the control's true figure is at least that), the trial the rated median must reach for
    ≤ 0.5x, the first sampler proposal, how many control sessions had a hit before it (warm
    start, bracket), and the share of control / rated sessions that reached the target at all and by the
    needed trial."""
    out: dict[str, Any] = {}
    for taste in dict.fromkeys(r["taste"] for r in records):
        control = [r for r in records if r["taste"] == taste and r["mode"] == "control"]
        mine = [r for r in records if r["taste"] == taste and r["mode"] == rated]
        if not control or not mine:
            continue
        needed = median([trials_to_target(r) for r in control]) / 2
        free = min(first_free_trial(r) for r in control + mine)
        out[taste] = {
            "control_median": median([trials_to_target(r) for r in control]),
            "control_reached": sum(trials_to_target(r) <= r["budget"] for r in control) / len(control),
            "rated_median": median([trials_to_target(r) for r in mine]),
            "rated_reached": sum(trials_to_target(r) <= r["budget"] for r in mine) / len(mine),
            "needed_trial": needed,
            "first_free_trial": free,
            "hit_in_warm_start": (sum(trials_to_target(r) < first_free_trial(r) for r in control)
                                  / len(control)),
            "rated_by_needed": sum(trials_to_target(r) <= needed for r in mine) / len(mine),
            "best_possible_ratio": free / median([trials_to_target(r) for r in control]),
        }
    return out


def load(path: Path) -> list[dict[str, Any]]:
    """Records from a ``steering.records.jsonl`` or a ``steering.json`` (its ``records``)."""
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return json.loads(path.read_text())["records"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rater_ceiling", description=__doc__.split("\n")[0])
    parser.add_argument("records", type=Path, help="steering.records.jsonl or steering.json")
    parser.add_argument("--draws", type=int, default=DRAWS, help="random draws per session and rule")
    parser.add_argument("--modes", default="control,rated,late", help="comma-separated modes to show")
    parser.add_argument("--json", type=Path, help="also write both tables here")
    args = parser.parse_args(argv)
    if not args.records.is_file():
        print(f"error: {args.records} is not a file; pass a steering.records.jsonl written by "
              "`python -m bench steer`",
              file=sys.stderr)
        return 2
    records = load(args.records)
    modes = args.modes.split(",")
    picks = pick_ceiling([r for r in records if r["mode"] in modes], args.draws)
    speed = trials_needed(records)
    columns = ["oracle", "one_rating_no_noise", "one_rating", "one_rating_ties_by_loss", "two_ratings",
               "second_rating_for_leaders", "pairwise_for_leaders", "pairwise_best_of_3", "given_ratings",
               "given_ratings_ties_by_loss", "ships", "tied_leaders"]
    print("| taste | mode | n | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 3) + "|")
    for taste, cells in picks.items():
        for mode in modes:
            if mode in cells:
                cell = cells[mode]
                shown = [f"{cell[c]:.1f}" if c == "tied_leaders" else f"{cell[c]:.0%}" if c in cell else "–"
                         for c in columns]
                print(f"| {taste} | {mode} | {cell['sessions']} | " + " | ".join(shown) + " |")
    print("\n| taste | control median (reached) | rated median (reached) | needed ≤ | first free trial | "
          "rated by needed | best possible ratio |")
    print("|---|---|---|---|---|---|---|")
    for taste, s in speed.items():
        print(f"| {taste} | {s['control_median']:g} ({s['control_reached']:.0%}) | {s['rated_median']:g} "
              f"({s['rated_reached']:.0%}) | {s['needed_trial']:g} | {s['first_free_trial']} | "
              f"{s['rated_by_needed']:.0%} | {s['best_possible_ratio']:.2f} |")
    if args.json:
        data = {"draws": args.draws, "noise": NOISE, "picks": picks, "trials": speed}
        args.json.write_text(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
