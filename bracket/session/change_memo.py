"""What is derived from a session's store, computed once per store change in a process.

The standings (every run scored, per-step curves, boards, the winner) and parameter
importance are asked for by several readers of one change: the app's Results tab, the
report it writes, the winner's export inside that report, ``status``. :func:`per_change`
keeps each derived value on the :class:`~bracket.session.session.Session` object with the
store's change marker (:meth:`Store.change_marker`, one query) it was computed under, and
computes it again only when the marker (or the session's judge weights) moved. So a report
that needs the standings three times scores the runs once (issue 24).

The marker is read *before* the value is built: a change that lands during the build makes
the next call build again, never keeps a stale value.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

#: a :class:`~bracket.session.session.Session` (anything with ``store``, ``name``, ``settings``;
#: not imported: the session imports this module)
Session = Any
T = TypeVar("T")
_LOCK = threading.Lock()
_ATTRIBUTE = "_per_change_memo"


def change_key(session: "Session") -> tuple:
    """What a derived view of ``session`` depends on: the store's change marker and the weights."""
    weights = sorted((session.settings.weights or {}).items())
    return (session.store.change_marker(session.name), tuple(weights))


def per_change(session: "Session", key: Hashable, build: Callable[[], T]) -> T:
    """``build()``, or the value it gave under the same :func:`change_key` of ``session``."""
    marker = change_key(session)
    with _LOCK:
        memo: dict[Hashable, tuple[tuple, Any]] = session.__dict__.setdefault(_ATTRIBUTE, {})
        cached = memo.get(key)
    if cached is not None and cached[0] == marker:
        return cached[1]
    value = build()
    with _LOCK:
        memo[key] = (marker, value)
    return value


def stored_runs(session: "Session") -> list[dict[str, Any]]:
    """The session's runs without their series (``Store.runs``), read once per store change: the
    snapshot, the scores and the standings of one change share one read. Shared: do not change them."""
    return per_change(session, "runs", lambda: session.store.runs(session.name, with_series=False))


def stored_configs(session: "Session") -> list[dict[str, Any]]:
    """The session's configs (``Store.configs``), read once per store change. Shared: do not change them."""
    return per_change(session, "configs", lambda: session.store.configs(session.name))


def peek(session: "Session", key: Hashable) -> Any:
    """The value kept for ``key`` if it is still current, else None (nothing is built)."""
    with _LOCK:
        cached = session.__dict__.get(_ATTRIBUTE, {}).get(key)
    return cached[1] if cached is not None and cached[0] == change_key(session) else None


def forget(session: "Session") -> None:
    """Drop every value kept for ``session`` (e.g. after an in-place edit the marker cannot see)."""
    with _LOCK:
        session.__dict__.pop(_ATTRIBUTE, None)
