"""A judge's estimate for a run it has not scored, learned from the runs of *similar* configs.

A rating of a config says most about configs like it (the same optimizer at a nearby learning
rate) and little about one far away. Each unscored run gets a kernel-weighted mean of the
scored runs (Nadaraya-Watson regression over the configs' params) and an **evidence**::

    w_i      = exp(-½ (d(run, scored run i) / NEIGHBOUR_SCALE)²)
    value    = Σ w_i · score_i / Σ w_i
    evidence = Σ w_i / (Σ w_i + NEIGHBOUR_PRIOR)

``d`` is :func:`bracket.judge.informative.param_distance` over the knobs that vary among the
runs. :func:`bracket.judge.combine.combine_scores` weighs the estimate by its judge's weight
times the evidence (never more than the measured loss's weight), so little evidence means
little say rather than a made-up middle rating; the value never leaves the range of the scores
it rests on; with no score at all there is no estimate. Pure (numpy only);
:func:`bracket.session.scoring.run_scores.score_runs` applies it, so the standings and the
sampler see the same estimate. docs/SCORING.md, "Runs a judge has not seen", gives the numbers
and what they guarantee.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bracket.judge.combine import Estimate

#: the distance at which a scored run's weight has fallen to exp(-½) ≈ 0.61 (in
#: :func:`~bracket.judge.informative.param_distance` units: with four searched knobs, a
#: different choice on one knob alone is 0.25 — weight 0.25; the same choices at a learning
#: rate 2× apart 0.075 — weight 0.88)
NEIGHBOUR_SCALE = 0.15
#: pseudo-runs of "no information" behind an estimate's evidence: one, so another seed of a
#: rated config (weight 1) gives evidence ½ — the human judge's weight 2 × ½ = the loss's 1
NEIGHBOUR_PRIOR = 1.0

#: the least evidence at which an estimate is shown to a person (``bracket.standings.parts.informed``):
#: the configs it rests on weigh at least half a score of the run's own config (the same choices at
#: a learning rate up to about 5× away, with four searched knobs). Below it the estimate rests on
#: nothing similar — one rating far away says nothing about this config — so it reads "not rated"
INFORMED = 1.0 / 3.0

_MISSING = object()


def varying_keys(params: Sequence[Mapping[str, Any]]) -> list[str]:
    """The keys whose values differ (or are missing) among ``params``, sorted."""
    keys = sorted({key for p in params for key in p})
    varying = []
    for key in keys:
        values = [p.get(key, _MISSING) for p in params]
        if any(v != values[0] for v in values[1:]):
            varying.append(key)
    return varying


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(float(value))


def distance_matrix(rows: Sequence[Mapping[str, Any]], columns: Sequence[Mapping[str, Any]],
                    keys: Sequence[str]) -> np.ndarray:
    """``param_distance`` of every row against every column over ``keys``, vectorised
    (``len(rows) × len(columns)``; zeros when ``keys`` is empty)."""
    total = np.zeros((len(rows), len(columns)))
    counted = np.zeros((len(rows), len(columns)))
    if not keys:
        return total
    for key in keys:
        a = [r.get(key, _MISSING) for r in rows]
        b = [c.get(key, _MISSING) for c in columns]
        na = np.array([_number(v) for v in a])
        nb = np.array([_number(v) for v in b])
        xa = np.array([float(v) if n else np.nan for v, n in zip(a, na)])
        xb = np.array([float(v) if n else np.nan for v, n in zip(b, nb)])
        both = na[:, None] & nb[None, :]
        positive = both & (np.nan_to_num(xa)[:, None] > 0) & (np.nan_to_num(xb)[None, :] > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.abs(np.log10(np.where(positive, xa[:, None], 1.0))
                          - np.log10(np.where(positive, xb[None, :], 1.0)))
            scale = np.maximum(np.maximum(np.abs(xa)[:, None], np.abs(xb)[None, :]), 1e-12)
            relative = np.abs(xa[:, None] - xb[None, :]) / scale
        codes: dict[Any, int] = {}
        ca = np.array([-1 if v is _MISSING else codes.setdefault(repr(v), len(codes)) for v in a])
        cb = np.array([-2 if v is _MISSING else codes.setdefault(repr(v), len(codes)) for v in b])
        unequal = (ca[:, None] != cb[None, :]).astype(float)
        per_key = np.where(positive, np.minimum(1.0, logs),
                           np.where(both, np.minimum(1.0, np.nan_to_num(relative)), unequal))
        present = (ca >= 0)[:, None] | (cb >= 0)[None, :]  # a key neither has does not count
        total += np.where(present, per_key, 0.0)
        counted += present
    return np.where(counted > 0, total / np.maximum(counted, 1), 0.0)


def neighbour_estimates(shared: Estimate, scored: Mapping[int, float], params: Mapping[int, Mapping[str, Any]],
                        targets: Sequence[int], *, scale: float = NEIGHBOUR_SCALE,
                        prior: float = NEIGHBOUR_PRIOR) -> dict[int, Estimate]:
    """Per run in ``targets`` (not scored by the judge): its estimate from the ``scored`` runs
    (run id -> score) weighted by how similar their ``params`` are, with its evidence (see
    the module docstring). ``Estimate.near`` is the summed weight of the scored runs. With
    ``scale`` 0 every target gets ``shared`` as it is (the old shared estimate, at full weight)."""
    targets = list(targets)
    known = list(scored)
    if scale <= 0 or not targets or not known:
        return {i: shared for i in targets}
    keys = varying_keys([params.get(i) or {} for i in targets + known])
    distances = distance_matrix([params.get(i) or {} for i in targets], [params.get(i) or {} for i in known], keys)
    weights = np.exp(-0.5 * (distances / scale) ** 2)
    values = np.array([float(scored[i]) for i in known])
    near = weights.sum(axis=1)
    out = {}
    for row, run_id in enumerate(targets):
        value = float(weights[row] @ values / near[row]) if near[row] > 0 else shared.value
        out[run_id] = Estimate(value=min(1.0, max(0.0, value)), uncertainty=shared.uncertainty, count=shared.count,
                               near=float(near[row]), evidence=float(near[row] / (near[row] + prior)))
    return out
