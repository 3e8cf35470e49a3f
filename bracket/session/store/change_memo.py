"""What is derived from a session's store, computed once per store change in a process.

The standings (every run scored, per-step curves, boards, the winner) and parameter
importance are asked for by several readers of one change: the app's Results tab, the
report it writes, the winner's export inside that report, ``status``. :func:`per_change`
keeps each derived value on the :class:`~bracket.session.session.Session` object with the
store's change marker (:meth:`Store.change_marker`, one query) it was computed under, and
computes it again only when the marker (or the session's judge weights) moved. So a report
that needs the standings three times scores the runs once.

The marker is read *before* the value is built: a change that lands during the build makes
the next call build again, never keeps a stale value.

A build allocates hundreds of thousands of small objects (a row, a score, its parts per run)
and frees them by reference counting; Python's cyclic collector would meanwhile walk every
object the process holds again and again (in the app: all of Gradio's), a large share of the
Results tab's leaderboard time on a large session. So the outermost build runs with the
cyclic collector paused (:func:`gc_paused`); it runs again as usual afterwards.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Callable, Hashable, Iterator
from typing import Any, TypeVar

#: a :class:`~bracket.session.session.Session` (anything with ``store``, ``name``, ``settings``;
#: not imported: the session imports this module)
Session = Any
T = TypeVar("T")
_LOCK = threading.Lock()
_ATTRIBUTE = "_per_change_memo"
#: per thread: session id -> the marker its outermost build in progress was keyed on
_BUILDING = threading.local()
_GC_LOCK = threading.Lock()
_GC_PAUSES = [0, False]  # builds in progress (all threads), whether the collector was on before the first


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The ``with`` body without cyclic garbage collection passes (nested and threads: the
    collector is switched back on when the last one ends, and only if it was on before)."""
    with _GC_LOCK:
        if _GC_PAUSES[0] == 0:
            _GC_PAUSES[1] = gc.isenabled()
            gc.disable()
        _GC_PAUSES[0] += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_PAUSES[0] -= 1
            if _GC_PAUSES[0] == 0 and _GC_PAUSES[1]:
                gc.enable()


def change_key(session: "Session") -> tuple:
    """What a derived view of ``session`` depends on: the store's change marker and the weights."""
    weights = sorted((session.settings.weights or {}).items())
    return (session.store.change_marker(session.name), tuple(weights))


def per_change(session: "Session", key: Hashable, build: Callable[[], T]) -> T:
    """``build()``, or the value it gave under the same :func:`change_key` of ``session``.

    Inside another value's build (the standings need the scores, which need the runs), the
    marker read for the outer build is used: one query per change, and a change that lands
    during the build still makes the next call build again."""
    building: dict[int, tuple] = _BUILDING.__dict__.setdefault("markers", {})
    outer = building.get(id(session))
    marker = outer if outer is not None else change_key(session)
    with _LOCK:
        memo: dict[Hashable, tuple[tuple, Any]] = session.__dict__.setdefault(_ATTRIBUTE, {})
        cached = memo.get(key)
    if cached is not None and cached[0] == marker:
        return cached[1]
    building[id(session)] = marker
    try:
        if outer is None:
            with gc_paused():
                value = build()
        else:
            value = build()
    finally:
        if outer is None:
            del building[id(session)]
    with _LOCK:
        memo[key] = (marker, value)
    return value


def stored_rows(session: "Session") -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(runs without their series, configs) of the session (``Store.runs``, ``Store.configs``), read
    once per store change: the snapshot, the scores and the standings of one change share one
    read. Shared: do not change them."""
    return per_change(session, "rows", lambda: (session.store.runs(session.name, with_series=False),
                                                session.store.configs(session.name)))


def peek(session: "Session", key: Hashable) -> Any:
    """The value kept for ``key`` if it is still current, else None (nothing is built)."""
    with _LOCK:
        cached = session.__dict__.get(_ATTRIBUTE, {}).get(key)
    return cached[1] if cached is not None and cached[0] == change_key(session) else None


def forget(session: "Session") -> None:
    """Drop every value kept for ``session`` (e.g. after an in-place edit the marker cannot see)."""
    with _LOCK:
        session.__dict__.pop(_ATTRIBUTE, None)
