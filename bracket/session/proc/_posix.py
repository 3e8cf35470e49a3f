"""POSIX process control: a new session per run, signals to its process group.

The leader is started with ``start_new_session=True``, so its pid is also its session and
process-group id: every child that does not call ``setsid`` itself stays in that group,
and one ``killpg`` reaches all of them, even after the leader died. Escapees (``setsid``,
double fork) leave the group; :mod:`bracket.session.proc` finds those by the run marker.
"""

from __future__ import annotations

import os
import signal
import subprocess

import psutil


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

    def __init__(self, pgid: int) -> None:
        self.pgid = pgid

    def stop_gracefully(self, popen: subprocess.Popen, descendants: list[psutil.Process]) -> None:
        """SIGTERM to the known descendants, the group and the leader (in case it left its group)."""
        for process in descendants:
            try:
                process.terminate()
            except psutil.Error:
                pass
        _killpg(self.pgid, signal.SIGTERM)
        if popen.poll() is None:
            popen.send_signal(signal.SIGTERM)

    def kill(self, popen: subprocess.Popen) -> None:
        """SIGKILL to the group and to the leader."""
        _killpg(self.pgid, signal.SIGKILL)
        if popen.poll() is None:
            popen.kill()

    def members(self, popen: subprocess.Popen) -> list[psutil.Process]:
        return _members(self.pgid)

    def close(self) -> None:
        """Nothing to release: a process group is not a handle."""


class PosixPlatform:
    """Start in a new session; groups by process-group id."""

    name = "posix"

    def start(self, cmd: list[str], *, cwd: str, env: dict[str, str],
              stdout) -> tuple[subprocess.Popen, PosixGroup]:
        popen = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=stdout, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
        return popen, PosixGroup(popen.pid)

    def group_members_of(self, leader_pid: int) -> list[psutil.Process]:
        """Processes in the group the (live, verified) leader ``leader_pid`` started."""
        return _members(leader_pid)

    def kill_group_of(self, leader_pid: int) -> None:
        _killpg(leader_pid, signal.SIGKILL)
