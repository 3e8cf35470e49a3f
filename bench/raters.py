"""Simulated raters: people whose taste disagrees with the training loss in a known way.

A :class:`Taste` is a second response surface over the demo space (a
:class:`bench.landscape_trainer.Landscape` with other optima), laid over the *loss*
landscape the runs really train on. What the rater likes is that surface's noise-free value
(lower is better), except that a run whose loss diverged looks broken whatever the taste.
The rater's optimum is found by the same exhaustive scan as the loss optimum, so
"within 5 % of the rater's optimum" is exact.

Each taste disagrees with the loss differently:

* ``softer`` (on ``reference``): the loss-best runs look overcooked; the rater likes a rate
  8x lower than the loss optimum (AdamW near 2.5e-4) and a cosine schedule;
* ``adagrad-look`` (on ``high-rank``): the rater likes what Adagrad does to the samples
  (its floor 0.85 instead of 1.09); no curated config uses Adagrad, and the loss dislikes it;
* ``linear-bold`` (on ``flat-noisy``): the rater likes a 3x higher rate than the loss
  (Adam kinds near 1e-3) on a ``linear`` schedule, and the loss is noisy and flat.

:class:`Rater` turns the taste into what a person does in the Compare tab, through the
app's own functions (``SessionManager.compare``, :class:`bracket.app.compare.Compare`: ``rate_next``,
``rate``, ``next_pairs``, ``choose``): after some trials it looks at what "Next unrated"
shows and rates a few of them (1–10, rounded, with noise; a rated run offered again with a
why gets a fresh rating), sometimes skips a round (late), and now and then makes a blind pairwise choice (a
logistic choice on the taste difference).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from typing import Any

from bench.landscape_trainer import LANDSCAPES, Landscape, diverges, optimum, quality

#: a config this much worse than the rater's optimum (ratio - 1) gets a 1 (5 % worse: 9.1, 15 %: 7.3)
RATING_SPAN = 0.5
#: the taste gap (x the optimum) at which a blind pairwise choice goes the better way 73 % of the time
PAIR_SCALE = 0.1


@dataclass(frozen=True)
class Taste:
    """What a rater likes, over the loss landscape the runs train on."""

    name: str
    loss_landscape: str
    description: str
    surface: Landscape

    @property
    def loss(self) -> Landscape:
        return LANDSCAPES[self.loss_landscape]

    def value(self, params: dict[str, Any], steps: int = 100) -> float:
        """How much the rater dislikes this config (noise-free, lower is better)."""
        if diverges(self.loss, params):
            return quality(self.surface, dict(params, learning_rate=1.0), steps)  # looks broken
        return quality(self.surface, params, steps)

    def optimum(self, steps: int = 100) -> tuple[float, dict[str, Any]]:
        best, params = optimum(self.surface, steps, per_decade=100)
        if diverges(self.loss, params):  # never happens for the tastes below (checked by a test)
            raise ValueError(f"taste {self.name}: its optimum diverges on the loss landscape")
        return best, params

    def rating(self, params: dict[str, Any], best: float, rng: random.Random | None = None,
               noise: float = 0.0, steps: int = 100) -> int:
        """A 1-10 rating: 10 at the optimum, 1 at RATING_SPAN worse, plus Gaussian noise, rounded."""
        return rating_of(self.value(params, steps) / best, rng, noise)


def rating_of(ratio: float, rng: random.Random | None = None, noise: float = 0.0) -> int:
    """The 1-10 rating a rater gives a config ``ratio`` x its optimum (1.0 = the optimum): 10 at
    the optimum, falling linearly to 1 at ``1 + RATING_SPAN``, plus Gaussian ``noise``, rounded."""
    exact = 10.0 - 9.0 * min(1.0, max(0.0, (ratio - 1.0) / RATING_SPAN))
    noisy = exact + (rng.gauss(0.0, noise) if rng is not None and noise > 0 else 0.0)
    return int(min(10, max(1, round(noisy))))


def chooses_left(left: float, right: float, rng: random.Random) -> bool:
    """A blind pairwise choice between configs ``left`` and ``right`` x the optimum: the rater
    picks the left one with a logistic probability of the gap, 73 % for a 0.1 (10 %) gap."""
    return rng.random() < 1.0 / (1.0 + math.exp(-(right - left) / PAIR_SCALE))


def _scaled(landscape: Landscape, factor: float) -> dict[str, float]:
    return {k: v * factor for k, v in landscape.lr_star.items()}


TASTES: dict[str, Taste] = {taste.name: taste for taste in (
    Taste("softer", "reference",
          "likes a rate 8x below the loss optimum (AdamW ~2.5e-4, cosine): the loss-best runs look overcooked",
          replace(LANDSCAPES["reference"], name="taste-softer", lr_star=_scaled(LANDSCAPES["reference"], 1 / 8))),
    Taste("adagrad-look", "high-rank",
          "likes what Adagrad does to the samples (floor 0.85, loss floor 1.09); no curated config uses it",
          replace(LANDSCAPES["high-rank"], name="taste-adagrad",
                  floor={**LANDSCAPES["high-rank"].floor, "Adagrad": 0.85})),
    Taste("linear-bold", "flat-noisy",
          "likes a 3x higher rate than the loss (Adam kinds ~1e-3) on a linear schedule",
          replace(LANDSCAPES["flat-noisy"], name="taste-linear", lr_star=_scaled(LANDSCAPES["flat-noisy"], 3.0),
                  dead=("lr_warmup_steps",),
                  scheduler_factor={"constant": 1.0, "constant_with_warmup": 1.0, "cosine": 0.97, "linear": 0.88})),
)}


@dataclass
class Rater:
    """A person with a taste, rating through the app's own Compare functions.

    ``act(manager.compare, trial)`` is called before each new configuration is proposed. From
    ``start_trial`` on, with probability ``p_round`` the rater opens "Next unrated" and rates
    the first ``per_round`` runs it shows (1-10, Gaussian ``noise``, rounded) — a rated run
    only when it is offered again with a why line (the
    app itself never asks while unrated runs remain), with noise from a second
    generator so that the other draws stay those of a session without re-offers; with
    probability ``p_pair`` it also makes one blind pairwise choice from "Next pair".
    """

    taste: Taste
    seed: int = 0
    noise: float = 0.6
    p_round: float = 0.7
    per_round: int = 2
    p_pair: float = 0.3
    #: 1-based trial count from which the rater starts (a late rater starts after half the budget)
    start_trial: int = 1
    steps: int = 100

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.again_rng = random.Random(self.seed + 7919)
        self.best, self.best_params = self.taste.optimum(self.steps)
        self.ratings = 0
        #: of ``ratings``, those of a run rated before (the app offered it again)
        self.again = 0
        self.pairs = 0
        self.first_rating_trial: int | None = None

    def act(self, compare: Any, trial: int) -> list[str]:
        """One look at the Compare tab (``compare``: ``SessionManager.compare``) before trial
        ``trial`` (1-based) is proposed; what it did."""
        done: list[str] = []
        if trial < self.start_trial or self.rng.random() >= self.p_round:
            return done
        params = {r["id"]: r["params"] for r in compare.scorable_runs()}
        ids, why = compare.rate_next(4)
        for run_id in ids[: self.per_round]:
            again = run_id in {r["run_id"] for r in compare.ratings()}
            if (again and not why) or run_id not in params:  # no why: every run rated, the best shown again
                continue
            rng = self.again_rng if again else self.rng
            value = self.taste.rating(params[run_id], self.best, rng, self.noise, self.steps)
            compare.rate(run_id, value)
            self.ratings += 1
            self.again += again
            self.first_rating_trial = self.first_rating_trial or trial
            done.append(f"rated #{run_id} {value}" + (" again" if again else ""))
        if self.rng.random() < self.p_pair:
            pairs = compare.next_pairs(1)
            if pairs:
                left, right = pairs[0]
                # judged in run-id order: the app shuffles the sides with an unseeded generator,
                # and the same seed must give the same choice whichever side each run is shown on
                first, second = sorted((left, right))
                ratios = [self.taste.value(params[side], self.steps) / self.best for side in (first, second)]
                winner = "left" if chooses_left(*ratios, self.rng) == (first == left) else "right"
                compare.choose(left, right, winner)
                self.pairs += 1
                done.append(f"pair #{left}/#{right}: {winner}")
        return done
