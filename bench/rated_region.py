"""An experiment: proposals drawn from a *rated neighbourhood*, in a box that shrinks as it fills.

Run J (docs/BENCHMARKS.md, section 4, :mod:`bench.near_favourite`) drew every other proposal
from a fixed box around the one best-rated config; the favourite usually sat at 1.05–1.2x the
rater's optimum, so the box was mostly outside the 5 % region. This rule acts only when
several ratings *agree*: the best-scored rated search config and the rated configs near it
(:func:`bracket.judge.informative.param_distance` at most :data:`NEAR`) whose scores are within
:data:`MARGIN` of it (about one rating point at the default human weight) form the
neighbourhood; with at least :data:`MIN_AGREE` of them, every other sampler proposal is drawn
from it:

* numbers (log space for log knobs, as a share of the knob's range): a normal draw around the
  neighbourhood's weighted mean (better-scored members weigh more), with a spread of the
  members' own spread or ``WIDTH / sqrt(members)``, whichever is larger — so the box shrinks
  as agreeing rated neighbours accumulate, and follows them where they lean;
* choices: drawn from the members' weighted choices, with a small share ``SWITCH / members``
  of any other choice.

Variant ``liked`` (``<mode>@region=liked``) counts only configs the person rated at least
:data:`LIKED` (a neighbourhood the person calls good, not one that is merely the best so far).

The decision and the draw are pure functions of the session's history (like the
learning-rate bracket's). :func:`patch` puts the rule into the controller of a benchmark
worker (``bench.steering`` variant ``<mode>@region``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

from optuna.trial import TrialState

from bench import patching
from bracket.judge.informative import param_distance
from bracket.search.space import CategoricalKnob, FloatKnob, IntKnob, SearchSpace
from bracket.search.types import ScoredConfig

SEARCH_KIND = "search"
#: members of the neighbourhood (the centre included) before the rule draws anything
MIN_AGREE = 2
#: how far (param_distance) a rated config may be from the best rated one to count as its neighbour
NEAR = 0.3
#: how much worse (combined score) than the best rated config a neighbour may be to agree
MARGIN = 0.08
#: every ``1 / SHARE``-th sampler proposal comes from the neighbourhood
SHARE = 0.5
#: the spread of a number knob (share of its range) with one member; / sqrt(members) after
WIDTH = 0.12
#: the share of other choices of a categorical knob with one member; / members after
SWITCH = 0.2
#: with ``liked``: the least mean rating (1-10) of a member ("the person says it is good")
LIKED = 8.0


def neighbourhood(history: Sequence[ScoredConfig], space: SearchSpace, *, near: float = NEAR,
                  margin: float = MARGIN, min_agree: int = MIN_AGREE,
                  liked: Callable[[dict[str, Any]], bool] | None = None) -> list[tuple[ScoredConfig, float]]:
    """The rated neighbourhood as (config, weight) pairs, best first; empty when fewer than
    ``min_agree`` rated configs agree (see the module docstring). ``liked(params)``: only
    configs the person rated highly count (``<mode>@region=liked``: a mean rating of at
    least :data:`LIKED`)."""
    searched = set(space.searched())
    rated = sorted((h for h in history if h.rated and h.value is not None and h.state == TrialState.COMPLETE
                    and (liked is None or liked(h.params))),
                   key=lambda h: h.value)  # type: ignore[arg-type, return-value]
    if not rated:
        return []
    best = rated[0]
    keep = {k: v for k, v in best.params.items() if k in searched}
    members = [h for h in rated if h.value - best.value <= margin  # type: ignore[operator]
               and param_distance(keep, {k: v for k, v in h.params.items() if k in searched}) <= near]
    if len(members) < min_agree:
        return []
    return [(h, margin - (h.value - best.value) + 1e-3) for h in members]  # type: ignore[operator]


def _unit(knob: Any, value: float) -> tuple[float, float, float, bool]:
    log = bool(knob.log) and knob.low > 0
    low, high = (math.log(knob.low), math.log(knob.high)) if log else (float(knob.low), float(knob.high))
    x = math.log(max(value, 1e-300)) if log else float(value)
    return (x - low) / (high - low) if high > low else 0.5, low, high, log


def draw(space: SearchSpace, members: Sequence[tuple[ScoredConfig, float]], rng: random.Random, *,
         width: float = WIDTH, switch: float = SWITCH) -> dict[str, Any]:
    """One config drawn from the neighbourhood (searched params inside ``space``)."""
    total = sum(w for _, w in members)
    n = len(members)
    out: dict[str, Any] = {}
    for name in space.searched():
        knob = space[name]
        values = [(h.params.get(name), w / total) for h, w in members if h.params.get(name) is not None]
        if isinstance(knob, CategoricalKnob):
            if not values or rng.random() < switch / n:
                out[name] = rng.choice(knob.choices)
                continue
            pick, acc = rng.random(), 0.0
            for value, share in values:
                acc += share / sum(s for _, s in values)
                if pick <= acc:
                    break
            out[name] = value if value in knob.choices else rng.choice(knob.choices)
        elif isinstance(knob, (FloatKnob, IntKnob)):
            if not values:
                continue
            units = [(_unit(knob, float(v))[0], s) for v, s in values]
            weight = sum(s for _, s in units)
            mean = sum(u * s for u, s in units) / weight
            spread = math.sqrt(sum(s * (u - mean) ** 2 for u, s in units) / weight)
            _, low, high, log = _unit(knob, float(values[0][0]))
            u = min(1.0, max(0.0, rng.gauss(mean, max(spread, width / math.sqrt(n)))))
            x = low + u * (high - low)
            v = math.exp(x) if log else x
            if isinstance(knob, IntKnob):
                step = 1 if knob.log else knob.step
                v = int(min(max(knob.low + round((v - knob.low) / step) * step, knob.low), knob.high))
            else:
                v = float(min(max(v, knob.low), knob.high))
            out[name] = v
    return dict(space.searched_params(space.complete(out)))


def next_in_region(history: Sequence[ScoredConfig], space: SearchSpace, seed: int, *, share: float = SHARE,
                   **options: Any) -> dict[str, Any] | None:
    """The params of the next proposal from the rated neighbourhood, or None when this
    proposal should be the sampler's (no agreeing neighbourhood, or not its turn)."""
    members = neighbourhood(history, space, **options)
    if not members or share <= 0:
        return None
    made = sum(1 for h in history if h.kind == SEARCH_KIND)
    if made % max(1, round(1 / share)):
        return None
    rng = random.Random(seed * 1_000_003 + made)
    return draw(space, members, rng)


#: how many proposals the patched controller drew from a neighbourhood in this process
FIRED: list[dict[str, Any]] = []
#: the session the benchmark runs in this process (for ``liked``: its ratings)
SESSION: list[Any] = []


def liked_in(session: Any, least: float = LIKED) -> Callable[[dict[str, Any]], bool]:
    """``liked(params)`` for ``session``: the search config with these params has a mean
    rating of at least ``least``."""
    ratings: dict[int, list[float]] = {}
    for rating in session.store.ratings(session.name):
        ratings.setdefault(int(rating["run_id"]), []).append(float(rating["value"]))
    per_config: dict[int, list[float]] = {}
    for run in session.store.runs(session.name, with_series=False):
        if run["stage"] == "search" and run["id"] in ratings:
            per_config.setdefault(run["config_id"], []).extend(ratings[run["id"]])
    configs = session.store.configs(session.name, stage="search")
    good = [session.space.searched_params(c["params"]) for c in configs
            if per_config.get(c["id"]) and sum(per_config[c["id"]]) / len(per_config[c["id"]]) >= least]
    return lambda params: params in good


def patch(undo: bool = False, **options: Any) -> None:
    """Make :meth:`bracket.search.controller.SearchController.next` enqueue the draw from the
    rated neighbourhood when it is its turn (in this process); ``undo`` restores the controller's own."""
    from bracket.search import controller

    original = patching.own(controller.SearchController, "next")
    if undo:
        patching.restore(controller.SearchController, "next")
        return

    def next_region(self: Any) -> Any:
        if not self.waiting_count():
            extra = dict(options)
            if extra.pop("liked", False) and SESSION:
                extra["liked"] = liked_in(SESSION[-1])
            params = next_in_region(list(self._history()), self.space, self.sampler._seed, **extra)
            if params is not None:
                FIRED.append(params)
                self.study.enqueue_trial(params, user_attrs={"kind": "search"})
        return original(self)

    patching.replace(controller.SearchController, "next", next_region)
