"""The search-efficiency summary: trials to target per strategy budget, random search's expectation."""

from __future__ import annotations

import math

import pytest

from bench.landscape_trainer import LANDSCAPES, optimum
from bench.search_efficiency import Plan, expected_random_median, random_hit_share, summarise


def test_expected_median_of_random_search_is_the_geometric_median():
    assert expected_random_median(0.5) == 1.0
    assert expected_random_median(1.0) == 1.0
    assert expected_random_median(0.0) is None
    share = 0.0347  # a hit in 1 of ~29 trials: half of all searches hit within 20
    median = expected_random_median(share)
    assert median == 20.0
    assert 1 - (1 - share) ** median >= 0.5 > 1 - (1 - share) ** (median - 1)


def test_hit_share_is_larger_where_the_optimum_is_broad():
    broad, narrow = random_hit_share("flat-noisy", samples=20_000), random_hit_share("warmup-critical", samples=20_000)
    assert 0.0 < narrow < broad < 0.2


def test_random_search_runs_longer_and_its_median_is_not_cut_off_at_the_short_budget():
    plan = Plan(repetitions=1, budget=8)
    assert plan.budget_for("random") == 16 and plan.budget_for("bracket") == 8
    best, best_params = optimum(LANDSCAPES["reference"])
    bad = {"optimizer_type": "SGD", "learning_rate": 1e-5, "lr_scheduler": "constant", "lr_warmup_steps": 0}

    def record(strategy: str, hit_at: int | None, budget: int) -> dict:
        trials = [{"params": best_params if i + 1 == hit_at else bad,
                   "quality": best if i + 1 == hit_at else 10 * best} for i in range(budget)]
        return {"landscape": "reference", "strategy": strategy, "repetition": 0, "budget": budget, "seconds": 1.0,
                "trials": trials, "picked": {}}

    summary = summarise([record("bracket", 3, 8), record("random", 12, 16)], budget=8, steps=100)["reference"]
    assert summary["random"]["median_trials_to_target"] == 12 and summary["random"]["budget"] == 16
    assert summary["bracket_vs_random_trials"] == pytest.approx(3 / 12)
    assert summary["random_expected_median"] == expected_random_median(summary["random_hit_share"])
    assert summary["bracket_vs_random_expected"] == pytest.approx(3 / summary["random_expected_median"])
    missed = summarise([record("bracket", None, 8), record("random", None, 16)], budget=8, steps=100)["reference"]
    assert missed["bracket"]["median_trials_to_target"] is None
    assert missed["bracket_vs_random_trials"] == pytest.approx(9 / 17)  # each miss counts as its own budget + 1
    assert not math.isnan(missed["random_hit_share"])
