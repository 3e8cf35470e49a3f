"""What is derived from a session's store, computed once per store change in a process.

The standings (every run scored, per-step curves, boards, the winner), parameter importance,
the search's read model and ``status``'s view are asked for by several readers of one change:
the app's Results tab, the report it writes, the winner's export inside that report, ``status``.
:data:`CHANGE_MEMO` is the one owner of those values in a process (declared here, listed in
docs/ARCHITECTURE.md, "Caches"): it keeps them per open session — the store's URL, the session's
name and the session object (another ``Session.open`` starts afresh, as another process would) —
under the change key they were computed with (:func:`change_key`: the store's change
marker, :meth:`Store.change_marker`, one query, and the session's judge weights), and drops all
of a session's values at once when the key moves. What keeps its own, finer key (the app's
snapshot, thumbnails) is a declared part of the session's entry (:data:`PARTS`,
:meth:`ChangeMemo.part`), bounded itself, kept across changes and dropped with the session (one
entry a session holds both). Nothing is written onto
the session object; the owner keeps the most recent :data:`MAX_SESSIONS` sessions. So a report
that needs the standings three times scores the runs once.

The marker is read *before* a value is built: a change that lands during the build makes the
next call build again, never keeps a stale value. Inside another value's build (the standings
need the scores, which need the rows) the marker read for the outermost build is used.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

#: a :class:`~bracket.session.session.Session` (anything with ``store``, ``name``, ``settings``;
#: not imported: the session imports this module)
Session = Any
T = TypeVar("T")
#: sessions whose derived values a process keeps (the oldest looked-at dropped first)
MAX_SESSIONS = 16
#: the parts a session's entry may hold beside its change-keyed values: name -> its own key
#: (each part invalidates by that key and is bounded itself; docs/ARCHITECTURE.md, "Caches")
PARTS: dict[str, str] = {
    "snapshot": "the change marker without the running runs' steps, and this process's run in progress "
                "(bracket.app.snapshot_cache.SnapshotCache)",
    "thumbnails": "the picture file's path, modification time and the thumbnail size "
                  "(bracket.app.thumbs.ThumbnailCache)",
}


def change_key(session: "Session") -> tuple:
    """What a derived view of ``session`` depends on: the store's change marker and the weights."""
    weights = sorted((session.settings.weights or {}).items())
    return (session.store.change_marker(session.name), tuple(weights))


def _session_key(session: "Session") -> tuple[str, str, int]:
    """Whose values: the store, the session and the object (an object's id may be reused once it is
    gone: then only for the same session of the same store, whose values at the same key are the same)."""
    return (str(session.store.url), str(session.name), id(session))


class _Entry:
    """One session's kept values: those of one change key, and its declared parts (their own keys)."""

    __slots__ = ("marker", "values", "parts")

    def __init__(self) -> None:
        #: the change key ``values`` were built with (None: none kept)
        self.marker: tuple | None = None
        self.values: dict[Hashable, Any] = {}
        #: part name (:data:`PARTS`) -> the part, kept whatever the marker
        self.parts: dict[str, Any] = {}


class ChangeMemo:
    """Values derived from sessions' stores, each kept under the change key it was built with."""

    def __init__(self, sessions: int = MAX_SESSIONS) -> None:
        self.sessions = sessions
        self._lock = threading.Lock()
        #: (store URL, session, object) -> its values and parts, least recently used first
        self._entries: OrderedDict[tuple[str, str, int], _Entry] = OrderedDict()
        #: per thread: session -> the change key its outermost build in progress was keyed on
        self._building = threading.local()

    def _entry(self, where: tuple[str, str, int]) -> _Entry:
        """The entry of ``where`` (made when missing), now the most recently used; the oldest beyond
        :attr:`sessions` dropped. Under the lock."""
        entry = self._entries.get(where)
        if entry is None:
            entry = self._entries[where] = _Entry()
        self._entries.move_to_end(where)
        while len(self._entries) > self.sessions:
            self._entries.popitem(last=False)
        return entry

    def value(self, session: "Session", key: Hashable, build: Callable[[], T]) -> T:
        """``build()``, or the value it gave under the same :func:`change_key` of ``session``."""
        building: dict[tuple[str, str, int], tuple] = self._building.__dict__.setdefault("keys", {})
        where = _session_key(session)
        outer = building.get(where)
        marker = outer if outer is not None else change_key(session)
        with self._lock:
            found = self._entries.get(where)
            if found is not None and found.marker == marker and key in found.values:
                self._entries.move_to_end(where)
                return found.values[key]
        building[where] = marker
        try:
            value = build()
        finally:
            if outer is None:
                del building[where]
        with self._lock:
            entry = self._entry(where)
            if entry.marker != marker:
                entry.marker, entry.values = marker, {}
            entry.values[key] = value
        return value

    def part(self, session: "Session", name: str, make: Callable[[], T]) -> T:
        """The session's part ``name`` (one of :data:`PARTS`), made by ``make()`` on first use: kept
        while the session is among the :attr:`sessions` most recently used, whatever the marker."""
        if name not in PARTS:
            raise KeyError(f"{name!r} is not a declared part of the change memo (PARTS)")
        with self._lock:
            parts = self._entry(_session_key(session)).parts
            if name not in parts:
                parts[name] = make()
            return parts[name]

    def sizes(self) -> tuple[int, int]:
        """(sessions with values kept, sessions with parts kept): each at most :attr:`sessions`."""
        with self._lock:
            entries = list(self._entries.values())
        return sum(1 for e in entries if e.values), sum(1 for e in entries if e.parts)

    def peek(self, session: "Session", key: Hashable) -> Any:
        """The value kept for ``key`` if it is still current, else None (nothing is built)."""
        with self._lock:
            entry = self._entries.get(_session_key(session))
            if entry is None or key not in entry.values:
                return None
            marker, value = entry.marker, entry.values[key]
        return value if marker == change_key(session) else None

    def forget(self, session: "Session") -> None:
        """Drop every value kept for ``session`` (e.g. after an in-place edit the marker cannot see); its
        parts keep their own keys (the snapshot's ``invalidate``)."""
        with self._lock:
            entry = self._entries.get(_session_key(session))
            if entry is not None:
                entry.marker, entry.values = None, {}

    def drop(self, session: "Session") -> None:
        """The session is closed: drop its values and its parts (nothing keeps it in memory)."""
        with self._lock:
            self._entries.pop(_session_key(session), None)


#: the one owner of store-derived values in this process
CHANGE_MEMO = ChangeMemo()


def per_change(session: "Session", key: Hashable, build: Callable[[], T]) -> T:
    """``build()``, or the value it gave under the same :func:`change_key` of ``session`` (:data:`CHANGE_MEMO`)."""
    return CHANGE_MEMO.value(session, key, build)


def stored_rows(session: "Session") -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(runs without their series, configs) of the session (``Store.runs``, ``Store.configs``), read
    once per store change: the snapshot, the scores and the standings of one change share one
    read. Shared: do not change them."""
    return per_change(session, "rows", lambda: (session.store.runs(session.name, with_series=False),
                                                session.store.configs(session.name)))


def drop(session: "Session") -> None:
    """The session is closed: drop its values and its parts."""
    CHANGE_MEMO.drop(session)


def part(session: "Session", name: str, make: Callable[[], T]) -> T:
    """The session's declared part ``name`` (:data:`PARTS`) in :data:`CHANGE_MEMO`."""
    return CHANGE_MEMO.part(session, name, make)


def peek(session: "Session", key: Hashable) -> Any:
    """The value kept for ``key`` if it is still current, else None (nothing is built)."""
    return CHANGE_MEMO.peek(session, key)


def forget(session: "Session") -> None:
    """Drop every value kept for ``session``."""
    CHANGE_MEMO.forget(session)
