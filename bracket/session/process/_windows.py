"""Windows process control: a new process group, CTRL_BREAK_EVENT, and a Job Object.

* The leader is created with ``CREATE_NEW_PROCESS_GROUP``: Ctrl+C in Bracket's console does
  not reach it, and ``os.kill(pid, CTRL_BREAK_EVENT)`` asks its whole console group to stop
  (the graceful stop; a process without Bracket's console cannot receive it, and is then
  killed after the grace time).
* When pywin32 is installed (``requirements.txt`` pulls it on Windows), the leader is
  created suspended, put into a **Job Object** with ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE``,
  then resumed: everything it starts is in the job from its first instruction, the whole
  job is ended with ``TerminateJobObject``, and when Bracket exits — even killed — Windows
  closes the job handle and ends every process still in it. Without pywin32 the tree is
  killed through psutil alone.
* Windows has no process groups to find again after a restart: leftovers of a dead Bracket
  are found by their start time, tree and run marker (:mod:`bracket.session.process.groups`).

The platform calls (``Popen``, ``os.kill``, psutil, pywin32) are attributes of
:class:`WindowsPlatform`, so tests on Linux replace them and check what would be called.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from typing import Any

import psutil

#: process creation flags (winbase.h); spelled out because subprocess has them on Windows only
CREATE_NEW_PROCESS_GROUP = 0x00000200
CREATE_SUSPENDED = 0x00000004
#: the console control event sent by os.kill (signal.CTRL_BREAK_EVENT on Windows)
CTRL_BREAK_EVENT = 1
#: winnt.h access rights needed to put a process into a job
PROCESS_SET_QUOTA = 0x0100
PROCESS_TERMINATE = 0x0001
#: exit code of processes ended by TerminateJobObject
JOB_KILL_EXIT_CODE = 1


class JobObject:
    """A Job Object that kills its processes when it is closed (pywin32's ``win32job``)."""

    def __init__(self, win32job: Any, win32api: Any) -> None:
        self._job, self._api = win32job, win32api
        self.handle = win32job.CreateJobObject(None, "")
        info = win32job.QueryInformationJobObject(self.handle, win32job.JobObjectExtendedLimitInformation)
        info["BasicLimitInformation"]["LimitFlags"] |= win32job.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        win32job.SetInformationJobObject(self.handle, win32job.JobObjectExtendedLimitInformation, info)

    def assign(self, pid: int) -> None:
        process = self._api.OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, False, pid)
        try:
            self._job.AssignProcessToJobObject(self.handle, process)
        finally:
            self._api.CloseHandle(process)

    def terminate(self) -> None:
        self._job.TerminateJobObject(self.handle, JOB_KILL_EXIT_CODE)

    def close(self) -> None:
        if self.handle is not None:
            self._api.CloseHandle(self.handle)  # KILL_ON_JOB_CLOSE ends what is still in it
            self.handle = None


def _load_pywin32() -> tuple[Any, Any] | None:
    try:
        import win32api
        import win32job
    except ImportError:
        return None
    return win32job, win32api


class WindowsGroup:
    """The process group (and Job Object, if any) of one started run."""

    def __init__(self, platform: "WindowsPlatform", pid: int, job: JobObject | None) -> None:
        self._platform = platform
        self.pid = pid
        self.job = job

    def stop_gracefully(self, popen: subprocess.Popen, descendants: list[psutil.Process]) -> None:
        """CTRL_BREAK_EVENT to the group; descendants are left to it (terminate would be a hard kill)."""
        if popen.poll() is not None:
            return
        try:
            self._platform.os_kill(self.pid, CTRL_BREAK_EVENT)
        except OSError:  # no shared console: the hard kill after the grace time ends it
            pass

    def kill(self, popen: subprocess.Popen) -> None:
        """End the whole job at once, else the leader's tree through psutil."""
        members = self.members(popen)
        if self.job is not None:
            try:
                self.job.terminate()
            except Exception:  # noqa: BLE001 - pywin32 raises pywintypes.error; fall back to psutil
                pass
        for process in members:
            try:
                process.kill()
            except psutil.Error:
                pass
        if popen.poll() is None:
            popen.kill()

    def members(self, popen: subprocess.Popen) -> list[psutil.Process]:
        """The leader's live tree (Windows has no group to list)."""
        return self._platform.tree(self.pid)

    def close(self) -> None:
        if self.job is not None:
            self.job.close()


class WindowsPlatform:
    """``CREATE_NEW_PROCESS_GROUP``, ``CTRL_BREAK_EVENT``, psutil, and a Job Object when pywin32 is there."""

    name = "windows"

    def __init__(self, *, popen: Callable[..., subprocess.Popen] = subprocess.Popen,
                 os_kill: Callable[[int, int], None] = os.kill,
                 process: Callable[[int], psutil.Process] = psutil.Process,
                 pywin32: Callable[[], tuple[Any, Any] | None] = _load_pywin32) -> None:
        self.popen, self.os_kill, self.process, self._pywin32 = popen, os_kill, process, pywin32

    def _new_job(self) -> JobObject | None:
        modules = self._pywin32()
        if modules is None:
            return None
        try:
            return JobObject(*modules)
        except Exception:  # noqa: BLE001 - a job may be refused (old nested-job rules): run without
            return None

    def start(self, cmd: list[str], *, cwd: str, env: dict[str, str],
              stdout) -> tuple[subprocess.Popen, WindowsGroup]:
        job = self._new_job()
        flags = CREATE_NEW_PROCESS_GROUP | (CREATE_SUSPENDED if job is not None else 0)
        try:
            popen = self.popen(cmd, cwd=cwd, env=env, stdout=stdout, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, creationflags=flags)
        except BaseException:
            if job is not None:
                job.close()
            raise
        if job is not None:
            try:
                job.assign(popen.pid)
            except Exception:  # noqa: BLE001 - without the job the psutil tree still works
                job.close()
                job = None
            try:
                self._resume(popen)  # created suspended: start it now, inside its job
            except OSError:
                if job is not None:
                    job.close()
                raise
        return popen, WindowsGroup(self, popen.pid, job)

    def _resume(self, popen: subprocess.Popen) -> None:
        """Start the suspended leader; if that fails, end it and report it like a failed start."""
        try:
            self.process(popen.pid).resume()
        except psutil.Error as error:
            popen.kill()
            raise OSError(f"could not resume the new process {popen.pid}: {error}") from None

    def tree(self, pid: int) -> list[psutil.Process]:
        try:
            leader = self.process(pid)
            return [*leader.children(recursive=True), leader]
        except psutil.Error:
            return []

    def group_members_of(self, leader_pid: int) -> list[psutil.Process]:
        """No process groups to list on Windows: the tree and the marker find the rest."""
        return []

    def kill_group_of(self, leader_pid: int) -> None:
        for process in self.tree(leader_pid):
            try:
                process.kill()
            except psutil.Error:
                pass

    def kill_run_cgroups(self, marker: str) -> bool:
        """No cgroups on Windows: a run's Job Object holds its processes instead."""
        return False

    def wait_exits(self, processes: Sequence[psutil.Process], timeout: float) -> None:
        """Returns at once: the caller looks at the processes itself (``groups.wait_gone``; the tests
        run this platform on Linux too, where a reparented zombie would hold a handle's wait)."""
