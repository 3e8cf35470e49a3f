"""``CurrentScoreSampler`` through Optuna's own sampler test cases (``optuna.testing.pytest_samplers``,
shipped with the installed Optuna): a study driven by it alone behaves as Optuna expects of any
sampler — every distribution kind sampled inside its bounds, conditional and dynamic parameters,
NaN objectives, partially fixed params, and a refusal of multi-objective studies.

Optuna's cases ask for parameters (``x``, ``y``, ...) that are not knobs of the session's space:
the sampler answers those with its plain fallback, and plans the space's own knobs from the
current history with TPE, as in a session."""

from __future__ import annotations

import pytest
from optuna.samplers import TPESampler
from optuna.testing.pytest_samplers import BasicSamplerTestCase, SingleOnlySamplerTestCase

from bracket.search.controller import CurrentScoreSampler
from bracket.trainer.demo.adapter import DemoLoRA


def _sampler() -> CurrentScoreSampler:
    space = DemoLoRA.__new__(DemoLoRA).declare_search_space()
    return CurrentScoreSampler(space, lambda: (), lambda seed, _history: TPESampler(seed=seed, n_startup_trials=2),
                               seed=3)


class TestCurrentScoreSampler(BasicSamplerTestCase, SingleOnlySamplerTestCase):
    @pytest.fixture
    def sampler(self):
        return _sampler


def test_the_knobs_of_the_space_come_from_the_plan_not_the_fallback():
    import optuna

    sampler = _sampler()
    study = optuna.create_study(sampler=sampler)
    trial = study.ask()
    space = DemoLoRA.__new__(DemoLoRA).declare_search_space()
    config = space.suggest(trial)
    assert config and all(name in space for name in config)
