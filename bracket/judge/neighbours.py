"""A judge's estimate for a run it has not scored, learned from the runs of *similar* configs.

:func:`bracket.judge.combine.estimate_missing` gives every unscored run one shared estimate:
the mean of the judge's scores, shrunk toward "no opinion". A person's rating of a config,
though, says most about configs *like* it — the same optimizer at a nearby learning rate —
and little about a config three decades away with another optimizer. So each unscored run
gets its own estimate, a kernel-weighted mean of the scored runs (Nadaraya–Watson
regression over the configs' params), shrunk toward the shared estimate::

    w_i      = exp(-½ (d(run, scored run i) / NEIGHBOUR_SCALE)²)
    estimate = (Σ w_i · score_i + NEIGHBOUR_PRIOR · shared) / (Σ w_i + NEIGHBOUR_PRIOR)

``d`` is :func:`bracket.judge.informative.param_distance` (0 same config, 1 nothing alike:
the mean over the knobs of decades apart for positive numbers, capped at 1, relative
difference for other numbers, 0/1 for choices) over the knobs that vary among the runs
being scored. What follows:

* no score at all: no estimate (the judge drops out, as before);
* a scored run right next to an unscored one (``d`` = 0, e.g. another seed of its config)
  counts as much as the shared estimate: one 10 there pulls the neighbour halfway from the
  shared estimate toward 0; at ``d`` = NEIGHBOUR_SCALE it counts 0.61, at twice that 0.14,
  so a rating moves its config's neighbourhood and hardly anything far away;
* many scored neighbours: the estimate follows their mean (the prior is one pseudo-run);
* runs without params (or whose params are all alike) keep the shared estimate.

The uncertainty stays the shared estimate's predictive spread (the leaderboard shows it, and
:mod:`bracket.judge.informative` shrinks it near rated configs for choosing what to rate).
This module is pure (numpy only); :func:`bracket.session.scoring.score_runs` applies it, so
the standings and the sampler see the same estimate.
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
#: pseudo-runs at the shared estimate: one, so a single identical neighbour pulls halfway
NEIGHBOUR_PRIOR = 1.0

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
    (run id -> score) weighted by how similar their ``params`` are, shrunk toward ``shared``
    (see the module docstring). ``Estimate.near`` is the summed weight of the neighbours.
    With ``scale`` 0, or no params that vary, every target gets ``shared``."""
    targets = list(targets)
    known = [i for i in scored if params.get(i)]
    if scale <= 0 or not targets or not known or not any(params.get(i) for i in targets):
        return {i: shared for i in targets}
    keys = varying_keys([params.get(i) or {} for i in targets + known])
    if not keys:
        return {i: shared for i in targets}
    distances = distance_matrix([params.get(i) or {} for i in targets], [params[i] for i in known], keys)
    weights = np.exp(-0.5 * (distances / scale) ** 2)
    for row, run_id in enumerate(targets):
        if not params.get(run_id):
            weights[row, :] = 0.0  # a run without params learns nothing from its "neighbours"
    values = np.array([float(scored[i]) for i in known])
    near = weights.sum(axis=1)
    estimate = (weights @ values + prior * shared.value) / (near + prior)
    return {run_id: Estimate(value=float(min(1.0, max(0.0, estimate[row]))), uncertainty=shared.uncertainty,
                             count=shared.count, near=float(near[row]))
            for row, run_id in enumerate(targets)}
