"""Recovering from a process that died in the middle of a search.

A run left *running* in the store by a process that no longer exists is marked
``interrupted`` — which does not spend budget, so its slot is run again — and every process
of it still alive on this machine is killed: the recorded leader (pid plus process start
time, so a reused pid is never touched) with its tree and process group, and — even when
the leader itself is gone — every process carrying the run's marker (``BRACKET_RUN_ID``,
derived from the run's session, id and start time; see :mod:`bracket.session.process.groups`).
Runs of a worker on another machine are only taken over once that worker's heartbeat is older
than the grace period. A run of this very worker
is recovered too when its process is gone (an error, such as a full disk, cut it short).
A *paused* run (stopped at a rung with its state saved, ``bracket.search.halving``) is neither
active nor interrupted and is left alone; one killed while it was being resumed (running, with
the ``pause_step`` it resumed from) goes back to paused, to resume again from that state.
"""

from __future__ import annotations

import errno
import os
import socket
import time
from typing import Any

from bracket.session.launches import back_to_pause
from bracket.session.process import groups as proc
from bracket.session.store import Store
from bracket.session.store.schema import RUN_ACTIVE

#: a worker whose heartbeat is older than this is considered dead
DEFAULT_GRACE_SECONDS = 60.0


def worker_is_alive(worker: dict[str, Any] | None, *, grace_s: float = DEFAULT_GRACE_SECONDS) -> bool:
    """Whether a worker row belongs to a process that is still working."""
    if worker is None or worker.get("status") == "stopped":
        return False
    if worker.get("host") == socket.gethostname() and worker.get("pid"):
        if int(worker["pid"]) == os.getpid():
            return True
        if not proc.pid_exists(int(worker["pid"])):
            return False
    return time.time() - float(worker.get("heartbeat_at") or 0) <= grace_s


#: what a search the store calls running shows when no live process runs it (killed, or its machine gone)
INTERRUPTED_SHOWN = "interrupted (no process runs it; resume it)"


def shown_status(status: str, workers: list[dict[str, Any]], grace_s: float | None = None) -> str:
    """The one liveness rule of ``status`` and the app's past sessions: a session stored as
    running whose workers are all gone (:func:`worker_is_alive`) is shown as interrupted."""
    grace = DEFAULT_GRACE_SECONDS if grace_s is None else grace_s
    if status == "running" and not any(worker_is_alive(w, grace_s=grace) for w in workers):
        return INTERRUPTED_SHOWN
    return status


def process_record(session: str, run: dict[str, Any]) -> proc.ProcessRecord:
    """What identifies the processes of a stored run: leader pid, its start time, the run marker."""
    started = run.get("started_at")
    marker = proc.run_marker(session, int(run["id"]), float(started)) if started else ""
    pid = int(run["pid"]) if run.get("pid") else None
    return proc.ProcessRecord(pid, run.get("pid_create_time"), marker)


def _process_running(session: str, run: dict[str, Any]) -> bool:
    """Whether the leader recorded for ``run`` still runs (same pid and start time, not a zombie)."""
    return proc.leader(process_record(session, run)) is not None


def failure_message(error: BaseException) -> str:
    """What to show when a session stops on an unexpected error; a full disk says what to do."""
    text = f"{type(error).__name__}: {error}"
    full = (isinstance(error, OSError) and error.errno == errno.ENOSPC) or "disk is full" in str(error) \
        or "No space left on device" in str(error)
    if full:
        return (f"The disk is full ({text}). Free some space, then resume the session; finished runs are kept and "
                "the interrupted one runs again.")
    return text


def recover_interrupted_runs(store: Store, session: str, *, self_worker: str,
                             grace_s: float = DEFAULT_GRACE_SECONDS) -> list[str]:
    """Mark the runs of dead workers interrupted (killing their orphans); return notes."""
    workers = {w["worker_id"]: w for w in store.workers(session)}
    host = socket.gethostname()
    notes: list[str] = []
    for run in store.runs(session, with_series=False, statuses=RUN_ACTIVE):
        owner = run.get("worker") or ""
        if owner == self_worker:
            if _process_running(session, run):
                continue  # ours and still going; ours with no process left is a run an error cut short
        elif owner and worker_is_alive(workers.get(owner), grace_s=grace_s):
            continue
        killed = False
        if not owner or owner.split(":")[0] == host:
            killed = proc.kill_leftovers(process_record(session, run))
        killed_note = "; its leftover trainer processes were killed" if killed else ""
        if run.get("pause_step") and run["status"] == "running":
            # a resume of a paused run cut short: its state of that step is still there, it resumes again
            store.update_run(run["id"], **back_to_pause(store.get_run(run["id"]) or run), finished_at=time.time(),
                             failure_reason=f"the Bracket process resuming this stopped; it resumes again from "
                             f"step {run['pause_step']}{killed_note}")
            notes.append(f"run {run['id']} was cut short while resuming and stays paused at step {run['pause_step']}")
            continue
        store.update_run(run["id"], status="interrupted", pid=None, finished_at=time.time(),
                         failure_reason="the Bracket process running this stopped; the slot is run again" + killed_note)
        notes.append(f"run {run['id']} was interrupted and will be run again")
    return notes
