"""Snapshots rebuilt only when something changed, and what views build from them, once.

An app serves every open browser tab from one process, and each tab polls once a second.
:class:`SnapshotCache` makes that cost proportional to what changed, not to the size of
the session:

* within ``ttl`` seconds of the last look the snapshot is returned as is (tabs polling in
  the same tick share it, with no store read);
* after that, one query reads the store's change marker (:meth:`Store.change_marker`);
  if neither it nor the run in progress in this process moved, the same snapshot comes
  back with its clocks brought forward and :attr:`version` stays; if only the progress of
  running runs moved (steps, loss points), the snapshot is patched (one more query for the
  running rows when the store has their steps), not rebuilt;
* :meth:`memo` keeps anything derived from the snapshot (a rendered table, a chart, the
  standings) until the version changes, so it is computed once per change, not per tab; the
  :data:`MAX_VIEWS` most recently used.

One per open session, a declared part of the process's one cache owner
(``bracket.session.store.change_memo``, ``PARTS["snapshot"]``).
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

from bracket.session import SessionSnapshot
from bracket.session.store.records import MARKER_STEPS
from bracket.session.store.schema import RUN_ACTIVE

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session import Session

T = TypeVar("T")
#: the place of the running runs' summed steps in ``Store.change_marker``
STEPS = MARKER_STEPS
#: views (``memo`` keys) kept per session, the least recently used dropped first
MAX_VIEWS = 128
#: snapshot versions, increasing across every cache of the process (a cache made again for a
#: session never hands out a number an earlier one did)
_VERSIONS = itertools.count(1)


class SnapshotCache:
    """The snapshot of one session and values derived from it, keyed by the store's change marker."""

    def __init__(self, session: "Session", ttl: float = 0.5) -> None:
        self.session = session
        self.ttl = ttl
        #: goes up each time the snapshot is rebuilt because something changed
        self.version = 0
        #: goes up when more than the progress of running runs changed
        self.structure_version = 0
        self._lock = threading.RLock()
        self._looked_at = 0.0
        self._snapshot: SessionSnapshot | None = None
        self._key: Any = None
        self._memo: OrderedDict[Hashable, Any] = OrderedDict()

    def invalidate(self) -> None:
        """Forget everything: the next look rebuilds (after an action of this process)."""
        with self._lock:
            self._snapshot, self._key = None, None

    def snapshot(self) -> SessionSnapshot:
        with self._lock:
            now = time.monotonic()
            if self._snapshot is not None and now - self._looked_at < self.ttl:
                return self._snapshot
            marker = self.session.store.change_marker(self.session.name)
            live = self.session.executor.live()
            structure, steps, here = marker[:STEPS] + marker[STEPS + 1:], marker[STEPS], live_key(self.session, live)
            old = self._key
            if self._snapshot is None or old is None or old[0] != structure or old[2][:3] != here[:3]:
                self._snapshot = self.session.snapshot()
                self.version = self.structure_version = next(_VERSIONS)
                self._memo = OrderedDict()
            else:
                snap = clocks_forward(self._snapshot, now - self._looked_at)
                if old[1] != steps:  # a run elsewhere (or here) stored its progress: refresh those rows only
                    snap = patch_steps(snap, self.session.store.runs(self.session.name, statuses=RUN_ACTIVE,
                                                                      with_series=False))
                if old[2] != here or old[1] != steps:
                    snap = patch_live(snap, live)
                    self.version = next(_VERSIONS)
                self._snapshot = snap
            self._key = (structure, steps, here)
            self._looked_at = now
            return self._snapshot

    def memo(self, key: Hashable, build: Callable[[], T], *, structural: bool = False, fresh: bool = True) -> T:
        """``build()``, computed once per :attr:`version` of the snapshot for each ``key``; with
        ``structural``, once per :attr:`structure_version` (what does not show the progress of
        running runs: rows added, statuses, scores). ``fresh=False``: of the snapshot last looked
        at, without asking the store again (a poll that has just called :meth:`snapshot`)."""
        with self._lock:
            if fresh or self._snapshot is None:
                self.snapshot()
            version = self.structure_version if structural else self.version
            cached = self._memo.get(key)
            if cached is None or cached[0] != (structural, version):
                cached = self._memo[key] = ((structural, version), build())
            self._memo.move_to_end(key)
            while len(self._memo) > MAX_VIEWS:
                self._memo.popitem(last=False)
            return cached[1]

    def views(self) -> int:
        """How many derived views are kept (at most :data:`MAX_VIEWS`)."""
        with self._lock:
            return len(self._memo)


def live_key(session: "Session", live: dict[str, Any] | None) -> tuple:
    """What of this process's search a view shows: its state, then the run in progress."""
    live = live or {}
    return (session.running, session.phase, session.error, live.get("run_id"), live.get("step"),
            len(live.get("loss") or ()), len(live.get("samples") or ()))


def patch_live(snap: SessionSnapshot, live: dict[str, Any] | None) -> SessionSnapshot:
    """``snap`` with the run in progress here as it is now (its step, loss and samples)."""
    runs = snap.runs
    if live:
        runs = [dict(r, last_step=live["step"], samples=live["samples"]) if r["id"] == live["run_id"] else r
                for r in runs]
    return dataclasses.replace(snap, current=live, runs=runs)


def patch_steps(snap: SessionSnapshot, active: list[dict[str, Any]]) -> SessionSnapshot:
    """``snap`` with the stored step of each run still going (``active``: their store rows)."""
    steps = {r["id"]: r["last_step"] for r in active}
    runs = [dict(r, last_step=steps[r["id"]]) if r["id"] in steps and r["last_step"] != steps[r["id"]] else r
            for r in snap.runs]
    return dataclasses.replace(snap, runs=runs)


def clocks_forward(snap: SessionSnapshot, seconds: float) -> SessionSnapshot:
    """``snap`` ``seconds`` later: elapsed time up, the estimate of what is left down."""
    if snap.status != "running":  # a paused search's clocks stand still (issue 20)
        return snap
    eta = snap.eta_s
    if eta is not None and snap.current:
        eta = max(0.0, eta - seconds)
    return dataclasses.replace(snap, elapsed_s=None if snap.elapsed_s is None else snap.elapsed_s + seconds, eta_s=eta)
