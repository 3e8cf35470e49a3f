"""``+N runs``: give a stopped or finished search more runs of the same search.

A search ends when its budget (a number of training runs) is spent. To go on — more TPE
proposals after a promising run — :func:`extend_budget` raises the stored budget by ``N``
runs and keeps the confirmation round as it was, so all ``N`` runs go to the search (with
``seeds`` runs per config, ``N // seeds`` more configs); resuming the session then trains
them (``SessionManager.extend`` does both). The sampler continues the same study, so the
new proposals see every earlier score and rating.

    >>> extended_settings(SearchSettings(budget=7), 4).budget
    11
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from bracket.errors import BracketError
from bracket.session.search_settings import MAX_BUDGET, SearchSettings

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session import Session


def extended_settings(settings: SearchSettings, more: int) -> SearchSettings:
    """``settings`` with ``more`` more search runs (the confirmation round keeps its runs)."""
    if isinstance(more, bool) or not isinstance(more, int) or more < 1:
        raise BracketError(f"+N runs must be a whole number of at least 1, got {more!r}.")
    if settings.budget + more > MAX_BUDGET:
        raise BracketError(f"A budget of {settings.budget + more} runs is more than {MAX_BUDGET}; add fewer runs.")
    if more < settings.seeds:
        raise BracketError(f"This search trains {settings.seeds} seeds per config: add at least {settings.seeds} "
                           "runs to get one more config.")
    # the rung keeps its runs: an automatic rung would otherwise grow with the budget
    extended = dataclasses.replace(settings, budget=settings.budget + more, confirm=settings.confirm_runs)
    extended.validate()
    return extended


def extend_budget(session: "Session", more: int) -> SearchSettings:
    """Store ``more`` more runs in ``session``'s settings (not running); returns the new
    settings. Resume the session to train them."""
    if session.running:
        raise BracketError(f"Search {session.name} is running; +N runs applies to a stopped or finished search.")
    session.store.require_writable()
    extended = extended_settings(session.settings, more)
    session.store.update_session(session.name, settings=extended.to_dict())
    return extended
