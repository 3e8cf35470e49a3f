"""An experiment, not in the app: every other proposal drawn near a person's clear favourite.

TPE proposes around its good set with wide Parzen kernels, so even after a person rates
one run clearly above the rest only about a third of its next proposals land near that run
(docs/BENCHMARKS.md, section 4). This rule spends a share of the proposals on the favourite's
neighbourhood directly: once a rated config is the best-scored config of the session and
beats every other rated config by :data:`MARGIN`, every other sampler proposal
(:data:`SHARE`) is a random draw from a small box around it in *every* searched knob — each
number within :data:`RADIUS` of its range (in log space for log knobs), each choice kept with
probability 1 − :data:`SWITCH` — and the others stay TPE's. The decision is a pure function
of the session's history, like the learning-rate bracket's.

Measured in docs/BENCHMARKS.md section 4, run J: it helped one taste and hurt another, so it
is not in :mod:`bracket.search`; :func:`patch` puts it into the controller of a benchmark
worker process (``bench.steering`` variant ``<mode>@nearfav`` or ``@nearfav=RADIUS``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from optuna.trial import TrialState

from bench import patching
from bracket.search.space import CategoricalKnob, FloatKnob, IntKnob, SearchSpace
from bracket.search.types import ScoredConfig

SEARCH_KIND = "search"
#: score gap (lower is better) by which the favourite must beat the next-best rated config
MARGIN = 0.05
#: every ``1 / SHARE``-th sampler proposal is drawn near the favourite (0.5: every other)
SHARE = 0.5
#: half-width of the box around the favourite, as a share of each number knob's range
RADIUS = 0.1
#: probability that a categorical knob takes another choice than the favourite's
SWITCH = 0.15


def favourite(history: Sequence[ScoredConfig], *, margin: float = MARGIN) -> int | None:
    """Index in ``history`` of the clear rated favourite, or None: a rated config that is the
    best-scored config of all and beats every other rated config by ``margin``."""
    scored = [(i, h) for i, h in enumerate(history) if h.state == TrialState.COMPLETE and h.value is not None]
    rated = sorted((h.value, i) for i, h in scored if h.rated)
    if not rated:
        return None
    value, index = rated[0]
    if any(h.value < value for _, h in scored):  # type: ignore[operator]
        return None
    if len(rated) > 1 and rated[1][0] - value < margin:
        return None
    return index


def near(space: SearchSpace, centre: dict[str, Any], rng: random.Random, *, radius: float = RADIUS,
         switch: float = SWITCH) -> dict[str, Any]:
    """A config drawn from the box around ``centre`` (searched params) inside ``space``."""
    out: dict[str, Any] = {}
    for name in space.searched():
        knob = space[name]
        value = centre.get(name)
        if isinstance(knob, CategoricalKnob):
            if value not in knob.choices or (len(knob.choices) > 1 and rng.random() < switch):
                others = [c for c in knob.choices if c != value] or list(knob.choices)
                value = rng.choice(others)
            out[name] = value
        elif isinstance(knob, (FloatKnob, IntKnob)):
            log = knob.log and knob.low > 0
            low, high = (math.log(knob.low), math.log(knob.high)) if log else (float(knob.low), float(knob.high))
            if value is None:
                x = rng.uniform(low, high)
            else:
                x0 = math.log(value) if log else float(value)
                width = radius * (high - low)
                x = rng.uniform(max(low, x0 - width), min(high, x0 + width))
            v = math.exp(x) if log else x
            if isinstance(knob, IntKnob):
                step = 1 if knob.log else knob.step
                v = knob.low + round((v - knob.low) / step) * step
                v = int(min(max(v, knob.low), knob.high))
            else:
                v = float(min(max(v, knob.low), knob.high))
            out[name] = v
    return {k: v for k, v in space.searched_params(space.complete(out)).items()}


def next_near_favourite(history: Sequence[ScoredConfig], space: SearchSpace, seed: int, *,
                        share: float = SHARE, radius: float = RADIUS) -> tuple[dict[str, Any], int] | None:
    """The params of the next proposal near the favourite and the favourite's index in
    ``history``, or None when this proposal should be TPE's (no clear favourite, or not its turn)."""
    at = favourite(history)
    if at is None or share <= 0:
        return None
    made = sum(1 for h in history if h.kind == SEARCH_KIND)
    every = max(1, round(1 / share))
    if made % every:
        return None
    rng = random.Random(seed * 1_000_003 + made)
    return near(space, history[at].params, rng, radius=radius), at




def patch(undo: bool = False, radius: float = RADIUS) -> None:
    """Make :meth:`bracket.search.controller.SearchController.next` enqueue the draw near the
    favourite when it is its turn (in this process); ``undo`` restores the controller's own."""
    from bracket.search import controller

    original = patching.own(controller.SearchController, "next")
    if undo:
        patching.restore(controller.SearchController, "next")
        return

    def next_near(self: Any) -> Any:
        if not self.waiting_count():
            history = list(self._history())
            step = next_near_favourite(history, self.space, self.sampler._seed, radius=radius)
            if step is not None:
                self.study.enqueue_trial(step[0], user_attrs={"kind": "search"})
        return original(self)

    patching.replace(controller.SearchController, "next", next_near)
