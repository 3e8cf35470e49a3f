"""Loss judge, divergence monitor and eval-loss judge on synthetic loss series."""

from __future__ import annotations

import math
import random

import pytest

from bracket.judge.base import JudgeResult, normalise_lower_better
from bracket.judge.divergence import DivergenceMonitor, ema, find_divergence, median_prune, value_at_step
from bracket.judge.eval_loss import perplexity, score_eval_loss_runs
from bracket.judge.loss import late_relative_slope, loss_summary, score_loss_runs, score_loss_summaries


def decaying(final: float, steps: int = 200, start: float = 1.0, noise: float = 0.0, seed: int = 0):
    rng = random.Random(seed)
    return [
        (s, final + (start - final) * math.exp(-s / 30) + rng.uniform(-noise, noise))
        for s in range(1, steps + 1)
    ]


def test_known_winner_wins_and_scores_are_in_range():
    series = {1: decaying(0.30, noise=0.02), 2: decaying(0.10, noise=0.02, seed=1), 3: decaying(0.50, seed=2)}
    results = score_loss_runs(series)
    ranking = sorted(results, key=lambda r: results[r].score)
    assert ranking == [2, 1, 3]
    assert all(0.0 <= r.score <= 1.0 for r in results.values())
    assert results[2].score < 0.2 and results[3].score > 0.8
    assert results[2].details["final_ema"] == pytest.approx(0.10, abs=0.02)


def test_nan_and_empty_and_missing_logs_are_disqualified_with_reason():
    bad = decaying(0.2)
    bad[120] = (121, float("nan"))
    inf_tail = decaying(0.1, seed=3)[:50] + [(51, math.inf)]
    results = score_loss_runs({1: decaying(0.2), 2: bad, 3: [], 4: None, 5: inf_tail})
    assert not results[1].disqualified and results[1].score == 0.5  # the only qualified run
    assert "only qualified run" in results[1].reason
    for run_id in (2, 3, 4, 5):
        assert results[run_id].disqualified and results[run_id].score is None
    assert "nan" in results[2].reason.lower() and "121" in results[2].reason
    assert "empty" in results[3].reason
    assert "no loss log" in results[4].reason
    assert "inf" in results[5].reason


def test_diverging_series_is_disqualified_and_stopped_by_the_monitor():
    steady = decaying(0.2, steps=100)
    blowup = steady + [(100 + s, 0.2 * math.exp(s / 10)) for s in range(1, 60)]
    results = score_loss_runs({1: steady, 2: blowup})
    assert results[2].disqualified and "diverged" in results[2].reason
    monitor = DivergenceMonitor(threshold=3.0, min_steps=20)
    stopped_at = None
    for n in range(1, len(blowup) + 1):
        if monitor.update(blowup[:n]) is not None:
            stopped_at = blowup[n - 1][0]
            break
    assert stopped_at is not None and 100 < stopped_at < 159
    assert monitor.update(steady) is not None  # sticky once it fired
    assert DivergenceMonitor().update(steady) is None


def test_monitor_stops_on_nan_at_once_even_before_min_steps():
    monitor = DivergenceMonitor(min_steps=1000)
    assert monitor.update([(1, 1.0), (2, 0.9)]) is None
    assert "nan" in monitor.update([(1, 1.0), (2, 0.9), (3, float("nan"))]).lower()


def test_noisy_flat_diffusion_loss_with_a_lucky_first_step_is_not_divergence():
    rng = random.Random(7)
    series = [(1, 0.005)] + [(s, rng.uniform(0.01, 0.4)) for s in range(2, 400)]
    assert find_divergence(series) is None
    assert DivergenceMonitor(min_steps=0).update(series) is None


def test_ema_is_bias_corrected_weighted_mean():
    assert ema([2.0, 2.0, 2.0]) == pytest.approx([2.0, 2.0, 2.0])
    smoothed = ema([0.0, 1.0], alpha=0.5)
    assert smoothed[1] == pytest.approx((0.5 * 1.0 + 0.25 * 0.0) / 0.75)


def test_slope_penalises_a_run_whose_loss_rises_at_the_end():
    falling = [(s, 1.0 - 0.002 * s) for s in range(1, 201)]
    rising = [(s, 0.6 + 0.002 * (s - 100)) if s > 150 else (s, 1.0 - 0.003 * s) for s in range(1, 201)]
    assert late_relative_slope(falling) < 0 < late_relative_slope(rising)
    only_final = score_loss_runs({1: falling, 2: rising}, slope_weight=0.0)
    with_slope = score_loss_runs({1: falling, 2: rising}, slope_weight=0.5)
    assert with_slope[2].score - with_slope[1].score > only_final[2].score - only_final[1].score - 1e-9


def test_tiny_differences_stay_near_neutral():
    scores = normalise_lower_better({1: 1.000, 2: 1.001}, min_spread=0.05)
    assert 0.45 < scores[1] < 0.5 < scores[2] < 0.55
    assert normalise_lower_better({1: 1.0, 2: 3.0}) == {1: 0.0, 2: 1.0}
    assert normalise_lower_better({7: 4.2}) == {7: 0.5}


def test_median_prune_and_value_at_step():
    assert median_prune(0.9, [0.2, 0.3, 0.4]) is True
    assert median_prune(0.1, [0.2, 0.3, 0.4]) is False
    assert median_prune(0.9, [0.2, 0.3]) is False  # too few others
    assert median_prune(float("nan"), []) is True
    series = [(10, 1.0), (20, 1.0), (30, 5.0)]
    assert value_at_step(series, 25) == pytest.approx(1.0)
    assert value_at_step(series, 5) is None


def test_eval_loss_judge_prefers_lower_eval_loss_and_falls_back_to_train_loss():
    evals = {
        1: [(100, 2.0), (200, 1.5)], 2: [(100, 2.0), (200, 1.2)], 3: None, 4: [(100, float("nan"))], 5: []
    }
    trains = {3: decaying(1.9, steps=50), 5: None}
    results = score_eval_loss_runs(evals, trains)
    assert results[2].score == 0.0 and results[3].score == 1.0
    assert 0.0 < results[1].score < 1.0
    assert results[2].details["perplexity"] == pytest.approx(perplexity(1.2)) == pytest.approx(math.exp(1.2))
    assert results[3].details["source"] == "train" and "no eval loss" in results[3].reason
    assert results[1].details.get("mixed_sources") is True
    assert results[4].disqualified and "nan" in results[4].reason.lower()
    assert results[5].disqualified
    assert perplexity(10_000.0) > 1e300


def test_judge_result_rejects_out_of_range_scores():
    with pytest.raises(ValueError):
        JudgeResult(score=1.5)
    with pytest.raises(ValueError):
        JudgeResult(score=0.5, disqualified=True)
    assert JudgeResult.scored(1.0000000001).score == 1.0
    assert not JudgeResult.no_data("x").has_score


def test_a_run_that_leads_early_and_over_fits_ranks_by_where_its_validation_loss_ends():
    """The value the standings and the sampler rank a full-length run by is its validation loss at
    the end, not its best step: ranking by the best step centred the search on configs that lead
    at 1/3 and over-fit (docs/BENCHMARKS.md §9, ``bracket@best-step``: 4.1 -> 15.1 full runs to a
    within-5 % config on the lr·alpha/dim kind)."""
    train = decaying(0.1)
    over_fits = [(100, 0.20), (300, 0.15), (600, 0.19), (900, 0.24)]  # best at 1/3, then rises
    slow = [(100, 0.40), (300, 0.26), (600, 0.20), (900, 0.18)]  # worst early, best at the end
    scores = score_loss_summaries({1: loss_summary(train, validation=over_fits),
                                   2: loss_summary(train, validation=slow)})
    assert scores[1].details["basis"] == "validation"
    assert scores[2].score < scores[1].score
