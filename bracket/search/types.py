"""What the search modules pass each other: a scored configuration and a proposal.

Kept apart from :mod:`bracket.search.controller` so that the rules the controller consults
(:mod:`bracket.search.lr_bracket`, :mod:`bracket.search.explore`) can read a history without
importing the controller back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - an annotation only: the store's schema reads kinds here, and
    from optuna.trial import TrialState  # `status` imports no Optuna (issue 24)

#: a configuration of an earlier session (``--warm-start-from``, :mod:`bracket.session.past`)
PAST_KIND = "past"
#: the warm start: what the controller trains before any sampler proposes a config
WARM_START_KINDS = ("baseline", PAST_KIND, "curated")
#: the name prefix of earlier sessions' configs (``past-<session>-<n>``)
PAST_PREFIX = "past-"
#: the learning-rate bracket's configs (``bracket.search.lr_bracket``)
BRACKET_KIND = "bracket"
#: every kind of configuration the search stage trains, in the order they come
SEARCH_KINDS = ("baseline", PAST_KIND, "curated", BRACKET_KIND, "search")
#: the samplers a session can use (``bracket.search.controller``)
ALGORITHMS = ("tpe", "random")


def stored_kind(kind: str, name: str) -> str:
    """The kind of a stored config (or run, ``name`` its label): stores written before kind
    ``past`` existed kept earlier sessions' configs as kind ``curated`` named ``past-…``;
    they read as ``past``."""
    return PAST_KIND if kind == "curated" and name.startswith(PAST_PREFIX) else kind


@dataclass(frozen=True)
class ScoredConfig:
    """One configuration as the sampler should see it now."""

    params: dict[str, Any]
    #: current score (lower is better); None while running or when it failed for an
    #: infrastructure reason (such configs are FAIL and ignored by TPE)
    value: float | None
    state: TrialState
    #: where the config came from: baseline, past, curated, bracket or search
    kind: str = "search"
    #: a person rated (or compared) at least one of its runs: its score carries human judgement
    rated: bool = False
    #: its runs diverged (stopped by the divergence monitor, or a NaN loss): its rate was too high
    diverged: bool = False
    #: the config's name (``curated-2``, ``search-7``), for messages; empty when unknown
    name: str = ""
    #: its held-out validation loss (the mean over its runs), lower better, None when the session
    #: has none (no validation split, or not scored yet): what ``value`` normalises away, so a
    #: rule can tell how far apart two configs are (:mod:`bracket.search.hedge`)
    loss: float | None = None
    #: its score from the measured parts other than a person's verdict (the loss, automatic judges;
    #: lower better, the mean over its runs), None when unknown: what a rule compares the
    #: person's verdicts with (:mod:`bracket.search.rated_focus`)
    measured: float | None = None
    #: the person's verdict on it (lower better, the human part's scale: a rating point is 1/9)
    #: where they judged it and ``measured`` was scored on the same runs; None elsewhere: what
    #: :mod:`bracket.search.rated_focus` compares with ``measured`` (in a search of full runs the
    #: sampler's ``value`` of a judged config, in a halving search its verdict at one rung)
    verdict: float | None = None

    @property
    def scored_value(self) -> float:
        """``value`` of a config its caller kept as scored (value not None); ValueError for one without."""
        if self.value is None:
            raise ValueError(f"config {self.name or self.kind} has no score yet")
        return self.value


@dataclass(frozen=True)
class Proposal:
    """The next configuration: the Optuna trial that records it, its knobs and origin."""

    trial_number: int
    config: dict[str, Any]
    kind: str
    name: str
