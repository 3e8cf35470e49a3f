"""Run one trainer process: log to a file, watch it, stop it, and kill its whole tree.

A :class:`Runner` launches a :class:`~bracket.trainer.base.LaunchSpec` as its own process
group (``start_new_session=True``) with stdout and stderr appended to a log file — never a
pipe, so a trainer that prints 50 MB of progress bars can neither block on a full pipe nor
fill our memory. :meth:`Runner.wait` blocks until the process exits, :meth:`Runner.stop`
is called (from any thread, or from the ``on_poll`` callback itself) or the timeout passes,
and calls ``on_poll`` every ``poll_interval`` seconds in between; the session reads
tfevents there. It notices an exit or a stop within about 0.05 s.

Stopping terminates the whole tree: every descendant (``psutil`` ``children(recursive=True)``,
captured before anything is signalled, and re-captured at every poll so that orphans whose
parent already died are still known) and the process group, first with SIGTERM and, after
``grace_s``, with SIGKILL. ``accelerate launch`` starts the training script as a child and
that script starts data-loader workers; all of them go. When the trainer exits on its own,
descendants it left behind are terminated too, because an orphaned worker can hold GPU memory.

:func:`kill_process_tree` is for resuming after Bracket itself died: a run recorded with
its pid and ``create_time`` is killed only if that pid still belongs to the same process
(pids are reused). :func:`read_log_tail` reads the end of a log cheaply.

A note on zombies: a killed descendant whose parent is also gone is reparented to PID 1,
which reaps it on a normal system. Some containers run a PID 1 that never reaps; there the
dead process stays a zombie. A zombie holds no memory, GPU or files, so this module
counts it as gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import psutil

from bracket.trainer.base import LaunchSpec

#: how often wait() checks for exit, stop and timeout (the reaction time)
_TICK_S = 0.05
#: extra time given to processes to vanish after SIGKILL
_KILL_WAIT_S = 2.0
#: create_time comparison slack: psutil derives it from the boot time, which may shift by 1 s
_CREATE_TIME_TOLERANCE_S = 1.0


@dataclass(frozen=True)
class RunResult:
    """How one process ended."""

    #: None if it never started; negative = killed by signal N
    exit_code: int | None
    duration_s: float
    #: last 40 lines of the log (\r progress lines collapsed to their last state)
    log_tail: list[str]
    #: stop() was called (for any reason, the timeout included)
    stopped: bool
    timed_out: bool
    pid: int | None
    #: "", "stopped", "timeout", a reason given to stop(), or "could not start: ..."
    reason: str = ""

    @property
    def ok(self) -> bool:
        """The process ran to the end and exited 0."""
        return self.exit_code == 0 and not self.stopped and not self.timed_out


class Runner:
    """One trainer process: start it, wait for it, stop it (thread-safe)."""

    def __init__(
        self,
        spec: LaunchSpec,
        log_path: Path,
        *,
        timeout_s: float | None = None,
        grace_s: float = 5.0,
    ) -> None:
        self.spec = spec
        self.log_path = Path(log_path)
        self.timeout_s = timeout_s
        self.grace_s = grace_s
        self.pid: int | None = None
        #: psutil create_time of the child, recorded for resume (see kill_process_tree)
        self.create_time: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._stop_reason: str | None = None
        self._start_error: str | None = None
        self._started_at: float | None = None
        #: every descendant seen so far; killed with the tree
        self._descendants: dict[int, psutil.Process] = {}
        self._reaper: threading.Thread | None = None
        self._result: RunResult | None = None

    # ----------------------------------------------------------------- start / stop

    def start(self) -> int | None:
        """Launch the process; returns its pid, or None if it could not start.

        A missing executable or working folder does not raise: :meth:`wait` then returns
        a result with ``reason`` "could not start: ...", and the reason is also written to
        the log. If :meth:`stop` was called before, nothing is launched.
        """
        with self._lock:
            if self._proc is not None or self._start_error is not None:
                raise RuntimeError("Runner.start() called twice")
            self._started_at = time.monotonic()
            if self._stop_event.is_set():
                return None
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.log_path, "ab") as log:
                try:
                    self._proc = subprocess.Popen(
                        [str(part) for part in self.spec.cmd],
                        cwd=str(self.spec.cwd),
                        env=self.spec.env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL,
                        start_new_session=True,
                    )
                except OSError as error:
                    self._start_error = f"could not start: {error}"
                    log.write(f"[bracket] {self._start_error}\n".encode("utf-8", "replace"))
                    return None
            self.pid = self._proc.pid
            try:
                self.create_time = psutil.Process(self.pid).create_time()
            except psutil.Error:  # already gone: it exited at once
                self.create_time = None
            return self.pid

    def stop(self, reason: str = "stopped") -> None:
        """Terminate the whole process tree; kill what is left after ``grace_s``.

        Thread-safe and idempotent (the first reason wins). Returns at once: SIGTERM is
        sent here and a background thread escalates to SIGKILL; :meth:`wait` returns only
        after the tree is gone.
        """
        with self._lock:
            if self._stop_reason is not None:
                return
            self._stop_reason = reason or "stopped"
            proc = self._proc
            if proc is not None and proc.returncode is None:
                self._remember_descendants()
                _signal_all(self._live_descendants(), signal.SIGTERM)
                self._signal_group(signal.SIGTERM)
                proc.send_signal(signal.SIGTERM)  # in case it left its group
                self._reaper = threading.Thread(
                    target=self._finish_stop, name=f"bracket-stop-{proc.pid}", daemon=True
                )
                self._reaper.start()
            self._stop_event.set()

    def _finish_stop(self) -> None:
        """Background part of stop(): wait for the grace time, then SIGKILL the rest."""
        proc = self._proc
        assert proc is not None
        try:
            proc.wait(timeout=self.grace_s)
        except subprocess.TimeoutExpired:
            self._signal_group(signal.SIGKILL)
            proc.kill()
            try:
                proc.wait(timeout=_KILL_WAIT_S)
            except subprocess.TimeoutExpired:
                pass
        _terminate_and_wait(self._live_descendants(), self.grace_s)
        self._signal_group(signal.SIGKILL)
        _wait_gone(self._group_members(), _KILL_WAIT_S)

    # ----------------------------------------------------------------------- wait

    def wait(
        self, *, on_poll: Callable[[], None] | None = None, poll_interval: float = 0.5
    ) -> RunResult:
        """Block until the process exits, stop() is called or the timeout passes.

        ``on_poll`` runs every ``poll_interval`` seconds while the process runs (and may
        call :meth:`stop` itself). The process tree is gone when this returns.
        """
        if self._result is not None:
            return self._result
        if self._started_at is None:
            raise RuntimeError("Runner.wait() called before start()")
        proc = self._proc
        if proc is None:
            return self._finish(exit_code=None)
        next_poll = time.monotonic()
        deadline = self._started_at + self.timeout_s if self.timeout_s is not None else None
        while True:
            if proc.poll() is not None or self._stop_event.is_set():
                break
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                self.stop("timeout")
                break
            if now >= next_poll:
                self._remember_descendants()
                if on_poll is not None:
                    try:
                        on_poll()
                    except BaseException as error:
                        self.stop(f"error while watching the run: {error!r}")
                        self._join_stop()
                        raise
                next_poll = time.monotonic() + poll_interval
                continue  # on_poll may have taken a while: check exit/stop again first
            sleep = _TICK_S if deadline is None else min(_TICK_S, max(deadline - now, 0.0))
            self._stop_event.wait(sleep)
        if not self._join_stop():
            proc.wait()
            # descendants left behind by a trainer that exited on its own
            leftovers = self._live_descendants()
            if leftovers:
                _terminate_and_wait(leftovers, self.grace_s)
            self._signal_group(signal.SIGKILL)
            _wait_gone(self._group_members(), _KILL_WAIT_S)
        return self._finish(exit_code=proc.returncode)

    def _join_stop(self) -> bool:
        """Wait for a stop in progress to finish; False if there is none."""
        with self._lock:  # stop() holds the lock until its reaper thread exists
            reaper = self._reaper
        if reaper is None:
            return False
        reaper.join()
        return True

    def run(self, **kw: object) -> RunResult:
        """start() and wait(); keyword arguments go to wait()."""
        self.start()
        return self.wait(**kw)  # type: ignore[arg-type]

    # ------------------------------------------------------------------- helpers

    def _finish(self, *, exit_code: int | None) -> RunResult:
        started = self._started_at if self._started_at is not None else time.monotonic()
        stop_reason = self._stop_reason
        if self._start_error is not None:
            reason = self._start_error
        else:
            reason = stop_reason or ""
        self._result = RunResult(
            exit_code=exit_code,
            duration_s=time.monotonic() - started,
            log_tail=read_log_tail(self.log_path, 40),
            stopped=stop_reason is not None,
            timed_out=stop_reason == "timeout",
            pid=self.pid,
            reason=reason,
        )
        return self._result

    def _remember_descendants(self) -> None:
        """Record every current descendant, so orphans are still known at stop time."""
        if self.pid is None:
            return
        try:
            children = psutil.Process(self.pid).children(recursive=True)
        except psutil.Error:
            return
        for child in children:
            self._descendants.setdefault(child.pid, child)

    def _live_descendants(self) -> list[psutil.Process]:
        known = list(self._descendants.values())  # a copy: the wait thread may add to it
        return [p for p in known if _alive(p)]

    def _group_members(self) -> list[psutil.Process]:
        """Live processes still in the child's process group (orphans included)."""
        if self.pid is None or self.pid == os.getpgrp():
            return []
        members = []
        for process in psutil.process_iter():
            try:
                if os.getpgid(process.pid) == self.pid and _alive(process):
                    members.append(process)
            except (OSError, psutil.Error):
                continue
        return members

    def _signal_group(self, sig: int) -> None:
        """Signal the child's process group (its pgid is its pid: a new session)."""
        if self.pid is None or self.pid == os.getpgrp():
            return
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _alive(process: psutil.Process) -> bool:
    """Running and not a zombie (is_running also guards against pid reuse)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _signal_all(processes: Iterable[psutil.Process], sig: int) -> list[psutil.Process]:
    signalled = []
    for process in processes:
        try:
            process.send_signal(sig)
            signalled.append(process)
        except psutil.Error:
            pass
    return signalled


def _wait_gone(processes: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Wait until every process is gone or a zombie; returns those still alive."""
    deadline = time.monotonic() + timeout
    alive = [p for p in processes if _alive(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [p for p in alive if _alive(p)]
    return alive


def _terminate_and_wait(processes: list[psutil.Process], grace_s: float) -> bool:
    """SIGTERM, wait ``grace_s``, SIGKILL the rest; True if anything was signalled."""
    signalled = _signal_all(processes, signal.SIGTERM)
    remaining = _wait_gone(processes, grace_s)
    if remaining:
        signalled += _signal_all(remaining, signal.SIGKILL)
        _wait_gone(remaining, _KILL_WAIT_S)
    return bool(signalled)


def kill_process_tree(pid: int, *, create_time: float | None = None, grace_s: float = 5.0) -> bool:
    """Kill ``pid`` and its descendants (children first); True if anything was killed.

    With ``create_time`` (as recorded by :attr:`Runner.create_time`) nothing is done unless
    the process with that pid was created at that time (within a second, as psutil derives
    it from the boot time): after a reboot or a long pause the pid may belong to some
    unrelated process. If ``pid`` leads its own process group (as
    every Runner child does), the rest of the group is signalled too.
    """
    try:
        root = psutil.Process(pid)
        if create_time is not None and abs(root.create_time() - create_time) > _CREATE_TIME_TOLERANCE_S:
            return False
        if root.status() == psutil.STATUS_ZOMBIE:
            return False
        descendants = root.children(recursive=True)
        group_leader = os.getpgid(pid) == pid and pid != os.getpgrp()
    except (psutil.Error, ProcessLookupError):
        return False
    killed = _terminate_and_wait([p for p in descendants if _alive(p)], grace_s)
    killed = _terminate_and_wait([root], grace_s) or killed
    if group_leader:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return killed


def read_log_tail(path: Path, lines: int = 40, *, max_bytes: int = 256_000) -> list[str]:
    """The last ``lines`` lines of a log, reading at most ``max_bytes`` from its end.

    Lines are split on ``\\n``; within a line, ``\\r``-separated progress updates collapse
    to their last non-empty state. Empty lines are dropped. A missing file gives [].
    """
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            start = max(0, size - max_bytes)
            handle.seek(start)
            data = handle.read(max_bytes)
    except OSError:
        return []
    text = data.decode("utf-8", errors="replace")
    raw_lines = text.split("\n")
    if start > 0:
        # the first line is cut somewhere in its middle: keep only its complete \r states
        first = raw_lines[0]
        raw_lines[0] = first.split("\r", 1)[1] if "\r" in first else ""
    tail: list[str] = []
    for raw in raw_lines:
        states = [s.rstrip() for s in raw.split("\r")]
        states = [s for s in states if s.strip()]
        if states:
            tail.append(states[-1])
    return tail[-lines:] if lines > 0 else []
