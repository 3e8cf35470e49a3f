"""The value the sampler sees per config once a person has judged some of them: their taste.

The combined score (:mod:`bracket.session.scoring.run_scores`) is what a person reads; it mixes
the loss with the human part, and a config nobody rated gets its human part estimated from
similar configs. For *proposing*, that lets the loss speak for the person: a rated config's
score keeps its loss part, and an unrated config with a good loss sits in TPE's good set beside
the configs the person rated best. So, as soon as a config of the search has a measured human
part (a rating, or a blind choice), the sampler's history uses these values instead (lower is
better, all in the human part's scale, ``(10 - rating) / 9``):

* **a rated config**: the person's verdict alone, the mean of its runs' measured human parts
  (the rating moved by the blind choices, ``bracket.judge.human``);
* **an unrated config**: its predicted verdict. Two predictors, blended by the evidence of the
  first: the verdicts of the *similar* rated configs (the kernel of
  :mod:`bracket.judge.neighbours`, evidence ``near / (near + 1)``), and the person's verdict
  *as a function of the measured score* (the loss, and any automatic judge), fitted on the rated
  configs by isotonic regression: where the person's ratings follow the loss, a good loss
  predicts a good rating; where they do not, the fit is flat and every far-off unrated config
  sits at the rated configs' mean verdict, so the loss alone never lifts it among the best;
* **a disqualified config**: the worst value, 1.0, as in the combined score.

The learning-rate bracket and the shape draws centre on the config with the lowest value, so
with a rating they follow the best-rated config rather than the best loss. Without any human
judgement the values are the combined scores, unchanged.

``taste_readings`` gives each value with its spread, how far the verdict may lie from it
(docs/SCORING.md): "Next unrated" cuts TPE's good set on these.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bracket.judge.combine import PRIOR_COUNT, PRIOR_SD, Estimate
from bracket.judge.neighbours import neighbour_estimates
from bracket.session.scoring.run_scores import WORST, RunScore, config_values

HUMAN = "human"
#: one rating point on the human part's scale (a 1–10 rating: 10 -> 0, 1 -> 1)
ONE_POINT = 1.0 / 9.0


@dataclass(frozen=True)
class Reading:
    """What the sampler sees of one config: its value (lower is better) and how far the person's
    verdict may lie from it (a standard deviation on the same scale; 0 without any judgement)."""

    value: float
    spread: float = 0.0
    judged: bool = False


def measured_verdict(score: RunScore) -> float | None:
    """The run's measured human part (lower is better), None when it is estimated or absent."""
    part = score.parts.get(HUMAN)
    if part is None or part.estimated or not part.weight > 0:
        return None
    return float(part.value)


def measured_score(score: RunScore) -> float | None:
    """The run's score from its measured parts other than the person's (the loss, automatic
    judges), weighted as in the combined score; None when it has none."""
    parts = [p for name, p in score.parts.items() if name != HUMAN and not p.estimated and p.weight > 0]
    total = sum(p.weight for p in parts)
    return sum(p.weight * p.value for p in parts) / total if total > 0 else None


def _per_config(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, RunScore], read: Any) -> dict[int, float]:
    found: dict[int, list[float]] = {}
    for run in runs:
        score = scores.get(run["id"])
        if run.get("config_id") is None or score is None or score.disqualified:
            continue
        value = read(score)
        if value is not None:
            found.setdefault(run["config_id"], []).append(value)
    return {cid: statistics.fmean(values) for cid, values in found.items()}


def config_measured(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, RunScore]) -> dict[int, float]:
    """Config id -> the mean of its runs' :func:`measured_score` (disqualified runs left out):
    what the search compares the person's verdicts with (``bracket.search.rated_focus``)."""
    return _per_config(runs, scores, measured_score)


def taste_curve(measured: Mapping[int, float], verdicts: Mapping[int, float]) -> Any:
    """The person's verdict as a non-decreasing function of the measured score, fitted on the
    configs that have both (isotonic regression); a function of one score. Flat at the mean
    verdict when the ratings do not follow the measured score at all."""
    both = sorted((measured[c], verdicts[c]) for c in verdicts if c in measured)
    if not both:
        mean = statistics.fmean(verdicts.values())
        return lambda x: mean
    from scipy.optimize import isotonic_regression  # here: importing scipy costs seconds, unrated sessions need none

    xs = np.array([x for x, _ in both])
    fitted = isotonic_regression(np.array([y for _, y in both]), increasing=True).x
    return lambda x: float(np.interp(x, xs, fitted))


def residual_spread(curve: Any, measured: Mapping[int, float], verdicts: Mapping[int, float]) -> float:
    """How far the verdicts lie from the taste curve over the judged configs (a standard
    deviation), shrunk to the human prior's spread with :data:`PRIOR_COUNT` pseudo-configs."""
    mean = statistics.fmean(verdicts.values())
    misses = [(v - (curve(measured[c]) if c in measured else mean)) ** 2 for c, v in verdicts.items()]
    return math.sqrt((sum(misses) + PRIOR_COUNT * PRIOR_SD ** 2) / (len(misses) + PRIOR_COUNT))


def taste_readings(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, RunScore],
                   params: Mapping[int, Mapping[str, Any]]) -> dict[int, Reading]:
    """Config id -> what the sampler sees of it (the module docstring), with its spread: a judged
    config :data:`ONE_POINT` over the square root of its judged runs; an unrated one
    ``sqrt(e · ONE_POINT² + (1 − e) · r²)``, ``e`` the similar judged configs' evidence and ``r``
    :func:`residual_spread`. ``params``: config id -> its searched params. The combined scores'
    mean, spread 0, while nobody judged a run."""
    combined = config_values(runs, scores)
    verdicts = _per_config(runs, scores, measured_verdict)
    if not verdicts:
        return {cid: Reading(value) for cid, value in combined.items()}
    judged_runs: dict[int, int] = {}  # per judged config, its runs with a measured verdict
    for run in runs:
        score = scores.get(run["id"])
        if run.get("config_id") in verdicts and score is not None and measured_verdict(score) is not None:
            judged_runs[run["config_id"]] = judged_runs.get(run["config_id"], 0) + 1
    measured = _per_config(runs, scores, measured_score)
    curve = taste_curve(measured, verdicts)
    residual = residual_spread(curve, measured, verdicts)
    unrated = [c for c in combined if c not in verdicts and c in measured]
    shared = Estimate(value=statistics.fmean(verdicts.values()), uncertainty=0.0, count=len(verdicts))
    near = neighbour_estimates(shared, verdicts, params, unrated)
    readings: dict[int, Reading] = {}
    for cid in combined:
        if cid in verdicts:
            readings[cid] = Reading(verdicts[cid], ONE_POINT / math.sqrt(judged_runs.get(cid, 1)), True)
        elif cid not in near:  # every run disqualified: nothing measured
            readings[cid] = Reading(WORST)
        else:
            guess = near[cid]
            by_score = curve(measured[cid])
            e = guess.evidence
            readings[cid] = Reading(e * guess.value + (1.0 - e) * by_score,
                                    math.sqrt(e * ONE_POINT ** 2 + (1.0 - e) * residual ** 2))
    return readings


def sampler_values(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, RunScore],
                   params: Mapping[int, Mapping[str, Any]]) -> dict[int, float]:
    """Config id -> the value the sampler sees (the module docstring); ``params``: config id ->
    its searched params. The combined scores' mean (``config_values``) while nobody judged a run."""
    return {cid: reading.value for cid, reading in taste_readings(runs, scores, params).items()}
