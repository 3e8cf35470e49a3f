"""The loss judge: how well each finished run's training loss ended, relative to the others.

Per run it computes two raw numbers from the logged training loss:

* the **final smoothed loss** -- the last value of the bias-corrected EMA
  (:func:`bracket.judge.divergence.ema`), so one noisy last step does not decide;
* the **late slope** -- a least-squares line through the raw loss over the last quarter of
  the steps, expressed as the relative change of the loss across that quarter
  (-0.1 = still falling by 10 %, +0.1 = rising by 10 %).

When the run also logged a **held-out validation loss** (fixed images, timesteps and noise;
``bracket.trainer.heldout``), its last value is the final number instead, because the
training loss of a diffusion model jumps by tens of percent from step to step. The session
uses one basis for all runs it compares: validation when every qualified run has it, else
training loss (``basis`` in the details says which). Validation differences under 1 % (not
5 %) count as noise, as it has far less noise than the smoothed training loss.

A run is **disqualified** (with the reason recorded) when its log is missing or empty, when
any value is NaN/inf, or when it diverged (smoothed loss ends ``divergence_factor`` x above
its smoothed minimum, the rule shared with the live :class:`DivergenceMonitor`).

Scores are **relative to the session's qualified runs**, not absolute losses (a loss of 0.08
means nothing on its own): both raw numbers go through
:func:`bracket.judge.base.normalise_lower_better` and are mixed as
``(1 - slope_weight) * final + slope_weight * slope``. Differences smaller than
``min_spread_fraction`` of the typical loss (and ``slope_min_spread`` for the slope) are
treated as noise and stay near 0.5. A single qualified run scores 0.5.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from bracket.judge.base import JudgeResult, LossSeries, normalise_lower_better, relative_spread
from bracket.judge.divergence import DEFAULT_DIVERGENCE_FACTOR, DEFAULT_EMA_ALPHA, ema, find_divergence

#: Weight of the late slope in the loss score. 0 since bench/search_efficiency.py showed that,
#: with one seed, a slope bonus lets a too-low learning rate that is still falling outrank a
#: better run that has converged (recommended config 1.14-1.27x the optimum with 0.15,
#: 1.02-1.14x with 0; docs/BENCHMARKS.md). The slope is still computed and reported.
DEFAULT_SLOPE_WEIGHT = 0.0
DEFAULT_MIN_SPREAD_FRACTION = 0.05
#: the held-out validation loss has far less noise, so smaller differences are real
DEFAULT_VALIDATION_MIN_SPREAD_FRACTION = 0.01
DEFAULT_SLOPE_MIN_SPREAD = 0.05
LATE_FRACTION = 0.25


def late_relative_slope(series: LossSeries, fraction: float = LATE_FRACTION) -> float:
    """Relative change of the loss over the last ``fraction`` of the steps (least-squares line).

    0.0 when fewer than 3 points fall in that window or the loss there averages to ~0.
    """
    if not series:
        return 0.0
    first_step, last_step = series[0][0], series[-1][0]
    start = last_step - fraction * (last_step - first_step)
    window = [(s, v) for s, v in series if s >= start]
    if len(window) < 3:
        window = list(series[-3:])
    steps = np.array([s for s, _ in window], dtype=float)
    values = np.array([v for _, v in window], dtype=float)
    span = steps[-1] - steps[0]
    mean = float(np.mean(values))
    if len(window) < 3 or span <= 0 or abs(mean) < 1e-12:
        return 0.0
    slope = float(np.polyfit(steps, values, 1)[0])
    return slope * span / abs(mean)


def loss_summary(
    series: LossSeries | None,
    *,
    validation: LossSeries | None = None,
    ema_alpha: float = DEFAULT_EMA_ALPHA,
    divergence_factor: float = DEFAULT_DIVERGENCE_FACTOR,
) -> JudgeResult:
    """One run on its own: a disqualification, or a result whose details hold the raw numbers.

    The returned score is a placeholder (None) until :func:`score_loss_runs` normalises
    across runs; details carry ``final_ema``, ``late_slope``, ``points`` and ``last_step``,
    and ``final_validation`` (the validation loss at its last evaluated step) when the run
    logged a finite validation loss.
    """
    if series is None:
        return JudgeResult.disqualify("no loss log was found for this run")
    points = [(int(step), float(value)) for step, value in series]
    if not points:
        return JudgeResult.disqualify("the loss log is empty (the trainer logged no loss)")
    reason = find_divergence(points, factor=divergence_factor, ema_alpha=ema_alpha)
    details: dict[str, float] = {"points": len(points), "last_step": points[-1][0]}
    if reason is not None:
        return JudgeResult.disqualify(reason, details)
    details["final_ema"] = ema([v for _, v in points], ema_alpha)[-1]
    details["late_slope"] = late_relative_slope(points)
    checked = [(int(s), float(v)) for s, v in validation or ()]
    if checked and all(np.isfinite(v) for _, v in checked):
        details["final_validation"] = max(checked, key=lambda p: p[0])[1]
        details["validation_points"] = len(checked)
    return JudgeResult.no_data("not normalised yet", details)


def score_loss_runs(
    series_by_run: Mapping[int, LossSeries | None],
    *,
    ema_alpha: float = DEFAULT_EMA_ALPHA,
    divergence_factor: float = DEFAULT_DIVERGENCE_FACTOR,
    slope_weight: float = DEFAULT_SLOPE_WEIGHT,
    min_spread_fraction: float = DEFAULT_MIN_SPREAD_FRACTION,
    slope_min_spread: float = DEFAULT_SLOPE_MIN_SPREAD,
) -> dict[int, JudgeResult]:
    """Score every run of a session by its training loss, normalised across the qualified runs."""
    summaries = {
        run_id: loss_summary(series, ema_alpha=ema_alpha, divergence_factor=divergence_factor)
        for run_id, series in series_by_run.items()
    }
    return score_loss_summaries(summaries, slope_weight=slope_weight, min_spread_fraction=min_spread_fraction,
                                slope_min_spread=slope_min_spread)


def score_loss_summaries(
    summaries: Mapping[int, JudgeResult],
    *,
    slope_weight: float = DEFAULT_SLOPE_WEIGHT,
    min_spread_fraction: float = DEFAULT_MIN_SPREAD_FRACTION,
    slope_min_spread: float = DEFAULT_SLOPE_MIN_SPREAD,
) -> dict[int, JudgeResult]:
    """The cross-run half of :func:`score_loss_runs`, on per-run :func:`loss_summary` results.

    A finished run's summary never changes, so a caller that keeps them can re-score a
    session of hundreds of runs without reading every loss series again.
    """
    if not 0.0 <= slope_weight <= 1.0:
        raise ValueError(f"slope_weight must be in [0, 1], got {slope_weight!r}")
    qualified = {run_id: r.details for run_id, r in summaries.items() if not r.disqualified}
    basis = "validation" if qualified and all("final_validation" in d for d in qualified.values()) else "training"
    key = "final_validation" if basis == "validation" else "final_ema"
    if basis == "validation":
        min_spread_fraction = min(min_spread_fraction, DEFAULT_VALIDATION_MIN_SPREAD_FRACTION)
    finals = {run_id: d[key] for run_id, d in qualified.items()}
    slopes = {run_id: d["late_slope"] for run_id, d in qualified.items()}
    final_scores = normalise_lower_better(
        finals, min_spread=relative_spread(finals.values(), min_spread_fraction)
    )
    slope_scores = normalise_lower_better(slopes, min_spread=slope_min_spread)
    results: dict[int, JudgeResult] = {}
    for run_id, summary in summaries.items():
        if summary.disqualified:
            results[run_id] = summary
            continue
        score = (1.0 - slope_weight) * final_scores[run_id] + slope_weight * slope_scores[run_id]
        details = dict(summary.details)
        details.update(
            final_score=final_scores[run_id],
            slope_score=slope_scores[run_id],
            qualified_runs=len(qualified),
            basis=basis,
        )
        note = "only qualified run: neutral score 0.5" if len(qualified) == 1 else ""
        results[run_id] = JudgeResult.scored(score, details, reason=note)
    return results

