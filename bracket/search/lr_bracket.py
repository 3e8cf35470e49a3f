"""The learning-rate bracket: the best warm-start config again, at a lower and a higher rate.

Curated configs are usually right about a good run's *shape* and less often about its
learning rate, which moves with the dataset, rank, batch and base model. So between the warm
start and the sampler the best warm-start config is trained again at ``learning_rate / factor``
and ``learning_rate * factor`` (``factor`` = sqrt(10)), clamped into the knob's bounds; TPE takes
over after them. Adaptive optimizers get the bracket on the knob that sets their step (Prodigy:
``d_coef``). For LoRA the effective step is the rate times ``alpha / rank`` (:func:`step_of`);
the bracket changes only the rate and keeps rank and alpha.

**The warm start's evidence** (rule ``"evidence"``, the default; :func:`bracket_offsets`): when
the centre's family was tried at other effective steps and all lie on one side, both bracket
configs go to the open side (a quarter and half a decade out); a divergence sends the bracket a
decade down; a family whose every higher step did worse than its lowest has that lowest config
tried a decade lower. ``"fixed"`` is half a decade each way.

The decision is a pure function of the session's history (:func:`next_bracket`): it survives a
restart, and workers asking under the session's row lock never propose the same bracket config
twice; with several workers the bracket waits for the whole warm start to be scored.
Measured by ``python -m bench presets``; docs/SEARCH.md gives the whole order.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bracket.search.space import FloatKnob, IntKnob, SearchSpace
from bracket.search.types import BRACKET_KIND, WARM_START_KINDS, ScoredConfig

#: the knob every trainer in Bracket calls its learning rate
KNOB = "learning_rate"
#: knobs that set an adaptive optimizer's step where ``learning_rate`` stays ~1.0: Prodigy's
#: ``d_coef`` (``--optimizer_args d_coef=…`` in sd-scripts and musubi-tuner, which pass the
#: words to the optimizer's constructor), which scales its estimated step size D
ADAPTIVE_KNOBS = ("prodigy_d_coef",)
#: half a decade each way
DEFAULT_FACTOR = math.sqrt(10.0)
#: one config below the best warm-start rate, one above
TRIALS = 2
KIND = BRACKET_KIND
#: two rates closer than this (in decades) on an otherwise equal config count as the same config
SAME_RATE_DECADES = 0.05
#: bracket rules: ``"evidence"`` (direction and size follow the warm start, see
#: :func:`bracket_offsets`) or ``"fixed"`` (one half-decade each way, what shipped before)
RULES = ("evidence", "fixed")
DEFAULT_RULE = "evidence"
#: a config of the centre's family within this many decades of it closes that side of the bracket
REACH_DECADES = 1.0
#: knobs that name the optimizer (sd-scripts / musubi-tuner, and the LLM trainers)
OPTIMIZER_KNOBS = ("optimizer_type", "optimizer")
#: knobs that set the batch the step is taken on
BATCH_KNOBS = ("effective_batch", "batch_size")
#: words that name an implementation of an algorithm, not another algorithm
_IMPLEMENTATION = re.compile(r"8bit|paged|fused|torch|bnb|hf|_|-|\.")


@dataclass(frozen=True)
class BracketStep:
    """What the bracket phase wants now.

    ``params`` is the next config to train (None when there is none); ``pending`` is True
    while the warm start is still running, so a bracket config may still come later.
    """

    params: dict[str, Any] | None
    name: str = ""
    source: str = ""
    pending: bool = False
    #: sides the bounds took away: clamped into the knob's range they fell onto the centre or a
    #: config already tried (``"the lower side 3.2e-05 is outside the bounds"``)
    skipped: tuple[str, ...] = ()

    @property
    def finished(self) -> bool:
        return self.params is None and not self.pending


def step_knob(params: Mapping[str, Any], space: SearchSpace) -> str | None:
    """The knob that sets the step size of ``params``' optimizer: ``learning_rate`` when
    it is searched on a log scale, else an adaptive optimizer's coefficient
    (:data:`ADAPTIVE_KNOBS`), else None."""
    for name in (KNOB, *ADAPTIVE_KNOBS):
        knob = space.get(name)
        if name in params and isinstance(knob, FloatKnob) and knob.log and space.is_active(name, params):
            return name
    return None


def optimizer_family(name: str) -> str:
    """``adamw`` for AdamW8bit, paged_adamw_8bit, adamw_torch_fused…; ``prodigy`` for
    prodigyopt.Prodigy (a module prefix is dropped); the lower-cased name otherwise."""
    return _IMPLEMENTATION.sub("", str(name).lower().rsplit(".", 1)[-1])


def step_of(params: Mapping[str, Any], space: SearchSpace) -> tuple[str, str, float, Any] | None:
    """(optimizer family, step knob, log10 of the effective step, batch) of ``params``, or
    None when it has no step knob searched on a log scale."""
    knob = step_knob(params, space)
    value = params.get(knob) if knob else None
    if not isinstance(value, (int, float)) or value <= 0:
        return None
    scale = 1.0
    if isinstance(params.get("network_alpha"), (int, float)) and params.get("network_dim"):
        scale = float(params["network_alpha"]) / float(params["network_dim"])
    elif isinstance(params.get("lora_alpha_ratio"), (int, float)):
        scale = float(params["lora_alpha_ratio"])
    if scale <= 0:
        return None
    optimizer = next((str(params[k]) for k in OPTIMIZER_KNOBS if k in params), "")
    batch = next((params[k] for k in BATCH_KNOBS if k in params), None)
    return optimizer_family(optimizer), str(knob), math.log10(float(value) * scale), batch


def next_bracket(history: Sequence[ScoredConfig], space: SearchSpace, *,
                 factor: float = DEFAULT_FACTOR, rule: str = DEFAULT_RULE) -> BracketStep:
    """The next bracket config for this history, or why there is none.

    No bracket when the session had no warm start, when the best warm-start config has no
    step knob searched on a log scale (:func:`step_knob`), or once both bracket configs
    exist. Which configs, in which order: :func:`bracket_offsets` around the best warm-start
    config, the second one replaced by a decade lower for an optimizer family whose every
    warm-start config diverged (rule ``"evidence"``). A candidate that, after clamping into
    the knob's bounds, equals the config it came from or one already trained is skipped;
    one the bounds moved there is named in the step's ``skipped``.
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}")
    warm = [h for h in history if h.kind in WARM_START_KINDS]
    if not warm:
        return BracketStep(None)
    made = [h for h in history if h.kind == KIND]
    if len(made) >= TRIALS:
        return BracketStep(None)
    from optuna.trial import TrialState  # here: opening a session (status) imports no Optuna

    if any(h.state == TrialState.RUNNING for h in warm):
        return BracketStep(None, pending=True)
    scored = [h for h in warm if h.state == TrialState.COMPLETE and h.value is not None]
    if not scored:
        return BracketStep(None)
    skipped: list[str] = []
    for params, name, rate, why in _candidates(scored, made, space, factor, rule):
        knob = space[name]
        assert isinstance(knob, (FloatKnob, IntKnob)), "a step knob is numeric (step_knob)"
        # round, then clamp: in bounds
        wanted = float(f"{params[name]:.3g}")
        candidate = min(max(wanted, knob.low), knob.high)
        params = dict(params, **{name: candidate})
        if abs(math.log10(candidate) - math.log10(rate)) < SAME_RATE_DECADES or any(
                _same(params, h.params, name) for h in history):
            if candidate != wanted and not any(_same(params, h.params, name) for h in made):
                skipped.append(f"the {'lower' if wanted < rate else 'higher'} side {wanted:.2g} is outside the bounds")
            continue
        what = "learning-rate" if name == KNOB else name
        short = "lr" if name == KNOB else name.replace("_", "-")
        label = "lower" if candidate < rate else "higher"
        return BracketStep(params, name=f"{short}-{label}-{candidate:g}",
                           source=f"{what} bracket: {why} at {name} {candidate:g} instead of {rate:g}",
                           skipped=tuple(skipped))
    return BracketStep(None, skipped=tuple(skipped))


def bracket_offsets(scored: Sequence[ScoredConfig], centre: ScoredConfig, space: SearchSpace,
                    factor: float = DEFAULT_FACTOR, rule: str = DEFAULT_RULE) -> list[float]:
    """The bracket's steps from ``centre``'s rate, in decades, in the order they are tried.

    ``"fixed"``: half a decade (``log10(factor)``) down, then up. ``"evidence"``: the
    warm-start configs of the centre's optimizer family at its batch (:func:`step_of`)
    within :data:`REACH_DECADES` of its effective step were all worse than it (it is the
    best). When they all lie above it — the centre is the lowest step tried — the rate
    should not go up: both configs go down, a quarter and half a decade; when they all lie
    below it, both go up. Evidence on both sides, or none, keeps one step each way. A centre
    that diverged itself (so did every warm-start config; the centre is then the one with the
    lowest effective step) goes a decade down, then half — and so does a centre whose
    optimizer family diverged at its effective step or below, at any batch or warm-up
    (:func:`_diverged_at_or_below`): it trained at the edge of divergence.
    """
    h = math.log10(factor)
    if rule == "fixed":
        return [-h, h]
    if centre.diverged or _diverged_at_or_below(scored, centre, space):
        return [-2 * h, -h]
    own = step_of(centre.params, space)
    sides = set()
    for item in scored:
        other = step_of(item.params, space) if item is not centre else None
        if own is None or other is None or other[:2] != own[:2] or other[3] != own[3]:
            continue
        offset = other[2] - own[2]
        if SAME_RATE_DECADES <= abs(offset) <= REACH_DECADES:
            sides.add(1 if offset > 0 else -1)
    if sides == {1}:
        return [-h / 2, -h]
    if sides == {-1}:
        return [h / 2, h]
    return [-h, h]


def slope(history: Sequence[ScoredConfig], space: SearchSpace) -> tuple[ScoredConfig, int] | None:
    """The best trained warm-start config and the way its rate should move (-1 down, +1 up), when
    the warm start says so: every other trained warm-start config of its optimizer family and
    batch within :data:`REACH_DECADES` lies on one side of it (and did worse: it is the best), so
    its family's loss rises that way (:func:`bracket_offsets`' one-sided evidence). None without
    such evidence (one config of the family, configs on both sides, no step knob)."""
    from optuna.trial import TrialState

    scored = [h for h in history if h.kind in WARM_START_KINDS and h.state == TrialState.COMPLETE
              and h.value is not None and not h.diverged]
    if len(scored) < 2:
        return None
    centre = min(scored, key=lambda h: h.scored_value)
    offsets = bracket_offsets(scored, centre, space)
    if all(o < 0 for o in offsets):
        return centre, -1
    if all(o > 0 for o in offsets):
        return centre, 1
    return None


def _diverged_at_or_below(scored: Sequence[ScoredConfig], centre: ScoredConfig, space: SearchSpace) -> bool:
    """Whether a warm-start config of ``centre``'s optimizer family and step knob diverged at an
    effective step no higher than the centre's (within :data:`SAME_RATE_DECADES`), whatever its
    batch and warm-up: the centre survived at a step its family cannot be trusted with."""
    own = step_of(centre.params, space)
    if own is None:
        return False
    for item in scored:
        other = step_of(item.params, space) if item.diverged and item is not centre else None
        if other is not None and other[:2] == own[:2] and other[2] <= own[2] + SAME_RATE_DECADES:
            return True
    return False


def _candidates(scored: Sequence[ScoredConfig], made: Sequence[ScoredConfig], space: SearchSpace,
                factor: float, rule: str) -> list[tuple[dict[str, Any], str, float, str]]:
    """(params, step knob, the rate it replaces, why) of each bracket config, in order."""
    centre = _centre(scored, made, space, rule)
    name = step_knob(centre.params, space)
    rate = centre.params.get(name) if name else None
    out: list[tuple[dict[str, Any], str, float, str]] = []
    if name is not None and isinstance(rate, (int, float)) and rate > 0:
        for offset in bracket_offsets(scored, centre, space, factor, rule):
            out.append((dict(centre.params, **{name: rate * 10 ** offset}), name, float(rate),
                        "the best warm-start config"))
    rescue = _rescue(scored, centre, space, factor) if rule == "evidence" else None
    if rescue is not None:
        out[1:1] = [rescue]  # in place of the centre's second side
    return out


def _rescue(scored: Sequence[ScoredConfig], centre: ScoredConfig, space: SearchSpace,
            factor: float) -> tuple[dict[str, Any], str, float, str] | None:
    """An optimizer family whose every warm-start config diverged, other than the centre's:
    its config at the lowest effective step, a decade lower (divergence says the rate is too
    high for this data, a fixed bracket around another family never says by how much)."""
    own = step_of(centre.params, space)
    families: dict[tuple[str, str], list[tuple[float, ScoredConfig]]] = {}
    for item in scored:
        step = step_of(item.params, space)
        if step is not None and (own is None or step[:2] != own[:2]):
            families.setdefault(step[:2], []).append((step[2], item))
    for (_, name), members in families.items():
        if all(item.diverged for _, item in members):
            lowest = min(members, key=lambda m: m[0])[1]
            rate = float(lowest.params[name])
            return (dict(lowest.params, **{name: rate / factor ** 2}), name, rate,
                    "the lowest-rate config of an optimizer that diverged at every rate tried,")
    for (_, name), members in families.items():
        best_low = _best_at_lowest(members)
        if best_low is not None:
            rate = float(best_low.params[name])
            return (dict(best_low.params, **{name: rate / factor ** 2}), name, rate,
                    "the lowest-rate config of an optimizer whose every higher rate did worse,")
    return None


#: a family's warm-start steps must span this many decades before its lowest-step best says "go lower"
DOWNHILL_DECADES = 0.25


def _best_at_lowest(members: Sequence[tuple[float, ScoredConfig]]) -> ScoredConfig | None:
    """The family's config at its lowest effective step when that one did best and every
    config of the family at a higher step (by :data:`DOWNHILL_DECADES` or more) did worse —
    at least one of them trained (a family whose higher rates only diverged is the rule
    above's, or a family that can train at its one rate) — so the family's rate goes down
    hill and its optimum lies below what the warm start tried (curated rates too high for
    this data: they over-fit)."""
    trained = [(step, item) for step, item in members if not item.diverged]
    if not trained:
        return None
    low_step, lowest = min(trained, key=lambda m: (m[0], m[1].value))
    higher = [item for step, item in members if step >= low_step + DOWNHILL_DECADES]
    beaten_near = any(step < low_step + DOWNHILL_DECADES and item is not lowest and not item.diverged
                      and item.scored_value < lowest.scored_value for step, item in members)
    if beaten_near or all(item.diverged for item in higher):
        return None
    if all(item.diverged or item.scored_value > lowest.scored_value for item in higher):
        return lowest
    return None


def _centre(scored: Sequence[ScoredConfig], made: Sequence[ScoredConfig], space: SearchSpace,
            rule: str = DEFAULT_RULE) -> ScoredConfig:
    """The warm-start config to bracket: the best one, until a bracket config exists; then the
    best one of that config's shape, so both sides bracket the same config even when late
    scores (ratings, a VLM, cross-run normalisation) reorder the warm start in between.

    When every warm-start config diverged (rule ``"evidence"``) their scores say nothing about
    which came closer — a stopped run's loss is where the stop caught it — so the centre is the
    one with the lowest effective step (:func:`step_of`; the best score among equal steps): the
    rate nearest to one that trains."""
    family = [h for h in scored if made and not h.diverged and _same_shape(h.params, made[0].params)]
    if not family and rule == "evidence" and all(h.diverged for h in scored):
        def lowest(item: ScoredConfig) -> tuple[float, float]:
            step = step_of(item.params, space)
            return (step[2] if step is not None else math.inf, item.scored_value)
        return min(scored, key=lowest)
    return min(family or scored, key=lambda h: h.scored_value)


def _same_shape(a: Mapping[str, Any], b: Mapping[str, Any], name: str | None = None) -> bool:
    """Equal knobs apart from the step knob ``name`` (any of them when None)."""
    ignored = (KNOB, *ADAPTIVE_KNOBS) if name is None else (name,)
    return set(a) == set(b) and all(a[k] == b[k] for k in a if k not in ignored)


def _same(a: Mapping[str, Any], b: Mapping[str, Any], name: str = KNOB) -> bool:
    """Equal knobs, the step knob ``name`` within :data:`SAME_RATE_DECADES`."""
    if not _same_shape(a, b, name):
        return False
    x, y = a.get(name), b.get(name)
    if not isinstance(x, (int, float)) or not isinstance(y, (int, float)) or x <= 0 or y <= 0:
        return x == y
    return abs(math.log10(x) - math.log10(y)) < SAME_RATE_DECADES
