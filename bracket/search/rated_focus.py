"""Propose near the configs a person rated best once their ratings disagree with the loss.

Once a person rates runs, the sampler sees their verdicts (``bracket.session.scoring.sampler_values``)
and TPE proposes near the configs in its good set. But TPE's good set is a share of *every*
config, so the unrated ones with a predicted verdict sit in it too, and TPE spreads its
proposals over all the regions of its good set. When the person likes what the loss does not —
the config the loss ranks best among the rated ones is not among those they rated best — the
region they like is usually small (another step, another rank), and a proposal somewhere in the
good set reaches it by chance. A person would try the config they like with one knob changed.

:func:`focus_draw` does that. While the ratings disagree with the loss (:func:`ratings_disagree`),
each sampler proposal after the shape draws (:attr:`FocusRule.every`) is a **focus draw** (kind ``search``, named
``focus-N``): the best-rated config (the best verdict among the rated configs; a tie goes to
the config tried last, so that a tie keeps moving) with its effective step moved by up to
:attr:`FocusRule.step_decades` decades and :attr:`FocusRule.knobs` other knobs changed — a choice
knob to a neighbouring choice (numbers) or another choice, a numeric knob a step or a fraction of its range,
the optimizer only among those the same step knob drives. A draw never repeats a config the
session has (the next change is tried). It compares ``ScoredConfig.verdict`` with ``measured``
(the same runs; in a halving search, at one rung). Nothing happens without ratings, without a
measured score, or while the ratings follow the loss: the controller proposes as before.

A pure function of the history and the session's seed, like the other rules the controller asks
(:mod:`bracket.search.shapes`, :mod:`bracket.search.hedge`), so several workers and a restart
reach the same verdict. Measured by ``python -m bench.preset_steering`` (docs/BENCHMARKS.md §4b).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from optuna.trial import TrialState

from bracket.search.knobs import uniform_value
from bracket.search.lr_bracket import OPTIMIZER_KNOBS, step_knob
from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, IntKnob, SearchSpace
from bracket.search.types import ScoredConfig

SEARCH_KIND = "search"
#: a focus draw is a config of kind ``search`` named ``focus-N`` (N its trial number + 1)
NAME_PREFIX = "focus-"
#: its origin, stored with its Optuna trial (the "why" of a config)
SOURCE = ("focus draw: your ratings disagree with the loss, so the config you rated best "
          "with its step moved and one other knob changed")


@dataclass(frozen=True)
class FocusRule:
    """When the ratings count as disagreeing with the loss, and how the draws look."""

    #: rated configs (with a measured score) needed before a verdict
    min_rated: int = 3
    #: the person's verdict of the loss's best rated config must be more than this much worse than
    #: their best verdict (on the human part's scale, where a rating point is 1/9) to count as
    #: disagreeing: half a point, so one whole rating point does
    margin: float = 0.5 / 9.0
    #: every ``every``-th sampler proposal after the shape draws is a focus draw while they
    #: disagree; 1 (all of them) by measurement: with 2 (TPE between the draws) the rated
    #: sessions reached the rater's optimum later (docs/BENCHMARKS.md §4b)
    every: int = 1
    #: the effective step moves by a uniform amount in ± this many decades
    step_decades: float = 0.4
    #: how many other knobs a draw changes
    knobs: int = 1


DEFAULT_RULE = FocusRule()


def _rated(history: Sequence[ScoredConfig]) -> list[tuple[int, ScoredConfig, float, float]]:
    """(place in the history, config, verdict, measured score) of each rated config with both."""
    return [(i, h, h.verdict, h.measured) for i, h in enumerate(history)
            if h.rated and h.verdict is not None and h.measured is not None
            and h.state == TrialState.COMPLETE and not h.diverged]


def ratings_disagree(history: Sequence[ScoredConfig], rule: FocusRule | None = DEFAULT_RULE) -> bool:
    """Whether the person's ratings disagree with the loss: among the rated configs (at least
    ``rule.min_rated``), the one with the best measured score is rated more than ``rule.margin``
    worse than the best-rated one."""
    if rule is None:
        return False
    rated = _rated(history)
    if len(rated) < rule.min_rated:
        return False
    best_verdict = min(verdict for _, _, verdict, _ in rated)
    by_loss_verdict = min(rated, key=lambda item: (item[3], item[0]))[2]
    return by_loss_verdict > best_verdict + rule.margin + 1e-12


def focus_centre(history: Sequence[ScoredConfig]) -> ScoredConfig | None:
    """The best-rated config (a tie: the one tried last), None without a rated config."""
    rated = _rated(history)
    if not rated:
        return None
    return min(rated, key=lambda item: (round(item[2], 9), -item[0]))[1]


def focus_draw(history: Sequence[ScoredConfig], space: SearchSpace, rule: FocusRule | None = DEFAULT_RULE,
               seed: int = 0) -> dict[str, Any] | None:
    """The next sampler proposal as a full config when it should be a focus draw, else None."""
    if rule is None or not ratings_disagree(history, rule):
        return None
    index = sum(1 for h in history if h.kind == SEARCH_KIND)
    if index % max(1, rule.every):
        return None
    centre_item = focus_centre(history)
    if centre_item is None:
        return None
    centre = space.complete(centre_item.params)
    seen = {_key(space.searched_params(space.complete(h.params))) for h in history}
    rng = random.Random(f"{seed}:focus:{index}")
    for _ in range(20):
        config = _moved(centre, space, rule, rng)
        if _key(space.searched_params(config)) not in seen:
            return config
    return None


def _key(params: dict[str, Any]) -> tuple:
    return tuple(sorted((k, round(v, 12) if isinstance(v, float) else v) for k, v in params.items()))


def _moved(centre: dict[str, Any], space: SearchSpace, rule: FocusRule, rng: random.Random) -> dict[str, Any]:
    """``centre`` with its step moved and ``rule.knobs`` other searched knobs changed."""
    step = step_knob(centre, space)
    movable = [name for name, knob in space.items() if name != step and not isinstance(knob, FixedKnob)
               and name in centre and _alternatives(name, knob, centre, space)]
    changed = set(rng.sample(movable, min(rule.knobs, len(movable))))
    def value(name: str, knob: Any, config: dict[str, Any]) -> Any:
        if name == step and name in centre:
            assert isinstance(knob, (FloatKnob, IntKnob)), "a step knob is numeric (step_knob)"
            factor = 10 ** rng.uniform(-rule.step_decades, rule.step_decades)
            return min(max(centre[name] * factor, knob.low), knob.high)
        if name in centre and name not in changed:
            return centre[name]
        if name in changed:
            return rng.choice(_alternatives(name, knob, {**centre, **config}, space))
        return uniform_value(knob, rng)  # newly active (a schedule that takes a warm-up): any value
    return space.complete(space.fill(value))


def _alternatives(name: str, knob: Any, config: dict[str, Any], space: SearchSpace) -> list[Any]:
    """The values ``name`` may change to from ``config[name]``: numbers a neighbour, other
    choices any; an optimizer only one its step knob still drives."""
    own = config.get(name)
    if isinstance(knob, CategoricalKnob):
        others = [c for c in knob.choices if c != own]
        if name in OPTIMIZER_KNOBS:
            step = step_knob(config, space)
            others = [c for c in others if step is not None and space.is_active(step, {**config, name: c})]
        if all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in knob.choices) and own in knob.choices:
            ordered = sorted(knob.choices)
            at = ordered.index(own)
            others = [c for c in (ordered[at - 1] if at > 0 else None, ordered[at + 1] if at + 1 < len(ordered)
                                  else None) if c is not None]
        return others
    if isinstance(knob, IntKnob) and isinstance(own, int):
        return [v for v in (own - knob.step, own + knob.step) if knob.low <= v <= knob.high]
    if isinstance(knob, FloatKnob) and isinstance(own, (int, float)):
        if knob.log and own > 0:
            width = math.log(knob.high / knob.low) / 4
            return [min(max(own * math.exp(s * width), knob.low), knob.high) for s in (-1, 1)]
        width = (knob.high - knob.low) / 4
        return [min(max(own + s * width, knob.low), knob.high) for s in (-1, 1)]
    return []


