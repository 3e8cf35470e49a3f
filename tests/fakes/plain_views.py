"""Schedulers and search views on plain rows: the decision tables of tests/session and tests/search."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from bracket.session.loop.budget import Budget
from bracket.session.loop.search_view import SearchView
from bracket.session.loop.trainer_facts import NO_FACTS, TrainerFacts
from bracket.session.scheduling import FullRuns, Halving

NO_VALIDATION = SimpleNamespace(validation=None, sample_kind="image")


def halving_on(settings: Any, trainer: Any = NO_VALIDATION, facts: TrainerFacts = NO_FACTS) -> Halving:
    """The halving scheduler of ``settings`` (no hooks: for its decisions only), with the trainer's ``facts``."""
    return Halving(Budget.of(settings, trainer, facts), None)  # type: ignore[arg-type]


def full_runs_on(settings: Any) -> FullRuns:
    return FullRuns(Budget.of(settings, NO_VALIDATION), None)  # type: ignore[arg-type]


def view_of(scheduler: Any, runs: Sequence[Mapping[str, Any]], scores: Mapping[tuple[int, int], float] | None = None,
            *, configs: Sequence[Mapping[str, Any]] = (), launch: float = 0.0) -> SearchView:
    """A view of ``runs`` (and ``configs``) as ``scheduler``'s budget sees them, with the rung ``scores`` given;
    each config's place from its runs."""
    budget = scheduler.budget
    return SearchView.build(configs, runs, seeds=budget.seeds, full_steps=budget.full_steps, rungs=budget.rungs,
                            scores=scores, launch=launch)
