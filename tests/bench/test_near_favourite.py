"""The near-favourite experiment (bench/near_favourite.py, BENCHMARKS section 4 run J): it
fires only on a clear rated favourite, its draws stay in the space, and its patch undoes."""

from __future__ import annotations

import math
import random

from optuna.trial import TrialState

from bench import near_favourite
from bench.near_favourite import RADIUS, favourite, near, next_near_favourite
from bracket.search import controller
from bracket.search.space import CategoricalKnob, FloatKnob, IntKnob, SearchSpace
from bracket.search.types import ScoredConfig

SPACE = SearchSpace({
    "optimizer_type": CategoricalKnob(("AdamW", "SGD", "Adagrad")),
    "learning_rate": FloatKnob(1e-5, 3e-2, log=True),
    "lr_warmup_steps": IntKnob(0, 20, step=5),
})
FAV = {"optimizer_type": "Adagrad", "learning_rate": 3e-3, "lr_warmup_steps": 10}


def _done(value: float, *, rated: bool = False, kind: str = "search", **params) -> ScoredConfig:
    merged = {"optimizer_type": "AdamW", "learning_rate": 1e-4, "lr_warmup_steps": 0, **params}
    return ScoredConfig(merged, value, TrialState.COMPLETE, kind, rated)


BASE = [_done(0.3, kind="baseline"), _done(0.4, kind="curated", learning_rate=1e-3),
        _done(0.5, rated=True, learning_rate=3e-5)]


def test_only_a_clear_rated_favourite_triggers_it():
    assert favourite(BASE) is None  # the only rated config is not the best
    clear = [*BASE, _done(0.1, rated=True, **FAV)]
    assert favourite(clear) == 3
    assert favourite([*BASE, _done(0.1, **FAV)]) is None  # best, but nobody rated it
    assert favourite([*clear, _done(0.12, rated=True, learning_rate=2e-4)]) is None  # within the margin
    assert favourite([*clear, _done(0.05, learning_rate=2e-4)]) is None  # an unrated config scores better


def test_draws_stay_in_the_space_near_the_favourite_every_other_proposal():
    rng = random.Random(0)
    draws = [near(SPACE, FAV, rng) for _ in range(300)]
    assert all(not SPACE.problems(d) for d in draws)
    width = RADIUS * math.log(3e-2 / 1e-5)
    assert all(abs(math.log(d["learning_rate"] / 3e-3)) <= width + 1e-9 for d in draws)
    assert all(abs(d["lr_warmup_steps"] - 10) <= 5 for d in draws)
    assert 0.75 < sum(d["optimizer_type"] == "Adagrad" for d in draws) / len(draws) < 0.95
    history, turns = [*BASE, _done(0.1, rated=True, **FAV)], []
    for _ in range(4):
        step = next_near_favourite(history, SPACE, seed=3)
        turns.append(step is not None)
        history.append(ScoredConfig(step[0] if step else dict(FAV, optimizer_type="SGD"), 0.9,
                                    TrialState.COMPLETE, "search"))
    assert turns == [True, False, True, False]


def test_the_patch_undoes():
    own = controller.SearchController.next
    near_favourite.patch()
    assert controller.SearchController.next is not own
    near_favourite.patch(undo=True)
    assert controller.SearchController.next is own
