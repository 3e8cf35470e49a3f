"""Schedulers and search views on plain rows: the decision tables of tests/session and tests/search."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from bracket.session.budget import Budget
from bracket.session.scheduling import FullRuns, Halving
from bracket.session.search_view import SearchView
from bracket.session.store.rows import ConfigRow, RunRow

NO_VALIDATION = SimpleNamespace(validation=None, sample_kind="image")


def halving_on(settings: Any, trainer: Any = NO_VALIDATION) -> Halving:
    """The halving scheduler of ``settings`` (no hooks: for its decisions only)."""
    return Halving(Budget.of(settings, trainer), None)  # type: ignore[arg-type]


def full_runs_on(settings: Any) -> FullRuns:
    return FullRuns(Budget.of(settings, NO_VALIDATION), None)  # type: ignore[arg-type]


def view_of(scheduler: Any, runs: Sequence[Mapping[str, Any]], scores: Mapping[tuple[int, int], float] | None = None,
            *, configs: Sequence[Mapping[str, Any]] = (), launch: float = 0.0) -> SearchView:
    """A view of ``runs`` (and ``configs``) as ``scheduler``'s budget sees them, with the rung ``scores`` given;
    each config's place from its runs."""
    budget = scheduler.budget
    base = SearchView(tuple(ConfigRow.of(c) for c in configs), tuple(RunRow.of(r) for r in runs), budget.seeds,
                      budget.full_steps, budget.rungs, dict(scores or {}), {}, launch)
    if budget.rungs is None:
        return base
    return SearchView(base.configs, base.runs, base.seeds, base.full_steps, base.rungs, base.scores,
                      {c.id: base.place(c.id) for c in base.configs}, launch)
