"""Run one trainer process: log to a file, watch it, stop it, and kill its whole tree.

A :class:`Runner` launches a :class:`~bracket.trainer.base.LaunchSpec` through
:mod:`bracket.session.process.groups` — in a process group of its own, with the run's marker
(``BRACKET_RUN_ID``) in its environment — with stdout and stderr appended to a log file,
never a pipe, so a trainer that prints 50 MB of progress bars can neither block on a full
pipe nor fill our memory. :meth:`Runner.wait` blocks until the process exits,
:meth:`Runner.stop` is called (from any thread, or from the ``on_poll`` callback itself) or
the timeout passes, and calls ``on_poll`` every ``poll_interval`` seconds in between; the
session reads tfevents there. It notices an exit or a stop within about 0.05 s.

Stopping ends the whole tree: every descendant (``psutil`` ``children(recursive=True)``,
captured before anything is signalled, and re-captured at every poll so that orphans whose
parent already died are still known), the process group, and every process that carries
the run's marker (a grandchild that called ``setsid`` and double-forked has left both the
tree and the group, but not its environment). First gracefully (SIGTERM on POSIX,
CTRL_BREAK_EVENT on Windows), after ``grace_s`` for good. ``accelerate launch`` starts the
training script as a child and that script starts data-loader workers; all of them go.
When the trainer exits on its own, whatever it left behind is ended too, because an
orphaned worker can hold GPU memory.

After Bracket itself died, :func:`bracket.session.process.groups.kill_leftovers` finds a run's
processes again from its recorded pid, start time and marker. :func:`read_log_tail` reads
the end of a log cheaply.

A note on zombies: a killed descendant whose parent is also gone is reparented to PID 1,
which reaps it on a normal system. Some containers run a PID 1 that never reaps; there the
dead process stays a zombie. A zombie holds no memory, GPU or files, so this module
counts it as gone.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

from bracket.session.process import groups as proc
from bracket.session.process.log_cap import MAX_LAUNCH_LOG_BYTES, LogCap
from bracket.trainer.base import LaunchSpec

#: how often wait() checks for exit, stop and timeout (the reaction time)
_TICK_S = 0.05


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
        marker: str | None = None,
        log_limit: int = MAX_LAUNCH_LOG_BYTES,
    ) -> None:
        self.spec = spec
        self.log_path = Path(log_path)
        #: this launch's part of the log kept to ``log_limit`` bytes, head and tail (``log_cap``)
        self.log_cap = LogCap(self.log_path, limit=log_limit)
        self.timeout_s = timeout_s
        self.grace_s = grace_s
        #: the run marker (BRACKET_RUN_ID) every process of this run inherits
        self.marker = marker or uuid.uuid4().hex
        self.pid: int | None = None
        #: psutil create_time of the child, recorded for resume (see proc.kill_leftovers)
        self.create_time: float | None = None
        self._started: proc.Started | None = None
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
                    started = proc.start(self.spec.cmd, cwd=self.spec.cwd, env=self.spec.env, stdout=log,
                                         marker=self.marker)
                except OSError as error:
                    self._start_error = f"could not start: {error}"
                    log.write(f"[bracket] {self._start_error}\n".encode("utf-8", "replace"))
                    return None
            self._started, self._proc = started, started.popen
            self.pid, self.create_time = started.pid, started.create_time
            return self.pid

    def stop(self, reason: str = "stopped") -> None:
        """End the whole process tree gracefully; kill what is left after ``grace_s``.

        Thread-safe and idempotent (the first reason wins). Returns at once: the graceful
        request is sent here and a background thread escalates; :meth:`wait` returns only
        after the tree is gone.
        """
        with self._lock:
            if self._stop_reason is not None:
                return
            self._stop_reason = reason or "stopped"
            popen, started = self._proc, self._started
            if popen is not None and started is not None and popen.returncode is None:
                self._remember_descendants()
                started.stop_gracefully(self._live_descendants())
                self._reaper = threading.Thread(
                    target=self._finish_stop, name=f"bracket-stop-{popen.pid}", daemon=True
                )
                self._reaper.start()
            self._stop_event.set()

    def kill(self) -> None:
        """Kill the whole process tree now, without the grace time (a second Ctrl-C: the person
        will not wait). Returns at once; escapees that left the tree are found by their marker
        when the session is next recovered (``proc.kill_leftovers``)."""
        self.stop("stopped by the user")
        with self._lock:
            popen, started = self._proc, self._started
        if popen is None or started is None:
            return
        self._remember_descendants()
        try:
            for process in [*self._live_descendants(), *started.group_members()]:
                try:
                    process.kill()
                except psutil.Error:  # already gone
                    pass
            started.kill_group()
        except (OSError, psutil.Error):  # the tree ended (and was closed) meanwhile
            pass

    def _finish_stop(self) -> None:
        """Background part of stop(): wait for the grace time, then kill the rest."""
        popen, started = self._proc, self._started
        assert popen is not None and started is not None
        try:
            popen.wait(timeout=self.grace_s)
        except subprocess.TimeoutExpired:
            started.kill_group()
            try:
                popen.wait(timeout=proc.KILL_WAIT_S)
            except subprocess.TimeoutExpired:
                pass
        self._end_leftovers()

    def _end_leftovers(self) -> None:
        """After the leader ended: its descendants, its group and every marked escapee go too."""
        assert self._started is not None
        proc.terminate_and_wait(self._live_descendants(), self.grace_s)
        self._started.kill_group()
        proc.wait_gone(self._started.group_members(), proc.KILL_WAIT_S)
        proc.terminate_and_wait(proc.marked(self.marker, since=self.create_time), self.grace_s)
        self._started.close()

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
        popen = self._proc
        if popen is None:
            return self._finish(exit_code=None)
        next_poll = time.monotonic()
        deadline = self._started_at + self.timeout_s if self.timeout_s is not None else None
        while True:
            if popen.poll() is not None or self._stop_event.is_set():
                break
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                self.stop("timeout")
                break
            if now >= next_poll:
                self._remember_descendants()
                self.log_cap.check()
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
            popen.wait()
            # descendants, group members and escapees left behind by a trainer that exited on its own
            self._end_leftovers()
        return self._finish(exit_code=popen.returncode)

    def _join_stop(self) -> bool:
        """Wait for a stop in progress to finish; False if there is none."""
        with self._lock:  # stop() holds the lock until its reaper thread exists
            reaper = self._reaper
        if reaper is None:
            return False
        reaper.join()
        return True

    def run(self, *, on_poll: Callable[[], None] | None = None, poll_interval: float = 0.5) -> RunResult:
        """start() and wait(on_poll, poll_interval)."""
        self.start()
        return self.wait(on_poll=on_poll, poll_interval=poll_interval)

    # ------------------------------------------------------------------- helpers

    def _finish(self, *, exit_code: int | None) -> RunResult:
        self.log_cap.check()
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
        return [p for p in known if proc.alive(p)]


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
