"""The rated-neighbourhood experiment (bench/rated_region.py, BENCHMARKS section 4 run K): it
acts only when rated configs agree, its box shrinks as they accumulate, its draws stay in the
space, and its patch undoes."""

from __future__ import annotations

import math
import random
import statistics

from optuna.trial import TrialState

from bench import rated_region
from bench.rated_region import draw, neighbourhood, next_in_region
from bracket.search import controller
from bracket.search.space import CategoricalKnob, FloatKnob, IntKnob, SearchSpace
from bracket.search.types import ScoredConfig

SPACE = SearchSpace({
    "optimizer_type": CategoricalKnob(("AdamW", "SGD", "Adagrad")),
    "learning_rate": FloatKnob(1e-5, 3e-2, log=True),
    "lr_warmup_steps": IntKnob(0, 20, step=5),
})


def _done(value: float, *, rated: bool = False, kind: str = "search", **params) -> ScoredConfig:
    merged = {"optimizer_type": "AdamW", "learning_rate": 1e-4, "lr_warmup_steps": 0, **params}
    return ScoredConfig(merged, value, TrialState.COMPLETE, kind, rated)


BASE = [_done(0.3, kind="baseline"), _done(0.4, kind="curated", learning_rate=1e-3)]
BEST = {"optimizer_type": "Adagrad", "learning_rate": 3e-3, "lr_warmup_steps": 10}


def test_it_needs_agreeing_rated_neighbours():
    one = [*BASE, _done(0.1, rated=True, **BEST)]
    assert neighbourhood(one, SPACE) == []  # one rating is not a neighbourhood
    far = [*one, _done(0.12, rated=True, optimizer_type="SGD", learning_rate=1e-5)]
    assert neighbourhood(far, SPACE) == []  # it agrees on the score, not on the place
    worse = [*one, _done(0.3, rated=True, **dict(BEST, learning_rate=4e-3))]
    assert neighbourhood(worse, SPACE) == []  # near, but rated well below it
    unrated = [*one, _done(0.1, **dict(BEST, learning_rate=4e-3))]
    assert neighbourhood(unrated, SPACE) == []  # near and as good, but nobody rated it
    agree = [*one, _done(0.12, rated=True, **dict(BEST, learning_rate=5e-3))]
    members = neighbourhood(agree, SPACE)
    assert [m.params["learning_rate"] for m, _ in members] == [3e-3, 5e-3]
    assert members[0][1] > members[1][1]  # the better-scored member weighs more


def test_the_box_shrinks_as_agreeing_neighbours_accumulate_and_draws_stay_in_the_space():
    def spread(count: int) -> float:
        members = [(_done(0.1, rated=True, **BEST), 1.0)] * count
        rng = random.Random(1)
        draws = [draw(SPACE, members, rng) for _ in range(400)]
        assert all(not SPACE.problems(d) for d in draws)
        return statistics.pstdev(math.log(d["learning_rate"]) for d in draws)

    two, eight = spread(2), spread(8)
    assert eight < 0.6 * two
    members = [(_done(0.1, rated=True, **BEST), 1.0),
               (_done(0.1, rated=True, **dict(BEST, learning_rate=3e-4)), 1.0)]
    rng = random.Random(2)
    centre = statistics.fmean(math.log10(draw(SPACE, members, rng)["learning_rate"]) for _ in range(400))
    assert abs(centre - math.log10(math.sqrt(3e-3 * 3e-4))) < 0.15  # between the two, where they lean


def test_every_other_proposal_once_it_acts_and_the_patch_undoes():
    history = [*BASE, _done(0.1, rated=True, **BEST),
               _done(0.11, rated=True, **dict(BEST, learning_rate=4e-3))]
    turns = []
    for _ in range(4):
        params = next_in_region(history, SPACE, seed=3)
        turns.append(params is not None)
        history.append(ScoredConfig(params or dict(BEST, optimizer_type="SGD"), 0.9, TrialState.COMPLETE,
                                    "search"))
    assert turns == [True, False, True, False]
    own = controller.SearchController.next
    rated_region.patch()
    assert controller.SearchController.next is not own
    rated_region.patch(undo=True)
    assert controller.SearchController.next is own


def test_with_liked_only_highly_rated_configs_count():
    agree = [*BASE, _done(0.1, rated=True, **BEST), _done(0.12, rated=True, **dict(BEST, learning_rate=5e-3))]
    assert len(neighbourhood(agree, SPACE, liked=lambda params: True)) == 2
    only_best = neighbourhood(agree, SPACE, liked=lambda params: params["learning_rate"] == 3e-3)
    assert only_best == []  # the person did not rate the neighbour highly: no agreeing neighbourhood
