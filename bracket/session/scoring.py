"""Scores of a session's runs, computed from the store's current contents.

Scores are derived, never frozen: the loss judge normalises across every run of the
session and human ratings arrive at any time, so each read (the UI's snapshot, the
controller's next suggestion, the report) recomputes them from the runs, ratings and
comparisons as they are now. The judges themselves are pure functions in
``bracket.judge``; this module only gathers their inputs and combines their outputs.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

SCORED_STATUSES = ("done", "disqualified", "pruned")


@dataclass
class RunScore:
    """The combined score of one run and what it is made of."""

    value: float | None
    judges: dict[str, float | None] = field(default_factory=dict)
    used: list[str] = field(default_factory=list)
    disqualified: bool = False
    reason: str = ""


def _ema_final(series: Sequence[Sequence[float]], alpha: float = 0.3) -> float | None:
    ema = None
    for _step, value in series:
        if not math.isfinite(value):
            return math.nan
        ema = value if ema is None else alpha * value + (1 - alpha) * ema
    return ema


def score_runs(runs: Sequence[Mapping[str, Any]], ratings: Sequence[Mapping[str, Any]] = (),
               comparisons: Sequence[Mapping[str, Any]] = (), weights: Mapping[str, float] | None = None
               ) -> dict[int, RunScore]:
    """Combined scores (lower is better, in [0, 1]) of every finished run."""
    finals: dict[int, float] = {}
    scores: dict[int, RunScore] = {}
    for run in runs:
        if run.get("status") not in SCORED_STATUSES or run.get("kind") == "setup":
            continue
        final = _ema_final(run.get("loss") or [])
        if final is None or not math.isfinite(final) or run.get("status") == "pruned":
            reason = run.get("failure_reason") or ("no loss logged" if final is None else "loss is NaN/inf")
            scores[run["id"]] = RunScore(1.0, {"loss": 1.0}, ["loss"], disqualified=True, reason=reason)
        else:
            finals[run["id"]] = final
    if finals:
        low, high = min(finals.values()), max(finals.values())
        for run_id, final in finals.items():
            value = 0.5 if high == low else (final - low) / (high - low)
            scores[run_id] = RunScore(value, {"loss": value}, ["loss"])
    return scores


def config_values(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, RunScore]) -> dict[int, float]:
    """Mean combined score per config id over its scored runs."""
    per_config: dict[int, list[float]] = {}
    for run in runs:
        score = scores.get(run["id"])
        if run.get("config_id") is None or score is None or score.value is None:
            continue
        per_config.setdefault(run["config_id"], []).append(score.value)
    return {config_id: statistics.fmean(values) for config_id, values in per_config.items()}
