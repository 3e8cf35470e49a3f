"""Process control: the one place that knows how a trainer's processes are started and ended.

Every trainer process Bracket runs is started here, in a group of its own, with a **run
marker** in its environment (``BRACKET_RUN_ID=<marker>``) that every child, grandchild and
escapee inherits. Three things then identify the run's processes, each a net for what the
one before misses:

1. the **tree** below the process Bracket started (``psutil`` ``children(recursive=True)``);
2. the **group**: on POSIX the leader starts a new session, so its pid is also its
   process-group id and every ordinary child shares it; on Windows a Job Object (when
   pywin32 is installed) holds the leader and everything it starts;
3. the **marker**: any process whose environment holds the run's marker belongs to the run,
   wherever it went — a grandchild that called ``setsid`` and double-forked, or the children
   left behind after the leader died while Bracket was dead.

Public functions, the same on every platform:

* :func:`start` — launch a command in a new group with the marker; returns a :class:`Started`
  whose ``stop_gracefully`` / ``kill_group`` / ``group_members`` / ``close`` act on its group;
* :func:`terminate_and_wait` — ask processes to end, kill those still alive after a grace time;
* :func:`find_leftovers` / :func:`kill_leftovers` — the processes of a run recorded as a
  :class:`ProcessRecord` (pid, start time, marker), found again after Bracket itself died;
* :func:`run_marker` — the marker of one run, derived from what the store already holds;
* :func:`leader` — the recorded leader, if that very process still runs;
* :func:`pid_exists` — whether a pid is in use (never a signal: ``os.kill(pid, 0)`` *kills*
  the process on Windows).

The platform parts live in :mod:`._posix` and :mod:`._windows`; :data:`PLATFORM` is the one
in use, and tests replace it (or the calls inside it) to exercise the other on this machine.
No module outside this package calls a platform-specific process API; a test scans for it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import psutil

from bracket.trainer.environment import trainer_environment

#: the environment variable every process of a run inherits
MARKER_ENV = "BRACKET_RUN_ID"
#: create_time comparison slack: psutil derives it from the boot time, which may shift by 1 s
CREATE_TIME_TOLERANCE_S = 1.0
#: extra time given to processes to vanish after a hard kill
KILL_WAIT_S = 2.0


@dataclass(frozen=True)
class ProcessRecord:
    """What identifies a run's processes after Bracket itself died.

    ``pid`` and ``create_time`` name the leader (a pid is only trusted together with its
    start time: pids are reused); on POSIX the leader's pid is also its process-group id.
    ``marker`` is the value of ``BRACKET_RUN_ID`` in the environment of every process of
    the run, which finds them even when the leader is gone.
    """

    pid: int | None
    create_time: float | None = None
    marker: str = ""


def run_marker(session: str, run_id: int, started_at: float) -> str:
    """The marker of one run: a digest of its session, id and start time (all in the store).

    Derived rather than stored, so a store written before markers existed needs no new
    column, and recovery computes the same value from the run's row.
    """
    text = f"{session}\0{run_id}\0{float(started_at)!r}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def _platform() -> Any:
    if os.name == "nt":  # pragma: no cover - exercised through tests with the calls replaced
        from bracket.session.process._windows import WindowsPlatform

        return WindowsPlatform()
    from bracket.session.process._posix import PosixPlatform

    return PosixPlatform()


#: the implementation in use (``PosixPlatform`` or ``WindowsPlatform``)
PLATFORM: Any = _platform()


class Started:
    """A process started by :func:`start`, with the handle of its group."""

    def __init__(self, popen: subprocess.Popen, group: Any, marker: str) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.marker = marker
        self._group = group
        try:
            self.create_time: float | None = psutil.Process(self.pid).create_time()
        except psutil.Error:  # already gone: it exited at once
            self.create_time = None

    def stop_gracefully(self, descendants: Sequence[psutil.Process] = ()) -> None:
        """Ask the group (and ``descendants`` that may have left it) to end: SIGTERM / CTRL_BREAK_EVENT."""
        self._group.stop_gracefully(self.popen, list(descendants))

    def kill_group(self) -> None:
        """Kill every process of the group at once (SIGKILL to the group / terminate the job)."""
        self._group.kill(self.popen)

    def group_members(self) -> list[psutil.Process]:
        """Live processes still in the group, orphans whose leader died included."""
        return [p for p in self._group.members(self.popen) if alive(p)]

    def close(self) -> None:
        """Release the group's handle (a Job Object on Windows); call once the run is over."""
        self._group.close()


def start(cmd: Sequence[str], *, cwd: Path | str, env: dict[str, str] | None, stdout: IO[bytes],
          marker: str) -> Started:
    """Start ``cmd`` in a new process group with ``BRACKET_RUN_ID=marker`` in its environment
    (``env`` as :func:`~bracket.trainer.environment.trainer_environment` keeps it).

    stdout and stderr both go to ``stdout`` (a file: never a pipe), stdin is empty. Raises
    ``OSError`` when the program or folder is missing, like ``subprocess.Popen``.
    """
    full_env = trainer_environment(env)  # never Bracket's credentials, whatever ``env`` holds
    full_env[MARKER_ENV] = marker
    popen, group = PLATFORM.start([str(part) for part in cmd], cwd=str(cwd), env=full_env, stdout=stdout)
    return Started(popen, group, marker)


# --------------------------------------------------------------- platform-neutral (psutil)

def alive(process: psutil.Process) -> bool:
    """Running and not a zombie (``is_running`` also guards against pid reuse)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.AccessDenied:  # another user's process: it exists
        return True
    except psutil.Error:
        return False


def pid_exists(pid: int) -> bool:
    """Whether ``pid`` belongs to a process (a zombie counts as gone)."""
    try:
        return alive(psutil.Process(int(pid)))
    except (psutil.Error, ValueError):
        return False


def wait_gone(processes: Iterable[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Wait until every process is gone or a zombie; returns those still alive. The platform's
    wait (``wait_exits``: told by the kernel) first; where it cannot tell, a look every 20 ms."""
    deadline = time.monotonic() + timeout
    remaining = [p for p in processes if alive(p)]
    if remaining:
        PLATFORM.wait_exits(remaining, timeout)
        remaining = [p for p in remaining if alive(p)]
    while remaining and time.monotonic() < deadline:
        time.sleep(0.02)
        remaining = [p for p in remaining if alive(p)]
    return remaining


def _each(processes: Iterable[psutil.Process], action: str) -> list[psutil.Process]:
    done = []
    for process in processes:
        try:
            getattr(process, action)()
            done.append(process)
        except psutil.Error:
            pass
    return done


def terminate(processes: Iterable[psutil.Process]) -> list[psutil.Process]:
    """Ask each process to end (SIGTERM on POSIX; on Windows psutil can only terminate hard)."""
    return _each(processes, "terminate")


def terminate_and_wait(processes: Iterable[psutil.Process], grace_s: float) -> bool:
    """Terminate, wait ``grace_s``, kill the rest; True if anything was signalled."""
    processes = [p for p in processes if alive(p)]
    signalled = terminate(processes)
    remaining = wait_gone(processes, grace_s)
    if remaining:
        signalled += _each(remaining, "kill")
        wait_gone(remaining, KILL_WAIT_S)
    return bool(signalled)


def _same_process(process: psutil.Process, create_time: float | None) -> bool:
    if create_time is None:
        return True
    try:
        return abs(process.create_time() - float(create_time)) <= CREATE_TIME_TOLERANCE_S
    except psutil.Error:
        return False


def marked(marker: str, *, since: float | None = None) -> list[psutil.Process]:
    """Live processes whose environment holds ``BRACKET_RUN_ID=marker`` (not this one).

    ``since`` (a start time) skips processes created before it without reading their
    environment. Processes whose environment cannot be read (another user's) are skipped.
    """
    if not marker:
        return []
    found = []
    me = os.getpid()
    for process in psutil.process_iter(["create_time"]):
        if process.pid == me:
            continue
        created = process.info.get("create_time")
        if since is not None and created is not None and created < since - CREATE_TIME_TOLERANCE_S:
            continue
        try:
            if process.environ().get(MARKER_ENV) == marker and alive(process):
                found.append(process)
        except (psutil.Error, OSError):
            continue
    return found


def leader(record: ProcessRecord) -> psutil.Process | None:
    """The recorded leader if it still runs (same pid **and** start time, not a zombie)."""
    if not record.pid:
        return None
    try:
        candidate = psutil.Process(int(record.pid))
    except (psutil.Error, ValueError):
        return None
    return candidate if _same_process(candidate, record.create_time) and alive(candidate) else None


def find_leftovers(record: ProcessRecord) -> list[psutil.Process]:
    """Every live process of a recorded run: leader, tree, group and marker, children first.

    The leader counts only if its start time matches (pids are reused); its tree and its
    group then too. Without a live leader, only processes that carry the run's marker are
    taken — the group id alone could by now name an unrelated group.
    """
    found: dict[int, psutil.Process] = {}
    head = leader(record)
    if head is not None:
        try:
            for child in head.children(recursive=True):
                found.setdefault(child.pid, child)
        except psutil.Error:
            pass
        for member in PLATFORM.group_members_of(head.pid):
            found.setdefault(member.pid, member)
    for process in marked(record.marker, since=record.create_time):
        found.setdefault(process.pid, process)
    found.pop(os.getpid(), None)
    ordered = [p for p in found.values() if alive(p) and (head is None or p.pid != head.pid)]
    return ordered + ([head] if head is not None else [])


def kill_leftovers(record: ProcessRecord, *, grace_s: float = 5.0) -> bool:
    """Kill every process :func:`find_leftovers` finds (children before the leader), and the
    run's cgroup where it has one (a process that cleared its environment is found only there);
    True if any."""
    in_cgroup = PLATFORM.kill_run_cgroups(record.marker)
    leftovers = find_leftovers(record)
    if not leftovers:
        return in_cgroup
    head = leftovers[-1] if record.pid and leftovers[-1].pid == record.pid else None
    others = [p for p in leftovers if p is not head]
    killed = terminate_and_wait(others, grace_s)
    if head is not None:
        killed = terminate_and_wait([head], grace_s) or killed
        PLATFORM.kill_group_of(head.pid)  # anything forked meanwhile (the group was the leader's)
    return killed or in_cgroup


def containment_note() -> str:
    """"" where every process a run starts is held by the run (a cgroup per run on Linux, a Job
    Object on Windows); else the start-up notice saying what may escape, and why."""
    if os.name == "nt":
        return ""
    from bracket.session.process._cgroup import probe

    why = probe()
    return "" if not why else (
        f"note: {why}, so runs get no cgroup of their own: a trainer process that clears its environment "
        "and leaves its process group (setsid and a double fork) may outlive its run "
        "(docs/RELIABILITY.md, 'Process trees').")
