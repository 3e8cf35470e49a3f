"""The LLM eval-loss judge: held-out loss (and perplexity) of each run, relative to the others.

For a language-model fine-tune the best automatic signal is the loss on the evaluation split
at the end of training. Per run this judge takes the **last logged eval loss**
(perplexity = exp(loss), reported in details). When a trainer logged no eval loss (no eval
split configured) it falls back to the **late training loss** -- the mean of the last
``late_fraction`` of the train-loss points -- and says so in ``reason`` and
``details["source"]``; train loss rewards over-fitting, so configure an eval split where you can.

NaN/inf values disqualify a run; a run with neither series is disqualified ("no loss logged").
Scores are normalised across the qualified runs exactly like the loss judge
(:func:`bracket.judge.base.normalise_lower_better`: best 0, worst 1, differences under
``min_spread_fraction`` of the typical loss stay near 0.5, a single run scores 0.5).
"""

from __future__ import annotations

import math
from typing import Mapping

from bracket.judge.base import JudgeResult, LossSeries, normalise_lower_better, relative_spread
from bracket.judge.divergence import first_non_finite

DEFAULT_LATE_FRACTION = 0.1
DEFAULT_MIN_SPREAD_FRACTION = 0.01
_MAX_EXP = 700.0  # exp() overflows a float above ~709


def perplexity(loss: float) -> float:
    """exp(loss), saturating at a huge finite number instead of overflowing."""
    return math.exp(min(loss, _MAX_EXP))


def _late_mean(series: LossSeries, fraction: float) -> float:
    count = max(1, math.ceil(len(series) * fraction))
    tail = [value for _, value in series[-count:]]
    return sum(tail) / len(tail)


def eval_loss_summary(
    eval_series: LossSeries | None,
    train_series: LossSeries | None = None,
    *,
    late_fraction: float = DEFAULT_LATE_FRACTION,
) -> JudgeResult:
    """One run's raw eval loss (or fallback), as details of a not-yet-normalised result."""
    if eval_series:
        bad = first_non_finite(eval_series)
        if bad is not None:
            return JudgeResult.disqualify(f"eval loss is {bad[1]} at step {bad[0]}")
        step, loss = eval_series[-1]
        details = {"source": "eval", "loss": float(loss), "step": int(step), "points": len(eval_series)}
        return JudgeResult.no_data("", details)
    if train_series:
        bad = first_non_finite(train_series)
        if bad is not None:
            return JudgeResult.disqualify(f"train loss is {bad[1]} at step {bad[0]}")
        details = {
            "source": "train",
            "loss": _late_mean(train_series, late_fraction),
            "step": int(train_series[-1][0]),
            "points": len(train_series),
        }
        note = (
            "no eval loss logged; scored on late training loss "
            "(configure an eval split for a fairer score)"
        )
        return JudgeResult.no_data(note, details)
    return JudgeResult.disqualify("no eval loss and no training loss were logged for this run")


def score_eval_loss_runs(
    eval_by_run: Mapping[int, LossSeries | None],
    train_by_run: Mapping[int, LossSeries | None] | None = None,
    *,
    late_fraction: float = DEFAULT_LATE_FRACTION,
    min_spread_fraction: float = DEFAULT_MIN_SPREAD_FRACTION,
) -> dict[int, JudgeResult]:
    """Score every run by final eval loss (or late train loss), normalised across qualified runs.

    ``eval_by_run`` names the runs to score; ``train_by_run`` supplies fallbacks.
    """
    train_by_run = train_by_run or {}
    summaries = {
        run_id: eval_loss_summary(series, train_by_run.get(run_id), late_fraction=late_fraction)
        for run_id, series in eval_by_run.items()
    }
    losses = {run_id: r.details["loss"] for run_id, r in summaries.items() if not r.disqualified}
    sources = {summaries[run_id].details["source"] for run_id in losses}
    scores = normalise_lower_better(losses, min_spread=relative_spread(losses.values(), min_spread_fraction))
    results: dict[int, JudgeResult] = {}
    for run_id, summary in summaries.items():
        if summary.disqualified:
            results[run_id] = summary
            continue
        details = dict(summary.details)
        details["perplexity"] = perplexity(details["loss"])
        details["qualified_runs"] = len(losses)
        if len(sources) > 1:
            details["mixed_sources"] = True
        results[run_id] = JudgeResult.scored(scores[run_id], details, reason=summary.reason)
    return results
