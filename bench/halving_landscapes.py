"""The preset landscapes with time: a config's quality at a fraction ``f`` of its steps (issue 38).

``bench.preset_landscapes.quality`` is a config's true loss at full length; successive halving
decides from what a run shows *before* that. This module adds the curve to the end, with the
dynamics that make an early ranking wrong:

* **speed** — a run closes the gap to its final loss as ``exp(-K * r * P(f))``: ``r`` is its
  effective step relative to the landscape's best (``10 ** x``), ``P(f)`` the integral of its
  LR schedule up to ``f`` (a warm-up ramps, cosine and linear decay). A low rate, or a long
  warm-up, is a *slow starter*: it looks bad at 1/9 and can still win at full length;
* **annealing** — a decaying schedule earns its ``decay_gain`` as the rate decays, so it shows
  little of it at 1/9 and all of it at the end;
* **over-fitting** — the part of the loss that a rate above the best step costs
  (``a_high * x²``) arrives late (``f²``): such a rate looks as good as the best early, and
  worse at the end. The training loss does not show it (it keeps falling; memorisation);
  the validation loss does;
* **config luck** — each config's transient is scaled by ``1 + N(0, LUCK)``: the rank at ``f``
  agrees with the rank at full length only imperfectly even without logging noise.

What a session sees at a rung (``evidence``): the **validation loss** at the rung step where
the preset's trainer logs one (``Trainer.validation_tags``: sd-scripts' network trainers) —
the curve times ``1 + N(0, land.noise)`` — else the **training loss**, logged every step with
diffusion-like noise (``SIGMA_STEP`` per step, relative), read as the session reads it: its
bias-corrected EMA (``smoothed``), or the EMA minus the trend over the last half of the steps
(``trend``). At full length every strategy sees the session's score, the true loss times
``1 + N(0, land.noise)``, as ``bench/preset_search.py`` does. ``SIGMA_STEP`` and ``LUCK`` are
calibrated so that the smoothed training loss ranks random configs against their full-length
quality with a Spearman of about 0.2–0.4 at 1/9 and 0.55–0.8 at 1/3, the issue's independent
measure (``spearman_table``; the benchmark reports it per landscape).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.preset_landscapes import Landscape, diverges, family_of, quality, sample, step_offset, warmup_share

#: steps of a full run in the benchmark (rungs at 1/9 and 1/3 are 100 and 300 steps)
FULL_STEPS = 900
#: how fast a run at the best step closes the gap to its final loss (exp(-K) at f = 1)
K = 40.0
#: the gap at step 0, relative to the reference loss 0.1 (a run starts at about twice its end)
AMPLITUDE = 0.1
#: spread of a config's own transient (its luck with the data and the seed)
LUCK = 0.35
#: per-step relative noise of the logged training loss (diffusion: random timesteps and noise)
SIGMA_STEP = 0.25
#: how much further the training loss falls than the validation loss rises where a rate over-fits
TRAIN_OVERFIT = 1.2
#: the session's EMA weight (bracket.judge.divergence.DEFAULT_EMA_ALPHA)
EMA_ALPHA = 0.1
#: a diverging run is stopped by the divergence monitor after this share of its steps
DIVERGE_AT = 0.1
#: evidence kinds a benchmark can score a rung with
EVIDENCE = ("validation", "smoothed", "trend")


def _schedule(config: Mapping[str, Any]) -> str:
    return str(config.get("lr_scheduler") or "constant")


def lr_share(config: Mapping[str, Any], t: np.ndarray) -> np.ndarray:
    """The LR multiplier at fractions ``t`` of the run: a linear warm-up, then the schedule."""
    warm = warmup_share(config)
    schedule = _schedule(config)
    u = np.clip((t - warm) / max(1e-9, 1 - warm), 0.0, 1.0)
    if schedule.startswith("cosine"):
        after = 0.5 * (1 + np.cos(math.pi * u))
    elif schedule in ("linear", "polynomial"):
        after = 1 - u
    else:
        after = np.ones_like(u)
    ramp = np.clip(t / warm, 0.0, 1.0) if warm > 0 else np.ones_like(t)
    return np.where(t < warm, ramp, after)


_GRID = np.linspace(0.0, 1.0, 1801)


@dataclass
class Curve:
    """One config's noise-free curves on one landscape (validation and training loss at f)."""

    config: Mapping[str, Any]
    land: Landscape
    luck: float = 0.0
    final: float = field(init=False)
    diverged: bool = field(init=False)

    def __post_init__(self) -> None:
        self.final = quality(self.config, self.land)
        self.diverged = diverges(self.config, self.land)
        x, _ = step_offset(self.config, self.land)
        self._rate = 10 ** min(x, 1.5)
        share = lr_share(self.config, _GRID)
        self._integral = np.concatenate(([0.0], np.cumsum((share[1:] + share[:-1]) / 2 * np.diff(_GRID))))
        self._share = share
        decays = _schedule(self.config) in ("cosine", "linear", "cosine_with_restarts", "polynomial")
        self._gain = self.land.decay_gain if decays and family_of(self.config) in self.land.decay_for else 0.0
        base = 0.1 * self.land.family.get(family_of(self.config), 1.0)
        self._overfit = base * self.land.a_high * x * x * (1 - self._gain) if x > 0 else 0.0

    def _gap(self, f: np.ndarray) -> np.ndarray:
        return np.exp(-K * self.land.speed * self._rate * np.interp(f, _GRID, self._integral))

    def validation(self, f: Sequence[float] | np.ndarray) -> np.ndarray:
        """The true (held-out) loss at fractions ``f``; equals ``quality`` at f = 1."""
        f = np.asarray(f, dtype=float)
        if self.diverged:
            return np.full_like(f, self.final)
        annealed = 1 - np.interp(f, _GRID, self._share) if self._gain else np.zeros_like(f)
        unannealed = (1 - self._gain * annealed) / (1 - self._gain) if self._gain else 1.0
        late = self._overfit * (1 - f * f)
        transient = AMPLITUDE * (1 + self.luck) * (self._gap(f) - self._gap(np.ones(1))[0])
        return (self.final - late) * unannealed + transient

    def training(self, f: Sequence[float] | np.ndarray) -> np.ndarray:
        """The training loss at fractions ``f``: the validation curve without the over-fit
        (which it does not show) and falling further where the rate is high."""
        f = np.asarray(f, dtype=float)
        return self.validation(f) - TRAIN_OVERFIT * self._overfit * f * f


def ema_last(values: np.ndarray, alpha: float = EMA_ALPHA) -> float:
    """The last point of the bias-corrected EMA (as bracket.judge.divergence.ema)."""
    n = len(values)
    weights = (1 - alpha) ** np.arange(n - 1, -1, -1)
    return float(np.dot(weights, values) / weights.sum())


class RunLog:
    """What one config's run logs, step by step; resumed runs continue the same series."""

    def __init__(self, curve: Curve, rng: random.Random, full_steps: int = FULL_STEPS) -> None:
        self.curve = curve
        self.full_steps = full_steps
        generator = np.random.default_rng(rng.getrandbits(32))
        self._step_noise = generator.standard_normal(full_steps)
        self._val_noise = generator.standard_normal(64)
        self._val_used: dict[int, float] = {}
        steps = np.arange(1, full_steps + 1) / full_steps
        self._train = curve.training(steps) * np.maximum(0.05, 1 + SIGMA_STEP * self._step_noise)

    def evidence(self, step: int, kind: str) -> float:
        """The rung score at ``step``: ``validation``, ``smoothed`` or ``trend`` (see the module)."""
        if self.curve.diverged:
            return self.curve.final * (1 + 0.02 * self._val_noise[0])
        if kind == "validation":
            if step not in self._val_used:
                index = len(self._val_used) % len(self._val_noise)
                value = self.curve.validation([step / self.full_steps])[0]
                self._val_used[step] = float(value * (1 + self.curve.land.noise * self._val_noise[index]))
            return self._val_used[step]
        series = self._train[:step]
        smoothed = ema_last(series)
        if kind == "smoothed":
            return smoothed
        if kind == "trend":
            half = series[len(series) // 2:]
            t = np.arange(len(half))
            slope = float(np.polyfit(t, half, 1)[0]) if len(half) > 2 else 0.0
            return smoothed + slope * (self.full_steps - step) * TREND_REACH
        raise ValueError(f"unknown evidence {kind!r}")


#: how far the trend is carried towards the end (a share of the remaining steps)
TREND_REACH = 0.25


def evidence_kind(preset: str) -> str:
    """The rung evidence a session has on ``preset``: validation loss where its trainer logs one."""
    from bracket.registry import get_preset

    trainer = get_preset(preset).trainer_factory({})
    return "validation" if trainer.validation_tags else "smoothed"


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


def spearman_table(land: Landscape, space, fractions: Sequence[float], *, samples: int = 200, seed: int = 0,
                   kinds: Sequence[str] = EVIDENCE) -> dict[str, dict[str, float]]:
    """Spearman between the evidence at each fraction and the true full-length quality, over
    ``samples`` random configs of ``space`` that do not diverge (the divergence monitor stops
    those whatever the rung): ``{kind: {"1/9": rho, ...}}``."""
    from bracket.search.halving import share_label

    rng = random.Random(seed)
    logs = []
    while len(logs) < samples:
        config = sample(space, rng)
        curve = Curve(config, land, luck=rng.gauss(0, LUCK))
        if not curve.diverged:
            logs.append(RunLog(curve, rng))
    finals = [log.curve.final for log in logs]
    out: dict[str, dict[str, float]] = {}
    for kind in kinds:
        out[kind] = {share_label(f): spearman([log.evidence(max(2, round(f * FULL_STEPS)), kind) for log in logs],
                                              finals) for f in fractions}
    return out
