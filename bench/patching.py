"""What the bench's experiments put in place of Bracket's own functions, and how to undo it.

Several experiments replace the same thing (``SearchController.next``, ``SessionManager.rate_next``,
the controller's ``TPESampler``). Each used to keep its own copy of "the original", taken the
first time it was asked, so an undo could put back another experiment's wrapper when that one
happened to be active first. Here one registry keeps Bracket's own value per ``(owner, name)``,
taken the first time *any* experiment touches it: every :func:`restore` puts back the real one,
in whatever order experiments were applied and undone.
"""

from __future__ import annotations

from typing import Any

_OWN: dict[tuple[Any, str], Any] = {}


def own(owner: Any, name: str) -> Any:
    """Bracket's own ``owner.name``, as it was before any experiment replaced it."""
    return _OWN.setdefault((owner, name), getattr(owner, name))


def replace(owner: Any, name: str, value: Any) -> None:
    """Put ``value`` in place of ``owner.name`` (its own value kept for :func:`restore`)."""
    own(owner, name)
    setattr(owner, name, value)


def restore(owner: Any, name: str) -> None:
    """Put Bracket's own ``owner.name`` back."""
    setattr(owner, name, own(owner, name))
