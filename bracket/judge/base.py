"""The judge protocol: what every judge returns, and what "no data" means.

A judge is a pure function of data the session hands it (loss series, sample paths with
their prompts, ratings, comparisons). It never reads the store and never raises for a
run it cannot score; it returns a :class:`JudgeResult` in one of three states:

* **scored** -- ``score`` is a float in [0, 1], lower is better; ``disqualified`` is False.
* **no data** -- ``score`` is None and ``disqualified`` is False: the judge abstains
  (nobody rated the run yet, the VLM server was down, no samples). The combination
  (:mod:`bracket.judge.combine`) uses that judge's estimate from the runs it did score, or
  drops the judge for every run when it has scored none.
* **disqualified** -- ``disqualified`` is True and ``score`` is None: the run is broken
  (NaN loss, diverged, no loss logged) and is ranked below every qualified run.

``reason`` says in words why a run has no score or was disqualified (shown in the UI);
``details`` carries the numbers behind a score (final loss, slope, rating mean, ...).

This module also holds the one normalisation the across-run judges share,
:func:`normalise_lower_better`, and how a judge's stored figure is read (:func:`finite_number`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

LossSeries = Sequence[tuple[int, float]]
"""A logged series: (step, value) pairs in the order they were logged."""


@dataclass(frozen=True)
class JudgeResult:
    """One judge's verdict on one run (see the module docstring for the three states)."""

    score: float | None
    disqualified: bool = False
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.score is not None:
            if not math.isfinite(self.score) or not 0.0 <= self.score <= 1.0:
                raise ValueError(f"a judge score must be in [0, 1], got {self.score!r}")
            if self.disqualified:
                raise ValueError("a disqualified result carries no score")

    @classmethod
    def scored(
        cls, score: float, details: Mapping[str, Any] | None = None, reason: str = ""
    ) -> "JudgeResult":
        """A score in [0, 1] (clamped against float round-off), lower is better."""
        return cls(score=clamp01(score), reason=reason, details=dict(details or {}))

    @classmethod
    def no_data(cls, reason: str, details: Mapping[str, Any] | None = None) -> "JudgeResult":
        """The judge abstains for this run; it drops out of the combination."""
        return cls(score=None, reason=reason, details=dict(details or {}))

    @classmethod
    def disqualify(cls, reason: str, details: Mapping[str, Any] | None = None) -> "JudgeResult":
        """The run is broken; it ranks below every qualified run."""
        return cls(score=None, disqualified=True, reason=reason, details=dict(details or {}))

    @property
    def has_score(self) -> bool:
        """True when this result is a usable score (neither no-data nor disqualified)."""
        return self.score is not None and not self.disqualified


def finite_number(value: Any) -> float | None:
    """A stored figure as a float, None when it is not a finite number (text, a bool, NaN, inf):
    how every reader of a judge's record takes its numbers."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def clamp01(value: float) -> float:
    """``value`` clamped into [0, 1]."""
    return min(1.0, max(0.0, float(value)))


def normalise_lower_better(values: Mapping[int, float], *, min_spread: float = 0.0) -> dict[int, float]:
    """Map raw lower-is-better values of several runs onto [0, 1], lower still better.

    The midpoint of the smallest and largest value maps to 0.5 and the range is divided by
    ``spread = max(max - min, min_spread)``; results are clipped to [0, 1]. So when the runs
    differ by more than ``min_spread`` this is plain min-max (best 0, worst 1); when they
    differ by less, the scores stay close to 0.5 instead of blowing noise up to the full
    scale. One run, or runs that are all equal, get 0.5 ("no evidence either way").
    """
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    spread = max(high - low, min_spread)
    if spread <= 0.0:
        return {key: 0.5 for key in values}
    offset = (1.0 - (high - low) / spread) / 2.0  # 0 when spread == high - low: plain min-max
    return {key: clamp01(offset + (value - low) / spread) for key, value in values.items()}


def relative_spread(values: Iterable[float], fraction: float) -> float:
    """``fraction`` of the median magnitude of ``values`` (a scale-free ``min_spread``)."""
    magnitudes = sorted(abs(v) for v in values)
    if not magnitudes or fraction <= 0.0:
        return 0.0
    mid = len(magnitudes) // 2
    median = magnitudes[mid] if len(magnitudes) % 2 else (magnitudes[mid - 1] + magnitudes[mid]) / 2.0
    return fraction * median
