"""Explore more when the warm start disagrees (issue 19) and TPE's wider good set once a
person has rated (issue 25): the rules the controller consults before each TPE proposal."""

from __future__ import annotations

import optuna
from optuna.samplers import RandomSampler, TPESampler
from optuna.trial import TrialState

from bracket.search.controller import SearchController, tpe_good_count
from bracket.search.explore import DEFAULT_RULE, ExploreRule, disagreement_at, explore_now
from bracket.search.space import CategoricalKnob, FloatKnob, SearchSpace
from bracket.search.types import ScoredConfig

SPACE = SearchSpace({
    "optimizer_type": CategoricalKnob(("AdamW", "SGD")),
    "learning_rate": FloatKnob(1e-5, 3e-2, log=True),
})


def _done(lr: float, value: float, kind: str, *, rated: bool = False) -> ScoredConfig:
    return ScoredConfig({"optimizer_type": "AdamW", "learning_rate": lr}, value, TrialState.COMPLETE, kind, rated)


WARM = [_done(1e-4, 0.5, "baseline"), _done(3e-4, 0.3, "curated"), _done(1e-3, 0.4, "curated"),
        _done(1e-4, 0.35, "bracket"), _done(9e-4, 0.6, "bracket")]


def test_a_bracket_side_that_beats_the_warm_start_opens_exploration():
    rule = ExploreRule(trials=2)  # trigger "side", the default
    assert rule.trigger == DEFAULT_RULE.trigger == "side"
    side_won = [*WARM[:3], _done(1e-4, 0.2, "bracket"), _done(9e-4, 0.6, "bracket")]
    assert disagreement_at(side_won, rule) == 3 and explore_now(side_won, rule)
    assert not explore_now(side_won, ExploreRule(trials=2, trigger="search"))  # only proposals count there
    done = [*side_won, _done(2e-5, 0.9, "search"), _done(3e-5, 0.9, "search")]
    assert not explore_now(done, rule)


def test_a_proposal_that_beats_the_warm_start_opens_exploration_for_a_few_proposals():
    rule = ExploreRule(look=3, trials=2)
    assert not explore_now(WARM, rule)  # nothing has disagreed yet
    beaten = [*WARM, _done(2e-5, 0.4, "search"), _done(1e-5, 0.1, "search")]  # the second beats 0.3
    assert disagreement_at(beaten, rule) == len(WARM) + 1
    assert explore_now(beaten, rule)
    one = [*beaten, _done(3e-2, 0.9, "search")]
    assert explore_now(one, rule)  # one exploring proposal made, one to go
    assert not explore_now([*one, _done(2e-2, 0.9, "search")], rule)  # both made: TPE again


def test_no_exploration_when_the_warm_start_holds_or_there_is_none():
    rule = ExploreRule(look=2, trials=4)
    agreeing = [*WARM, _done(2e-5, 0.45, "search"), _done(3e-5, 0.31, "search")]
    assert not explore_now(agreeing, rule)
    too_late = [*WARM, _done(2e-5, 0.45, "search"), _done(3e-5, 0.4, "search"), _done(1e-5, 0.01, "search")]
    assert not explore_now(too_late, rule)  # only the sampler's first `look` proposals are evidence
    cold = [_done(1e-5, 0.01, "search"), _done(1e-4, 0.5, "search")]
    assert disagreement_at(cold, rule) is None and not explore_now(cold, rule)
    assert not explore_now([*WARM, _done(1e-5, 0.01, "search")], None)  # switched off


def test_running_and_failed_configs_are_no_evidence():
    rule = ExploreRule(look=2, trials=2)
    history = [*WARM, ScoredConfig({"learning_rate": 1e-5}, None, TrialState.RUNNING, "search"),
               ScoredConfig({"learning_rate": 2e-5}, None, TrialState.FAIL, "search")]
    assert not explore_now(history, rule)


def _inner(history: list[ScoredConfig], **options) -> optuna.samplers.BaseSampler:
    options.setdefault("hedge", None)  # the explore rule alone (its bracket did not win: the hedge's case)
    controller = SearchController(study=optuna.create_study(direction="minimize"), space=SPACE, seed=1,
                                  history=lambda: history, lr_bracket=False, **options)
    return controller.sampler._make_inner(1, history)


def test_while_exploring_tpe_counts_a_quarter_of_the_configs_as_good():
    beaten = [*WARM, *(_done(1e-5 * (i + 2), 0.45, "search") for i in range(DEFAULT_RULE.look - 1)),
              _done(1e-5, 0.1, "search")]
    assert explore_now(beaten, DEFAULT_RULE)
    assert _inner(beaten)._gamma(20) == 5  # 25 % instead of Optuna's 10 %
    assert _inner(beaten, explore=None)._gamma is None
    assert _inner(WARM)._gamma is None  # the warm start holds: TPE as usual
    after = beaten + [_done(2e-2, 0.9, "search")] * DEFAULT_RULE.trials
    assert _inner(after)._gamma is None  # explored enough: back to 10 %
    assert isinstance(_inner(beaten, explore=ExploreRule(action="random")), RandomSampler)
    assert isinstance(_inner(beaten), TPESampler)


def test_tpe_counts_a_quarter_of_the_configs_as_good_once_someone_rated():
    assert tpe_good_count(12) == 2 and tpe_good_count(12, wide=True) == 3
    unrated = [_done(1e-4 * (i + 1), 0.1 * i, "search") for i in range(12)]
    rated = [*unrated[:-1], _done(1.2e-3, 1.1, "search", rated=True)]
    assert _inner(unrated)._gamma is None  # Optuna's own 10 %
    assert _inner(rated)._gamma(12) == 3
    assert _inner(rated, rated_gamma=False)._gamma is None
