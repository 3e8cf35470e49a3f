"""Shape draws: the sampler's first proposals keep the best step and vary everything else.

TPE models each knob on its own scale and does not know that, for LoRA, the learning rate and
``alpha / rank`` make one effective step: built on one best config, its first proposals scatter
that step by a decade while the schedule, warm-up and rank stay near the best config's. A
person who found the right step does the opposite. The first :attr:`ShapeRule.trials` sampler
proposals do that (:func:`shape_draw`):

* **kept**: the best config's batch and its *effective step* (the step knob,
  :func:`bracket.search.lr_bracket.step_knob`; for a LoRA with rank and alpha knobs, alpha is
  the choice nearest the best ``alpha / rank`` at the new rank and the rate makes up for the
  rounding); the optimizer varies only among those the same step knob drives;
* **varied**: every other searched knob. A choice knob takes the value the session has tried
  least (running configs count), never the best config's own while another is left; a numeric
  knob takes one value from each of ``trials`` equal slices of its range (a Latin hypercube).

"Best" is the best scored config that did not diverge, re-read before every draw. A draw is a
pure function of the session's history and seed, so several workers make different draws and a
restart continues the design. Measured side by side with ``bracket@no-shapes`` by
``python -m bench presets`` (docs/BENCHMARKS.md); docs/SEARCH.md says where the draws sit.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bracket.search.lr_bracket import ADAPTIVE_KNOBS, BATCH_KNOBS, KNOB, OPTIMIZER_KNOBS, step_knob
from bracket.search.space import CategoricalKnob, FloatKnob, IntKnob, SearchSpace
from bracket.search.types import WARM_START_KINDS, ScoredConfig

SEARCH_KIND = "search"
#: a draw is a config of kind ``search`` named ``shape-N`` (N its trial number + 1, like ``search-N``)
NAME_PREFIX = "shape-"
#: the draw's origin, stored with its Optuna trial (the "why" of a config)
SOURCE = ("shape draw: the best config so far with its optimizer family and effective step "
          "(rate x alpha/rank) kept and its other knobs (schedule, warm-up, rank…) spread")
#: LoRA rank and alpha as separate knobs: alpha follows the rank so that alpha/rank stays
RANK, ALPHA = "network_dim", "network_alpha"
#: knobs a draw copies from the best config (with the step knob and alpha)
KEPT = (*OPTIMIZER_KNOBS, *BATCH_KNOBS, "lora_alpha_ratio", KNOB, *ADAPTIVE_KNOBS)


@dataclass(frozen=True)
class ShapeRule:
    """How many of the sampler's first proposals are shape draws."""

    trials: int = 4
    #: also vary the optimizer among those whose step is set by the same knob (AdamW, its
    #: 8-bit form, Adafactor: the learning rate), the best one's tried last
    optimizers: bool = True
    #: a choice knob's value: ``"least-tried"`` (the value the session has trained least, ties
    #: in a shuffled order) or ``"shuffled"`` (a shuffled order, the same for every draw)
    order: str = "least-tried"


DEFAULT_RULE = ShapeRule()


def shape_draw(history: Sequence[ScoredConfig], space: SearchSpace, rule: ShapeRule | None = DEFAULT_RULE,
               seed: int = 0) -> dict[str, Any] | None:
    """The next sampler proposal as a full config when it should be a shape draw, else None
    (no rule, the draws made, no scored config that did not diverge, or one without a step
    knob)."""
    if rule is None:
        return None
    index = sum(1 for h in history if h.kind == SEARCH_KIND)
    if index >= rule.trials:
        return None
    scored = [h for h in history if h.value is not None and not h.diverged and _complete(h)]
    if not any(h.kind in WARM_START_KINDS for h in scored):
        return None  # no warm start: nothing to keep yet, TPE's own start-up explores
    centre = space.complete(min(scored, key=lambda h: h.scored_value).params)
    name = step_knob(centre, space)
    if name is None:
        return None
    def value(knob_name: str, knob: Any, config: dict[str, Any]) -> Any:
        if knob_name in OPTIMIZER_KNOBS and isinstance(knob, CategoricalKnob) and rule.optimizers:
            same_step = tuple(c for c in knob.choices if _keeps_step(space, name, {**config, knob_name: c}))
            choices = CategoricalKnob(same_step or (centre[knob_name],))
            return _spread(knob_name, choices, centre.get(knob_name), index, rule.trials, seed,
                           _tried(history, knob_name, rule))
        if knob_name in KEPT and knob_name in centre:
            return centre[knob_name]
        if knob_name == ALPHA and RANK in config and ALPHA in centre and RANK in centre:
            ratio = centre[ALPHA] / centre[RANK]
            return _alpha_for(knob, config[RANK], ratio) if ratio > 0 else centre[ALPHA]
        return _spread(knob_name, knob, centre.get(knob_name), index, rule.trials, seed,
                       _tried(history, knob_name, rule))
    config = space.fill(value)
    if name == KNOB and ALPHA in config and ALPHA in centre:
        knob = space[KNOB]
        assert isinstance(knob, (FloatKnob, IntKnob)), "the learning rate is a numeric knob (step_knob)"
        rate = centre[KNOB] * (centre[ALPHA] / centre[RANK]) / (config[ALPHA] / config[RANK])
        config[KNOB] = min(max(rate, knob.low), knob.high)
    return config


def _complete(item: ScoredConfig) -> bool:
    from optuna.trial import TrialState

    return item.state == TrialState.COMPLETE


def _tried(history: Sequence[ScoredConfig], name: str, rule: ShapeRule) -> Counter | None:
    """How often each value of ``name`` is in the history (running configs included)."""
    if rule.order != "least-tried":
        return None
    return Counter(repr(h.params[name]) for h in history if name in h.params)


def _keeps_step(space: SearchSpace, step: str, partial: dict[str, Any]) -> bool:
    """Whether the step knob ``step`` is active with the optimizer in ``partial``."""
    return space.is_active(step, partial)


def _alpha_for(knob: Any, rank: Any, ratio: float) -> Any:
    """The alpha whose alpha/rank is nearest ``ratio``: of a choice knob the nearest choice (in
    log; the smaller on a tie), of a numeric one ``rank * ratio`` within its bounds."""
    if isinstance(knob, CategoricalKnob):
        positive = sorted(a for a in knob.choices if a > 0)
        if not positive:
            return knob.choices[0]
        return min(positive, key=lambda a: abs(math.log(a / rank) - math.log(ratio)))
    value = min(max(rank * ratio, knob.low), knob.high)
    return round(value) if isinstance(knob, IntKnob) else value


def _spread(name: str, knob: Any, own: Any, index: int, trials: int, seed: int,
            tried: Counter | None = None) -> Any:
    """Draw ``index`` of ``trials`` for one knob: the same shuffle for every draw of a session;
    a choice knob's value the least ``tried`` one (when given) other than ``own``."""
    order = random.Random(f"{seed}:{name}")
    if isinstance(knob, CategoricalKnob):
        others = [c for c in knob.choices if c != own]
        order.shuffle(others)
        if tried is not None:
            return min(others, key=lambda c: (tried[repr(c)], others.index(c))) if others else own
        values = others + [c for c in knob.choices if c == own]
        return values[index % len(values)]
    slices = list(range(trials))
    order.shuffle(slices)
    u = (slices[index] + random.Random(f"{seed}:{name}:{index}").random()) / trials
    if isinstance(knob, FloatKnob):
        if knob.log:
            return math.exp(math.log(knob.low) + u * (math.log(knob.high) - math.log(knob.low)))
        return knob.low + u * (knob.high - knob.low)
    if isinstance(knob, IntKnob):
        count = (knob.high - knob.low) // knob.step + 1
        return knob.low + knob.step * min(int(u * count), count - 1)
    return own
