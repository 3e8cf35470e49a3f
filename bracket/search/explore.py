"""Explore more when the warm start disagrees with what the search finds.

The warm start (baseline, curated configs, the learning-rate bracket) is a bet that a
trainer's known-good configs sit near the optimum. TPE then builds its proposals on the
best 10 % of the configs it has seen (its good set): right after the warm start that is the
single best warm-start config, so TPE exploits that one neighbourhood. When the bet is
wrong — every curated rate too high, the optimum in another optimizer family — TPE keeps
refining what is merely the best of a poor start.

Evidence that the bet is wrong arrives early, and it comes in ranks, so it does not depend
on how scores are normalised (trigger ``"side"``, the default):

* **a bracket side beats every warm-start config** — the curated rate is off, so the
  curated configs are right about the shape at best;
* **one of the sampler's first** :attr:`ExploreRule.look` **proposals beats the warm start
  and the bracket** — the curated configs were not near the optimum.

From then on the next :attr:`ExploreRule.trials` proposals are TPE with a wider good set
(25 % of the configs, Hyperopt's original TPE setting, instead of Optuna's 10 %): several
regions, warm-start and new, shape the proposals instead of one. Then TPE is back at 10 %.

Measured by ``python -m bench presets`` (docs/BENCHMARKS.md); the alternatives tried (random
proposals instead of the wider TPE, widening for the whole search, a trigger on proposals
alone) are in its dated log.

The decision is a pure function of the session's history (:func:`explore_now`), like the
bracket's, so it survives a restart and several workers reach the same verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from optuna.trial import TrialState

from bracket.search.types import WARM_START_KINDS, ScoredConfig

BRACKET_KIND = "bracket"
SEARCH_KIND = "search"


@dataclass(frozen=True)
class ExploreRule:
    """When the warm start counts as disagreeing, and how much exploring that buys."""

    #: the sampler's first ``look`` proposals are compared with the warm start
    look: int = 4
    #: proposals that explore once it disagrees
    trials: int = 10
    #: "side" (a bracket side, or one of the first proposals, beats the warm start), "search"
    #: (only a proposal counts), "always" (explore from the first proposal on)
    trigger: str = "side"
    #: "wide" (TPE with the wider good set, ``controller.WIDE_GAMMA_FRACTION``) or "random"
    #: (uniform over the space, like Optuna's start-up trials)
    action: str = "wide"


DEFAULT_RULE = ExploreRule()


def disagreement_at(history: Sequence[ScoredConfig], rule: ExploreRule = DEFAULT_RULE) -> int | None:
    """Index in ``history`` of the config that showed the warm start wrong, or None."""
    warm = [v for h in history if h.kind in WARM_START_KINDS and (v := _score(h)) is not None]
    if not warm:
        return None  # no warm start: the sampler's own start-up already explores
    anchor = min(warm)
    if rule.trigger == "always":
        return -1
    if rule.trigger == "side":
        bracket = [(i, v) for i, h in enumerate(history) if h.kind == BRACKET_KIND and (v := _score(h)) is not None]
        for index, value in bracket:
            if value < anchor:
                return index
        anchor = min([anchor] + [v for _, v in bracket])
    elif rule.trigger != "search":
        raise ValueError(f"unknown trigger {rule.trigger!r}")
    else:
        anchor = min([anchor] + [v for h in history if h.kind == BRACKET_KIND and (v := _score(h)) is not None])
    seen = 0
    for index, item in enumerate(history):
        if item.kind != SEARCH_KIND:
            continue
        seen += 1
        if seen > rule.look:
            break
        score = _score(item)
        if score is not None and score < anchor:
            return index
    return None


def explore_now(history: Sequence[ScoredConfig], rule: ExploreRule | None = DEFAULT_RULE) -> bool:
    """Whether the next sampler proposal should explore: the warm start disagreed and fewer
    than ``rule.trials`` proposals have been made since."""
    if rule is None:
        return False
    at = disagreement_at(history, rule)
    if at is None:
        return False
    since = sum(1 for h in history[at + 1:] if h.kind == SEARCH_KIND)
    return since < rule.trials


def _score(item: ScoredConfig) -> float | None:
    """The score of a complete trial; None for one not complete or not scored."""
    return item.value if item.state == TrialState.COMPLETE else None
