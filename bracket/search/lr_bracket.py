"""The learning-rate bracket: the best warm-start config again, at a lower and a higher rate.

A trainer's curated configs are usually right about the *shape* of a good run (optimizer,
scheduler, warmup, network) and less often about its learning rate, whose best value moves
with the dataset, the LoRA rank, the batch size and the base model. A person who finds a
good config therefore tries it once at a lower and once at a higher rate before touching
anything else. Bracket does the same between the warm start and the sampler: when the
baseline and curated configs are scored, the best of them is trained again at
``learning_rate / factor`` and ``learning_rate * factor`` (``factor`` = sqrt(10), half a
decade), clamped into the knob's bounds. The two runs tell the sampler which way the rate
should move for the config family that works; TPE takes over after them.

Adaptive optimizers get the same bracket on the knob that sets *their* step: Prodigy runs
at ``learning_rate`` 1.0 and estimates its step D itself, so the rate does nothing useful;
``d_coef`` multiplies D, so a Prodigy winner is tried at ``d_coef / factor`` and
``d_coef * factor`` (clamped into the knob's range, 0.5 to 2.0 in the presets). For LoRA
the effective step is the rate times ``alpha / rank``; the bracket changes only the rate
(or ``d_coef``) and keeps rank and alpha, so it brackets the effective step of that config.

On the benchmark landscapes (``bench/search_efficiency.py``, 20 paired repetitions) the
bracket found a config within 5 % of the optimum sooner in 20 of 20 repetitions where every
curated rate was too high (``high-rank``: 5.0 trials on average instead of 9.4), took the
best config after 8 trials from 1.28x to 1.07x the optimum where the optimum was broad
(``flat-noisy``), and was a wash on ``warmup-critical`` (faster in 10, slower in 7 of 20;
best after 8 trials 1.15x instead of 1.10x) and on ``reference`` (docs/BENCHMARKS.md).

With several workers the bracket waits for the whole warm start to be scored; a worker that
asks while a warm-start config is still training gets a TPE config instead, so there the
bracket may come a config or two later.

The decision is a pure function of the session's history (:func:`next_bracket`), so it
survives a restart and needs no state of its own: the history says which bracket configs
exist. Several workers ask for configurations one at a time under the session's row lock
(``bracket.session.distributed.reserve_config``), so they never propose the same bracket
config twice.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from optuna.trial import TrialState

from bracket.search.space import FloatKnob, SearchSpace
from bracket.search.types import WARM_START_KINDS, ScoredConfig

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
KIND = "bracket"
#: two rates closer than this (in decades) on an otherwise equal config count as the same config
SAME_RATE_DECADES = 0.05


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


def next_bracket(history: Sequence[ScoredConfig], space: SearchSpace, *,
                 factor: float = DEFAULT_FACTOR) -> BracketStep:
    """The next bracket config for this history, or why there is none.

    No bracket when the session had no warm start, when the best warm-start config has no
    step knob searched on a log scale (:func:`step_knob`), or once both bracket configs
    exist. A candidate that, after clamping into the knob's bounds, equals the best config
    or one already trained is skipped.
    """
    warm = [h for h in history if h.kind in WARM_START_KINDS]
    if not warm:
        return BracketStep(None)
    if sum(1 for h in history if h.kind == KIND) >= TRIALS:
        return BracketStep(None)
    if any(h.state == TrialState.RUNNING for h in warm):
        return BracketStep(None, pending=True)
    scored = [h for h in warm if h.state == TrialState.COMPLETE and h.value is not None]
    if not scored:
        return BracketStep(None)
    center = _centre(scored, [h for h in history if h.kind == KIND])
    name = step_knob(center.params, space)
    if name is None:
        return BracketStep(None)
    knob = space[name]
    rate = center.params.get(name)
    if not isinstance(rate, (int, float)) or rate <= 0:
        return BracketStep(None)
    what = "learning-rate" if name == KNOB else name
    short = "lr" if name == KNOB else name.replace("_", "-")
    for label, candidate in (("lower", rate / factor), ("higher", rate * factor)):
        candidate = min(max(float(f"{candidate:.3g}"), knob.low), knob.high)  # round, then clamp: in bounds
        params = dict(center.params, **{name: candidate})
        if _same(params, center.params, name) or any(_same(params, h.params, name) for h in history):
            continue
        return BracketStep(params, name=f"{short}-{label}-{candidate:g}",
                           source=f"{what} bracket: the best warm-start config at {name} {candidate:g} "
                                  f"instead of {rate:g}")
    return BracketStep(None)


def _centre(scored: Sequence[ScoredConfig], made: Sequence[ScoredConfig]) -> ScoredConfig:
    """The warm-start config to bracket: the best one, until a bracket config exists; then the
    best one of that config's shape, so both sides bracket the same config even when late
    scores (ratings, a VLM, cross-run normalisation) reorder the warm start in between."""
    family = [h for h in scored if made and _same_shape(h.params, made[0].params)]
    return min(family or scored, key=lambda h: h.value)  # type: ignore[arg-type, return-value]


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
