"""Hedge the warm start: stop betting on it once it reads as a flat landscape.

The warm start (baseline, earlier sessions' configs, curated configs), the learning-rate
bracket and the shape draws centred on it are a bet that the known-good configs sit near the
optimum. Where the landscape is flat and noisy, the curated configs differ by little more than
the noise and every config of the bet is a trial a plain sampler would have spent exploring.

:func:`hedge_verdict`: when the first :attr:`HedgeRule.look` warm-start configs that trained
(did not diverge) have held-out validation losses (``ScoredConfig.loss``; the scores are
normalised across runs) within :attr:`HedgeRule.flat` of each other, the search stops betting:
the warm-start configs still waiting are skipped (``PRUNED`` with the reason, as
:mod:`bracket.search.skip_rule` skips one; the session notes it), no bracket, no shape draws;
one probe a decade along the slope of the warm start's rates where they slope one way
(:func:`hedge_probe`, kind ``bracket``), then :attr:`HedgeRule.explore` random proposals over
the whole space (:func:`hedge_explores`), each of the optimizer family tried least
(:func:`hedge_draw`, named ``hedge-N``), then the model-based sampler. No validation loss (a noisy training
loss, a halving session's rung views): no verdict. ``bracket_held`` (off by default) also
stops when neither bracket side beat the best warm-start config.

:func:`hedge_cut`: a baseline that diverged skips the waiting curated configs of other optimizer
families, so the learning-rate bracket's rescue (the baseline a decade down) comes next.

A pure function of the history, so a restart and every worker reach the same verdict. Why
these numbers, and what it gains: docs/SEARCH.md, ``python -m bench hedge``
(docs/BENCHMARKS.md §9).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bracket.search.types import BRACKET_KIND, WARM_START_KINDS, ScoredConfig

if TYPE_CHECKING:  # pragma: no cover
    from bracket.search.space import SearchSpace

SEARCH_KIND = "search"
BASELINE_KIND = "baseline"
CURATED_KIND = "curated"
#: a hedge draw is a config of kind ``search`` named ``hedge-N`` (N its trial number + 1)
NAME_PREFIX = "hedge-"
#: its origin, stored with its Optuna trial (the "why" of a config)
SOURCE = ("hedge draw: the warm start read flat; the optimizer family the session tried least, "
          "every other knob at random")


@dataclass(frozen=True)
class HedgeRule:
    """When the warm start reads as flat, and how much random exploring follows."""

    #: warm-start configs that trained (not diverged) needed for a verdict
    look: int = 2
    #: their scores within this share of each other (worst / best - 1) read as flat
    flat: float = 0.15
    #: random proposals after the verdict, before the model-based sampler
    explore: int = 6
    #: also stop betting when the learning-rate bracket is scored and neither side beat the
    #: best warm-start config: the curated region's best rate is found, what is left of the
    #: bet (shape draws at that step) refines a region that may not be the best. Off: on the
    #: preset landscapes of ``python -m bench presets`` the shape draws after a bracket that
    #: held are what finds Prodigy's schedule (flux-prodigy-cosine 8 -> 11.5 trials, wan-prodigy
    #: 9.5 -> 11 with it), more than it saves where the optimum is another family
    bracket_held: bool = False
    #: after the verdict, one config before the random ones where the warm start's rates slope one
    #: way (:func:`bracket.search.lr_bracket.slope`): its best config this many decades further
    #: down (or up) that slope (:func:`hedge_probe`). A flat read means steps of the size the
    #: warm start spanned are lost in the noise, so the probe goes a decade; 0: no probe
    probe_decades: float = 1.0
    #: the random proposals after the verdict take the optimizer family the session has tried
    #: least (:func:`hedge_draw`): the warm start's skipped configs are often the other families,
    #: and where the optimum is another family a uniform draw reaches it late (other-family kind
    #: of ``python -m bench hedge``: 1.66 -> 0.89x plain TPE's compute, development seeds);
    #: False: uniform random draws
    families: bool = True
    #: a baseline that diverged skips the curated configs of other optimizer families still waiting
    #: (:func:`hedge_cut`): the next config is the bracket's rescue, the baseline a decade down.
    #: ``python -m bench hedge``, rate-alpha-dim kind: 5 -> 2 trials (development seeds); §1's
    #: ``sdxl-rate-low`` 5 -> 2, the other fourteen preset landscapes unchanged. False: trained as queued
    diverged_cut: bool = True


DEFAULT_RULE = HedgeRule()


def hedge_verdict(history: Sequence[ScoredConfig], rule: HedgeRule | None = DEFAULT_RULE) -> str | None:
    """Why the search stops betting on the warm start (a sentence), or None while it bets."""
    if rule is None:
        return None
    from optuna.trial import TrialState  # here: `status` reads kinds without importing Optuna

    trained = [h for h in history if h.kind in WARM_START_KINDS and not h.diverged
               and h.state == TrialState.COMPLETE and h.value is not None]
    if rule.bracket_held:
        held = _bracket_held(history, trained)
        if held is not None:
            return held
    if len(trained) < rule.look:
        return None
    first = trained[:rule.look]
    losses = [h.loss for h in first if h.loss is not None and h.loss > 0]
    if len(losses) < len(first):
        return None  # how far apart they are needs the raw losses (scores are normalised across runs)
    spread = max(losses) / min(losses) - 1
    if spread >= rule.flat:
        return None
    names = ", ".join(h.name or h.kind for h in first)
    return (f"the warm start reads flat: {names} score within {spread:.0%} of each other "
            f"(under {rule.flat:.0%}); the sampler explores the whole space instead")


def hedge_explores(history: Sequence[ScoredConfig], rule: HedgeRule | None = DEFAULT_RULE) -> bool:
    """Whether the next sampler proposal should be random: the verdict is in and fewer than
    ``rule.explore`` sampler proposals have been made since the warm start."""
    if rule is None or hedge_verdict(history, rule) is None:
        return False
    return sum(1 for h in history if h.kind == SEARCH_KIND) < rule.explore


@dataclass(frozen=True)
class Probe:
    """The one learning-rate config a flat verdict still trains (kind ``bracket``)."""

    params: dict[str, Any]
    name: str
    source: str


def hedge_probe(history: Sequence[ScoredConfig], space: "SearchSpace",
                rule: HedgeRule | None = DEFAULT_RULE) -> Probe | None:
    """The config to train right after the verdict, before the random ones, or None: the best
    warm-start config :attr:`HedgeRule.probe_decades` along the slope of its family's rates —
    the warm start read flat, but where its rates say which way the loss falls, the rate (the knob
    that matters on every landscape) is tried a step the noise cannot hide. None while betting,
    without a slope, once a bracket config exists, or where the bounds leave nothing new."""
    import math

    from bracket.search.lr_bracket import SAME_RATE_DECADES, slope, step_knob
    from bracket.search.space import FloatKnob

    if rule is None or rule.probe_decades <= 0 or hedge_verdict(history, rule) is None:
        return None
    if any(h.kind == BRACKET_KIND for h in history):
        return None
    found = slope(history, space)
    if found is None:
        return None
    centre, direction = found
    name = step_knob(centre.params, space)
    rate = centre.params.get(name) if name else None
    knob = space.get(name) if name else None
    if not isinstance(knob, FloatKnob) or not isinstance(rate, (int, float)) or rate <= 0:
        return None
    wanted = float(f"{rate * 10 ** (direction * rule.probe_decades):.3g}")
    value = min(max(wanted, knob.low), knob.high)
    if abs(math.log10(value) - math.log10(rate)) < SAME_RATE_DECADES:
        return None  # at the bound already: nothing along the slope to try
    label = "lower" if direction < 0 else "higher"
    short = "lr" if name == "learning_rate" else str(name).replace("_", "-")
    return Probe(dict(centre.params, **{str(name): value}), f"{short}-{label}-{value:g}",
                 f"hedge probe: the warm start reads flat and its rates slope {'down' if direction < 0 else 'up'}; "
                 f"{centre.name or 'its best config'} at {name} {value:g} instead of {rate:g}")


def hedge_draw(history: Sequence[ScoredConfig], space: "SearchSpace", rule: HedgeRule | None = DEFAULT_RULE,
               seed: int = 0) -> dict[str, Any] | None:
    """The next random proposal of the explore phase as a full config when the rule draws
    families first (:attr:`HedgeRule.families`): the optimizer choice whose family the session has
    tried least (running configs count; ties by the seed), every other knob at random. None
    otherwise (no verdict, the explore phase over, no optimizer knob)."""
    import random

    from bracket.optuna_access.quiet import optuna_module
    from bracket.search.lr_bracket import OPTIMIZER_KNOBS, optimizer_family
    from bracket.search.space import CategoricalKnob

    if rule is None or not rule.families or not hedge_explores(history, rule):
        return None
    name = next((k for k in OPTIMIZER_KNOBS if isinstance(space.get(k), CategoricalKnob)), None)
    if name is None:
        return None
    knob = space[name]
    assert isinstance(knob, CategoricalKnob)
    tried: dict[str, int] = {}
    for h in history:
        if name in h.params:
            family = optimizer_family(str(h.params[name]))
            tried[family] = tried.get(family, 0) + 1
    index = sum(1 for h in history if h.kind == SEARCH_KIND)
    rng = random.Random(seed * 1_000_003 + index)
    least = min(tried.get(optimizer_family(str(c)), 0) for c in knob.choices)
    choice = rng.choice([c for c in knob.choices if tried.get(optimizer_family(str(c)), 0) == least])
    optuna = optuna_module()
    view = optuna.create_study(direction="minimize", sampler=optuna.samplers.RandomSampler(seed=rng.randrange(2**31)))
    view.enqueue_trial({name: choice})
    return space.suggest(view.ask())


def _bracket_held(history: Sequence[ScoredConfig], trained: Sequence[ScoredConfig]) -> str | None:
    from optuna.trial import TrialState

    from bracket.search.types import BRACKET_KIND

    sides = [h for h in history if h.kind == BRACKET_KIND]
    if len(sides) < 2 or not trained or any(h.state != TrialState.COMPLETE or h.value is None for h in sides):
        return None
    best = min(h.scored_value for h in trained)
    if any(h.scored_value < best for h in sides):
        return None
    return ("neither side of the learning-rate bracket beat the best warm-start config: its region is "
            "measured; the sampler explores the whole space instead of shape draws around it")


def hedge_cut(history: Sequence[ScoredConfig], kind: str, params: Mapping[str, Any],
              rule: HedgeRule | None = DEFAULT_RULE) -> str | None:
    """Why the waiting warm-start config ``params`` (of ``kind``) is skipped although the warm start
    does not read flat, or None: the baseline diverged and ``params`` is a curated config of
    another optimizer family. The divergence says the rate the guides start from is too high for
    this data; the learning-rate bracket answers by how much — the baseline a decade down
    (:mod:`bracket.search.lr_bracket`), which comes next — while another family's curated config
    is a bet on the family at the guides' settings (TPE still reaches every family). Configs of the
    baseline's own family stay (a lower rate or another batch is what the rescue needs), and so do
    earlier sessions' configs (kind ``past``: measured, not guessed)."""
    from optuna.trial import TrialState

    from bracket.search.lr_bracket import OPTIMIZER_KNOBS, optimizer_family

    if rule is None or not rule.diverged_cut or kind != CURATED_KIND:
        return None
    baseline = next((h for h in history if h.kind == BASELINE_KIND), None)
    if baseline is None or baseline.state != TrialState.COMPLETE or not baseline.diverged:
        return None
    name = next((k for k in OPTIMIZER_KNOBS if k in params and k in baseline.params), None)
    if name is None:
        return None
    family = optimizer_family(str(baseline.params[name]))
    if optimizer_family(str(params[name])) == family:
        return None
    return (f"the baseline diverged at its rate: its {family} family a decade lower comes first, "
            f"not another family's curated config")
