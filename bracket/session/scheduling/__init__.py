"""Schedulers of the search loop: what trains next, what stops (see ``base``)."""

from bracket.session.loop.budget import Budget
from bracket.session.scheduling.base import Hooks, Scheduler, Work
from bracket.session.scheduling.full_runs import FullRuns
from bracket.session.scheduling.halving import Halving

__all__ = ["FullRuns", "Halving", "Hooks", "Scheduler", "Work", "scheduler_for"]


def scheduler_for(budget: Budget, hooks: Hooks) -> Scheduler:
    """The scheduler a session's budget names: ``Halving`` with ``--halving``, else ``FullRuns``."""
    return Halving(budget, hooks) if budget.halving else FullRuns(budget, hooks)
