"""Early stop of a trial whose loss is NaN or diverging, and optional median pruning.

The session polls a running trial's loss series and calls :meth:`DivergenceMonitor.update`
with the whole series so far. When it returns a reason the session stops the trainer and
reports the trial to Optuna as PRUNED, so no GPU time is spent on a run that is already lost.

What counts as diverged (the same rule the loss judge uses after a run, see
:func:`find_divergence`): the exponential moving average (EMA) of the loss ends more than
``threshold`` times above the lowest value the EMA reached -- a run that was learning and
then blew up. The minimum is only taken once the EMA has seen its window (1/alpha points).
A NaN or infinite value stops the run at once. Steps before ``min_steps`` are
not judged for divergence (warm-up spikes are normal), but NaN is never tolerated.

:func:`median_prune` is Optuna's median rule in one line, for a session that turns it on
(off by default): at a checkpoint step a trial whose loss is worse than the median of the
other trials at that step is stopped.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Sequence

from bracket.judge.base import LossSeries

DEFAULT_EMA_ALPHA = 0.1
"""Weight of each new value in the EMA: smoothed = alpha * value + (1 - alpha) * smoothed."""
DEFAULT_DIVERGENCE_FACTOR = 3.0
"""Diverged when the smoothed loss ends above this many times its smoothed minimum."""
DEFAULT_MIN_STEPS = 20


def ema(values: Sequence[float], alpha: float = DEFAULT_EMA_ALPHA) -> list[float]:
    """The bias-corrected exponential moving average of ``values``.

    Started from zero and divided by ``1 - (1 - alpha) ** n`` (as Adam does), so every
    smoothed point is a proper weighted mean of the points so far and the first logged
    value does not dominate the start (diffusion losses jump by 10x from step to step).
    """
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"ema alpha must be in (0, 1], got {alpha!r}")
    smoothed: list[float] = []
    current = 0.0
    decay = 1.0
    for value in values:
        current = alpha * value + (1.0 - alpha) * current
        decay *= 1.0 - alpha
        smoothed.append(current / (1.0 - decay))
    return smoothed


def warmup_points(alpha: float) -> int:
    """How many points the EMA needs before its minimum means anything (its window, 1/alpha)."""
    return max(1, math.ceil(1.0 / alpha))


def first_non_finite(series: LossSeries) -> tuple[int, float] | None:
    """The first (step, value) whose value is NaN or infinite, or None."""
    for step, value in series:
        if not math.isfinite(value):
            return step, value
    return None


def find_divergence(
    series: LossSeries,
    *,
    factor: float = DEFAULT_DIVERGENCE_FACTOR,
    min_steps: int = 0,
    ema_alpha: float = DEFAULT_EMA_ALPHA,
) -> str | None:
    """A reason when ``series`` holds NaN/inf or its smoothed loss ends ``factor`` x above its minimum.

    The minimum and the final value are both taken on the EMA, and only points at or after
    ``min_steps`` are judged. Loss values at or below zero are handled with an additive
    form of the same rule (final - minimum > (factor - 1) * |minimum|).
    """
    bad = first_non_finite(series)
    if bad is not None:
        return f"loss is {bad[1]} at step {bad[0]}"
    if len(series) < 2:
        return None
    smoothed = ema([value for _, value in series], ema_alpha)
    skip = warmup_points(ema_alpha)
    judged = [
        s for i, ((step, _), s) in enumerate(zip(series, smoothed)) if step >= min_steps and i >= skip - 1
    ]
    if len(judged) < 2:
        return None
    lowest, final = min(judged), judged[-1]
    allowed = (factor - 1.0) * max(abs(lowest), 1e-12)
    if final - lowest > allowed:
        return (
            f"loss diverged: smoothed loss {final:.4g} at step {series[-1][0]} is more than "
            f"{factor:g}x its minimum {lowest:.4g}"
        )
    return None


@dataclass
class DivergenceMonitor:
    """Watches one running trial; :meth:`update` returns a reason once it must be stopped.

    The verdict is sticky: after a reason is returned, later calls return the same reason.
    Safe to call with the whole series on every poll (it is a linear pass over the points).
    """

    threshold: float = DEFAULT_DIVERGENCE_FACTOR
    min_steps: int = DEFAULT_MIN_STEPS
    ema_alpha: float = DEFAULT_EMA_ALPHA
    reason: str | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if self.threshold <= 1.0:
            raise ValueError(f"divergence threshold must be above 1, got {self.threshold!r}")

    def update(self, series: LossSeries) -> str | None:
        """Check the series so far; a reason to stop the trial, or None to let it run."""
        if self.reason is None:
            self.reason = find_divergence(
                series, factor=self.threshold, min_steps=self.min_steps, ema_alpha=self.ema_alpha
            )
        return self.reason


def value_at_step(series: LossSeries, step: int, ema_alpha: float = DEFAULT_EMA_ALPHA) -> float | None:
    """The smoothed loss at the last logged point at or before ``step`` (None before the first)."""
    points = [(s, v) for s, v in series if s <= step]
    if not points or first_non_finite(points) is not None:
        return None
    return ema([v for _, v in points], ema_alpha)[-1]


def median_prune(
    current_value_at_step: float, others_at_step: Sequence[float], *, min_others: int = 3
) -> bool:
    """True when the current trial is worse (higher loss) than the median of the others at this step.

    Nothing is pruned until at least ``min_others`` other trials reached the step; a NaN
    current value is always pruned.
    """
    if not math.isfinite(current_value_at_step):
        return True
    others = [v for v in others_at_step if math.isfinite(v)]
    if len(others) < min_others:
        return False
    return current_value_at_step > statistics.median(others)
