"""Snapshots rebuilt only when something changed, and what views build from them, once.

An app serves every open browser tab from one process, and each tab polls once a second.
:class:`SnapshotCache` makes that cost proportional to what changed, not to the size of
the session:

* within ``ttl`` seconds of the last look the snapshot is returned as is (tabs polling in
  the same tick share it, with no store read);
* after that, one query reads the store's change marker (:meth:`Store.change_marker`);
  if neither it nor the run in progress in this process moved, the same snapshot comes
  back with its clocks brought forward and :attr:`version` stays;
* :meth:`memo` keeps anything derived from the snapshot (a rendered table, a chart, the
  standings) until the version changes, so it is computed once per change, not per tab.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

from bracket.session.snapshot import SessionSnapshot

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.session import Session

T = TypeVar("T")


class SnapshotCache:
    """The snapshot of one session and values derived from it, keyed by the store's change marker."""

    def __init__(self, session: "Session", ttl: float = 0.5) -> None:
        self.session = session
        self.ttl = ttl
        #: goes up each time the snapshot is rebuilt because something changed
        self.version = 0
        self._lock = threading.RLock()
        self._looked_at = 0.0
        self._snapshot: SessionSnapshot | None = None
        self._key: Any = None
        self._memo: dict[Hashable, Any] = {}

    def invalidate(self) -> None:
        """Forget everything: the next look rebuilds (after an action of this process)."""
        with self._lock:
            self._snapshot, self._key, self._memo = None, None, {}

    def snapshot(self) -> SessionSnapshot:
        with self._lock:
            now = time.monotonic()
            if self._snapshot is not None and now - self._looked_at < self.ttl:
                return self._snapshot
            key = (self.session.store.change_marker(self.session.name), live_key(self.session))
            if self._snapshot is not None and key == self._key:
                self._snapshot = clocks_forward(self._snapshot, now - self._looked_at)
            else:
                self._snapshot, self._key, self._memo = self.session.snapshot(), key, {}
                self.version += 1
            self._looked_at = now
            return self._snapshot

    def memo(self, key: Hashable, build: Callable[[], T]) -> T:
        """``build()``, computed once per :attr:`version` of the snapshot for each ``key``."""
        with self._lock:
            self.snapshot()
            if key not in self._memo:
                self._memo[key] = build()
            return self._memo[key]


def live_key(session: "Session") -> tuple:
    """What of the run in progress here a view shows (the store learns it only now and then)."""
    live = session.executor.live() or {}
    return (session.running, session.phase, session.error, live.get("run_id"), live.get("step"),
            len(live.get("loss") or ()), len(live.get("samples") or ()))


def clocks_forward(snap: SessionSnapshot, seconds: float) -> SessionSnapshot:
    """``snap`` ``seconds`` later: elapsed time up, the estimate of what is left down."""
    if snap.status not in ("running", "paused"):
        return snap
    eta = snap.eta_s
    if eta is not None and snap.current:
        eta = max(0.0, eta - seconds)
    return dataclasses.replace(snap, elapsed_s=None if snap.elapsed_s is None else snap.elapsed_s + seconds, eta_s=eta)
