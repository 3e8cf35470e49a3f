"""POSIX process control: a new session per run, signals to its process group.

The leader is started with ``start_new_session=True``, so its pid is also its session and
process-group id: every child that does not call ``setsid`` itself stays in that group,
and one ``killpg`` reaches all of them, even after the leader died. Escapees (``setsid``,
double fork) leave the group; :mod:`bracket.session.process.groups` finds those by the run marker.
Where the machine lets Bracket create cgroups (:mod:`._cgroup`), the run also gets a cgroup
of its own, which holds every process it starts, one that cleared its environment too.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections.abc import Sequence

import psutil

from bracket.session.process._cgroup import RunCgroup, kill_marked_cgroups


def _killpg(pgid: int, sig: int) -> None:
    """Signal a process group, never our own (a run's group is never Bracket's)."""
    if pgid <= 1 or pgid == os.getpgrp():
        return
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _members(pgid: int) -> list[psutil.Process]:
    if pgid <= 1 or pgid == os.getpgrp():
        return []
    members = []
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == pgid:
                members.append(process)
        except (OSError, psutil.Error):
            continue
    return members


class PosixGroup:
    """The process group of one started run (its id is the leader's pid)."""

    def __init__(self, pgid: int, cgroup: RunCgroup | None = None) -> None:
        self.pgid = pgid
        self.cgroup = cgroup

    def stop_gracefully(self, popen: subprocess.Popen, descendants: list[psutil.Process]) -> None:
        """SIGTERM to the known descendants, the group and the leader (in case it left its group)."""
        for process in descendants:
            try:
                process.terminate()
            except psutil.Error:
                pass
        _killpg(self.pgid, signal.SIGTERM)
        if self.cgroup is not None:
            self.cgroup.signal_all(signal.SIGTERM)
        if popen.poll() is None:
            popen.send_signal(signal.SIGTERM)

    def kill(self, popen: subprocess.Popen) -> None:
        """SIGKILL to the group, the cgroup and the leader."""
        _killpg(self.pgid, signal.SIGKILL)
        if self.cgroup is not None:
            self.cgroup.kill()
        if popen.poll() is None:
            popen.kill()

    def members(self, popen: subprocess.Popen) -> list[psutil.Process]:
        members = {p.pid: p for p in _members(self.pgid)}
        for pid in self.cgroup.pids() if self.cgroup is not None else ():
            try:
                members.setdefault(pid, psutil.Process(pid))
            except psutil.Error:
                pass
        return list(members.values())

    def close(self) -> None:
        """The run is over: whatever is left in its cgroup is killed and the cgroup removed
        (a process group is not a handle)."""
        if self.cgroup is not None:
            self.cgroup.close()


class PosixPlatform:
    """Start in a new session; groups by process-group id."""

    name = "posix"

    def start(self, cmd: list[str], *, cwd: str, env: dict[str, str],
              stdout) -> tuple[subprocess.Popen, PosixGroup]:
        cgroup = RunCgroup.create(env.get("BRACKET_RUN_ID", ""))
        try:  # the child enters the cgroup before exec: nothing it starts is ever outside
            popen = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=stdout, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True,
                                     preexec_fn=cgroup.enter if cgroup is not None else None)
        except BaseException:
            if cgroup is not None:
                cgroup.close()
            raise
        if cgroup is not None:
            cgroup.started()
        return popen, PosixGroup(popen.pid, cgroup)

    def group_members_of(self, leader_pid: int) -> list[psutil.Process]:
        """Processes in the group the (live, verified) leader ``leader_pid`` started."""
        return _members(leader_pid)

    def kill_group_of(self, leader_pid: int) -> None:
        _killpg(leader_pid, signal.SIGKILL)

    def kill_run_cgroups(self, marker: str) -> bool:
        """Kill and remove the cgroup of run ``marker`` (recovery after Bracket died); True if
        it held a process."""
        return kill_marked_cgroups(marker)

    def wait_exits(self, processes: Sequence[psutil.Process], timeout: float) -> None:
        """Return once each of ``processes`` has ended (a zombie counts) or ``timeout`` passed,
        told by the kernel (a pidfd per process, Linux 5.3+); at once where there are none (the
        caller then looks at the processes again itself)."""
        if not hasattr(os, "pidfd_open"):
            return
        poller, opened, watched = select.poll(), [], set()
        try:
            for process in processes:
                try:
                    fd = os.pidfd_open(process.pid)
                except ProcessLookupError:
                    continue  # gone already
                except OSError:  # no pidfds here (an old kernel, a sandbox)
                    return
                opened.append(fd)
                if process.is_running():  # still the same process (psutil checks its start time)
                    poller.register(fd, select.POLLIN)
                    watched.add(fd)
            deadline = time.monotonic() + timeout
            while watched:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                for fd, _ in poller.poll(left * 1000):  # readable once the process has ended
                    poller.unregister(fd)
                    watched.discard(fd)
        finally:
            for fd in opened:
                os.close(fd)
