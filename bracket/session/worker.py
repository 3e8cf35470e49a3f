"""The worker protocol: how one process of a search tells the others it lives and shares work.

Every process that trains for a search is a *worker* with an id (``host:pid`` by default)
and, through the store, follows a few rules with all the others (``bracket.session.distributed``
says why they are safe on PostgreSQL):

* it **beats** — a :class:`Heartbeat` thread records a heartbeat several times per grace
  period, so the others know it is alive (the shape of Optuna's heartbeat thread: a tiny
  object with ``start`` and ``join``);
* it **recovers** runs of dead workers (and of an earlier process killed here): they are
  marked interrupted and their slots run again (``bracket.session.recovery``);
* it **claims** a dead worker's unfinished configuration and **reserves** new ones under the
  session's row lock, so the budget is never overshot; a halving search's promotions are decided
  and their paused runs claimed under the same lock (:meth:`WorkerProtocol.deciding`);
* it **waits** for a pre-caching step another live worker runs instead of running it twice.

:class:`WorkerProtocol` holds this worker's identity and these rules; the session's loop
decides what to do with them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

from bracket.errors import machine_state_message
from bracket.search.types import Proposal
from bracket.session.control import RunControl
from bracket.session.distributed import claim_config, reserve_config, session_row_locked
from bracket.session.recovery import DEFAULT_GRACE_SECONDS, recover_interrupted_runs, worker_is_alive
from bracket.session.store import Store
from bracket.session.store.schema import RUN_ACTIVE

log = logging.getLogger(__name__)
#: the longest wait between two heartbeats
HEARTBEAT_SECONDS = 5.0


def log_failure(what: str, error: BaseException) -> None:
    """Log a secondary failure: one line for a full disk or a locked store (the session's error
    says what to do), the traceback for anything else."""
    message = machine_state_message(error)
    if message:
        log.info("%s: %s", what, message)  # below WARNING: the one error line says it
    else:
        log.error("%s", what, exc_info=error)


class Heartbeat:
    """A daemon thread calling ``beat`` every ``interval_s`` from ``start`` until ``join``.

    A failed beat is logged, never fatal (the next one may get through)."""

    def __init__(self, beat: Callable[[], None], interval_s: float) -> None:
        self._beat = beat
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="bracket-heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        """Stop beating and wait for the thread (at most ``timeout`` seconds)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._beat()
            except Exception as error:  # noqa: BLE001 - a missed beat is not fatal
                log_failure("heartbeat failed", error)
            self._stop.wait(self.interval_s)


class WorkerProtocol:
    """One worker's identity and its rules of cooperation through the store."""

    def __init__(self, store: Store, session_name: str, worker_id: str | None = None, *, gpu: str = "",
                 grace_s: float = DEFAULT_GRACE_SECONDS) -> None:
        self.store = store
        self.session_name = session_name
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}"
        #: GPU index given to this worker's trainer processes (CUDA_VISIBLE_DEVICES); "" = inherit
        self.gpu = str(gpu or "")
        #: a worker whose heartbeat is older than this is dead: its run is interrupted and re-run
        self.grace_s = float(grace_s)

    # -- alive -------------------------------------------------------------------------
    def beat(self, doing: str = "alive") -> None:
        """Record one heartbeat of this worker; ``doing`` is what ``status`` shows beside "alive"
        ("running finals", "promoting"; "alive" for the search)."""
        self.store.heartbeat(self.session_name, self.worker_id, host=socket.gethostname(), pid=os.getpid(),
                             gpu=self.gpu or os.environ.get("CUDA_VISIBLE_DEVICES", ""), status=doing)

    def heartbeat(self, doing: str = "alive") -> Heartbeat:
        """A heartbeat thread (not started) beating several times per grace period."""
        return Heartbeat(lambda: self.beat(doing), min(HEARTBEAT_SECONDS, self.grace_s / 3))

    @contextlib.contextmanager
    def beating(self, doing: str) -> Iterator[None]:
        """Beat as ``doing`` ("running finals") for the ``with`` body, then sign off."""
        heartbeat = self.heartbeat(doing)
        try:
            self.beat(doing)  # now, not when the thread first runs: ``status`` may ask at once
            heartbeat.start()
            yield
        finally:
            heartbeat.join(HEARTBEAT_SECONDS + 1)  # first, so it cannot overwrite "stopped"
            try:
                self.sign_off()
            except Exception as store_error:  # noqa: BLE001 - the store itself may be what failed
                log_failure("could not record that this worker stopped", store_error)

    def sign_off(self) -> None:
        """Record that this worker stopped (the others need not wait for its grace period)."""
        self.store.heartbeat(self.session_name, self.worker_id, status="stopped")

    def is_alive(self, worker: dict[str, Any] | None) -> bool:
        """Whether a worker row belongs to a process that still works."""
        return worker_is_alive(worker, grace_s=self.grace_s)

    def workers(self) -> dict[str, dict[str, Any]]:
        """Worker id -> worker row of every worker of the session."""
        return {w["worker_id"]: w for w in self.store.workers(self.session_name)}

    def others_alive(self) -> bool:
        """Another worker of the session is alive."""
        return any(w["worker_id"] != self.worker_id and self.is_alive(w)
                   for w in self.store.workers(self.session_name))

    # -- sharing work ------------------------------------------------------------------
    def recover(self) -> None:
        """Mark the runs of dead workers (or of a killed earlier process) interrupted."""
        for note in recover_interrupted_runs(self.store, self.session_name, self_worker=self.worker_id,
                                             grace_s=self.grace_s):
            log.warning(note)

    def claim(self, config_id: int, owner: str) -> bool:
        """Take over config ``config_id`` from ``owner`` (dead); False when another worker did first."""
        return claim_config(self.store, config_id, owner, self.worker_id)

    def reserve(self, limit: Callable[[], int], propose: Callable[[], Proposal]) -> int | None:
        """Record the next search config unless ``limit()`` are handed out, asked under the session's
        row lock (``distributed.reserve_config``)."""
        return reserve_config(self.store, self.session_name, limit=limit, worker=self.worker_id, propose=propose)

    def deciding(self) -> contextlib.AbstractContextManager[None]:
        """Decide for the ``with`` body with no other worker deciding at once (the session's row
        lock, ``distributed.session_row_locked``): what to promote, and the claim of its runs."""
        return session_row_locked(self.store, self.session_name)

    def setup_done_elsewhere(self, label: str, control: RunControl, *,
                             on_phase: Callable[[str], None] | None = None, poll_s: float = 2.0) -> bool:
        """Wait while another live worker runs setup step ``label``; True once it is done (or on
        stop), False when it is this worker's to run. ``on_phase`` hears what it waits for."""
        name = self.session_name
        while True:
            runs = [r for r in self.store.runs(name, kinds=("setup",), with_series=False) if r["label"] == label]
            if any(r["status"] == "done" for r in runs):
                return True
            workers = self.workers()
            busy = [r for r in runs if r["status"] in RUN_ACTIVE and r["worker"] != self.worker_id
                    and self.is_alive(workers.get(r["worker"]))]
            if not busy:
                return False
            if on_phase is not None:
                on_phase(f"pre-cache: {label} (waiting for worker {busy[0]['worker']})")
            if control.stop_requested():
                return True
            control.wait(poll_s)
