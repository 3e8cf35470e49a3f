"""The Windows implementation of process control, exercised on Linux (issue 27).

Nothing here ran on a real Windows machine. The platform calls of
:class:`~bracket.session.process._windows.WindowsPlatform` — ``subprocess.Popen``, ``os.kill``,
``psutil.Process`` and pywin32's ``win32job``/``win32api`` — are replaced at that class's
boundary, and the tests check what Bracket would ask Windows to do: the creation flags, the
Job Object with kill-on-close, the order create-suspended → assign → resume, CTRL_BREAK_EVENT
for a graceful stop, TerminateJobObject and psutil kills for the hard one. The last test runs a
real fake trainer (with a grandchild and a setsid escapee) through the Runner with the Windows
implementation in charge, with ``Popen``/``os.kill`` translated to what Linux can do.
"""

from __future__ import annotations

import os
import signal
import subprocess

import psutil
import pytest

from bracket.session.process import Runner
from bracket.session.process import _windows as win
from bracket.session.process import groups as proc
from tests.fakes import fake_trainer_spec
from tests.reliability.rel_helpers import dead, read_pid

pytestmark = pytest.mark.timeout(120)


class FakeWin32:
    """Records pywin32 calls (win32job + win32api) in order."""

    JobObjectExtendedLimitInformation = 9
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000

    def __init__(self, *, fail_assign: bool = False) -> None:
        self.calls: list[tuple] = []
        self.limits = {"BasicLimitInformation": {"LimitFlags": 0x4}}
        self.fail_assign = fail_assign
        #: a shared log of events, to check the order against Popen and resume
        self.events: list | None = None

    def CreateJobObject(self, attributes, name):  # noqa: N802 - pywin32's names
        self.calls.append(("CreateJobObject", attributes, name))
        return "JOB"

    def QueryInformationJobObject(self, handle, info_class):  # noqa: N802
        self.calls.append(("QueryInformationJobObject", handle, info_class))
        return self.limits

    def SetInformationJobObject(self, handle, info_class, info):  # noqa: N802
        self.calls.append(("SetInformationJobObject", handle, info_class, info["BasicLimitInformation"]["LimitFlags"]))

    def OpenProcess(self, access, inherit, pid):  # noqa: N802
        self.calls.append(("OpenProcess", access, inherit, pid))
        return f"PROC{pid}"

    def AssignProcessToJobObject(self, job, process):  # noqa: N802
        self.calls.append(("AssignProcessToJobObject", job, process))
        if self.events is not None:
            self.events.append(("assign", process))
        if self.fail_assign:
            raise RuntimeError("access denied")

    def TerminateJobObject(self, job, code):  # noqa: N802
        self.calls.append(("TerminateJobObject", job, code))

    def CloseHandle(self, handle):  # noqa: N802
        self.calls.append(("CloseHandle", handle))

    def names(self) -> list[str]:
        return [call[0] for call in self.calls]


class FakePopen:
    def __init__(self, cmd, **kwargs) -> None:
        self.cmd, self.kwargs, self.pid, self.returncode, self.killed = cmd, kwargs, 4242, None, False

    def poll(self):
        return self.returncode

    def kill(self) -> None:
        self.killed = True
        self.returncode = 1


class FakeProcess:
    def __init__(self, pid: int, log: list, children=()) -> None:
        self.pid, self.log, self._children = pid, log, list(children)

    def resume(self) -> None:
        self.log.append(("resume", self.pid))

    def children(self, recursive=False):
        return self._children

    def kill(self) -> None:
        self.log.append(("kill", self.pid))


def _platform(win32: FakeWin32 | None, log: list, *, children=(), os_kill=None):
    popens: list[FakePopen] = []
    if win32 is not None:
        win32.events = log

    def popen(cmd, **kwargs):
        if win32 is not None:
            log.append(("Popen", kwargs["creationflags"]))
        popens.append(FakePopen(cmd, **kwargs))
        return popens[-1]

    def process(pid):
        return FakeProcess(pid, log, children)

    platform = win.WindowsPlatform(popen=popen, os_kill=os_kill or (lambda pid, sig: log.append(("os.kill", pid, sig))),
                                   process=process, pywin32=lambda: None if win32 is None else (win32, win32))
    return platform, popens


def test_start_uses_a_new_process_group_and_a_kill_on_close_job_assigned_before_it_runs(tmp_path):
    win32, log = FakeWin32(), []
    platform, popens = _platform(win32, log)
    popen, group = platform.start(["C:\\venv\\Scripts\\python.exe", "train.py"], cwd="C:\\runs\\a b",
                                  env={"BRACKET_RUN_ID": "m"}, stdout=None)
    kwargs = popens[0].kwargs
    assert kwargs["creationflags"] == win.CREATE_NEW_PROCESS_GROUP | win.CREATE_SUSPENDED == 0x204
    assert "start_new_session" not in kwargs and "preexec_fn" not in kwargs
    assert kwargs["stdin"] is subprocess.DEVNULL and kwargs["stderr"] is subprocess.STDOUT
    assert kwargs["env"] == {"BRACKET_RUN_ID": "m"} and kwargs["cwd"] == "C:\\runs\\a b"
    # the job kills its processes when its handle closes (other limit flags kept)
    assert ("SetInformationJobObject", "JOB", 9, 0x2004) in win32.calls
    assert ("OpenProcess", win.PROCESS_SET_QUOTA | win.PROCESS_TERMINATE, False, 4242) in win32.calls
    assert ("AssignProcessToJobObject", "JOB", "PROC4242") in win32.calls
    assert ("CloseHandle", "PROC4242") in win32.calls
    # created suspended, put into the job, and only then resumed
    assert log == [("Popen", 0x204), ("assign", "PROC4242"), ("resume", 4242)]
    assert group.job is not None and group.pid == 4242
    group.close()
    assert win32.calls[-1] == ("CloseHandle", "JOB")


def test_without_pywin32_the_group_is_still_new_and_nothing_is_suspended():
    log: list = []
    platform, popens = _platform(None, log)
    _, group = platform.start(["python.exe"], cwd=".", env={}, stdout=None)
    assert popens[0].kwargs["creationflags"] == win.CREATE_NEW_PROCESS_GROUP
    assert group.job is None and not any(entry[0] == "resume" for entry in log)


def test_a_refused_job_still_starts_the_process():
    win32, log = FakeWin32(fail_assign=True), []
    platform, _ = _platform(win32, log)
    _, group = platform.start(["python.exe"], cwd=".", env={}, stdout=None)
    assert group.job is None, "run without the job"
    assert ("CloseHandle", "JOB") in win32.calls and log[-1] == ("resume", 4242)


def test_a_program_that_cannot_start_closes_its_job():
    win32 = FakeWin32()

    def popen(cmd, **kwargs):
        raise FileNotFoundError(2, "The system cannot find the file specified", cmd[0])

    platform = win.WindowsPlatform(popen=popen, pywin32=lambda: (win32, win32))
    with pytest.raises(OSError):
        platform.start(["missing.exe"], cwd=".", env={}, stdout=None)
    assert win32.calls[-1] == ("CloseHandle", "JOB")


def test_a_process_that_cannot_be_resumed_is_killed_and_reported_as_not_started():
    win32, log = FakeWin32(), []

    class Unresumable(FakeProcess):
        def resume(self) -> None:
            raise psutil.AccessDenied(4242)

    platform, popens = _platform(win32, log)
    platform.process = lambda pid: Unresumable(pid, log)
    with pytest.raises(OSError, match="could not resume"):
        platform.start(["python.exe"], cwd=".", env={}, stdout=None)
    assert popens[0].killed and win32.calls[-1] == ("CloseHandle", "JOB")


def test_graceful_stop_is_ctrl_break_to_the_group_and_never_a_hard_kill():
    win32, log = FakeWin32(), []
    descendant = FakeProcess(7, log)
    platform, popens = _platform(win32, log, children=[descendant])
    popen, group = platform.start(["python.exe"], cwd=".", env={}, stdout=None)
    group.stop_gracefully(popen, [descendant])
    assert log[-1] == ("os.kill", 4242, win.CTRL_BREAK_EVENT) and win.CTRL_BREAK_EVENT == 1
    assert ("kill", 7) not in log and "TerminateJobObject" not in win32.names()
    assert popens[0].killed is False


def test_graceful_stop_without_a_shared_console_is_left_to_the_hard_kill():
    def no_console(pid, sig):
        raise OSError(6, "The handle is invalid")

    platform, _ = _platform(FakeWin32(), [], os_kill=no_console)
    popen, group = platform.start(["python.exe"], cwd=".", env={}, stdout=None)
    group.stop_gracefully(popen, [])  # no exception


def test_hard_kill_terminates_the_job_and_the_psutil_tree():
    win32, log = FakeWin32(), []
    children = [FakeProcess(7, log), FakeProcess(8, log)]
    platform, popens = _platform(win32, log, children=children)
    popen, group = platform.start(["python.exe"], cwd=".", env={}, stdout=None)
    group.kill(popen)
    assert ("TerminateJobObject", "JOB", win.JOB_KILL_EXIT_CODE) in win32.calls
    assert {("kill", 7), ("kill", 8), ("kill", 4242)} <= set(log)
    assert popens[0].killed is True
    assert platform.group_members_of(4242) == [], "no process groups to find again on Windows"


def test_the_default_platform_follows_os_name(monkeypatch):
    monkeypatch.setattr(os, "name", "nt")
    assert isinstance(proc._platform(), win.WindowsPlatform)
    monkeypatch.setattr(os, "name", "posix")
    assert proc._platform().name == "posix"


def test_runner_with_the_windows_implementation_ends_tree_and_escapee(tmp_path, monkeypatch):
    """A real run, the Windows logic in charge: CTRL_BREAK first, then the job, psutil and the marker."""
    win32, sent = FakeWin32(), []

    def popen(cmd, **kwargs):  # Linux has no creationflags: record them, start a plain process
        sent.append(("creationflags", kwargs.pop("creationflags")))
        return subprocess.Popen(cmd, **kwargs)

    def os_kill(pid, sig):  # the trainer ignores CTRL_BREAK here, as a busy one might
        sent.append(("os.kill", pid, sig))

    monkeypatch.setattr(proc, "PLATFORM", win.WindowsPlatform(popen=popen, os_kill=os_kill,
                                                              pywin32=lambda: (win32, win32)))
    spec = fake_trainer_spec(tmp_path / "run", mode="escapee,grandchild,hang")
    runner = Runner(spec, tmp_path / "run.log", grace_s=1.0)
    runner.start()
    output = tmp_path / "run" / "output"
    escapee, grandchild = read_pid(output / "escapee.pid", 30), read_pid(output / "grandchild.pid", 30)
    try:
        runner.stop("stopped by the user")
        result = runner.wait()
        assert result.stopped and sent[0] == ("creationflags", 0x204)
        assert ("os.kill", runner.pid, win.CTRL_BREAK_EVENT) in sent
        assert ("TerminateJobObject", "JOB", 1) in win32.calls and win32.calls[-1] == ("CloseHandle", "JOB")
        assert dead(runner.pid) and dead(grandchild) and dead(escapee)
    finally:
        for pid in (escapee, grandchild):
            try:
                psutil.Process(pid).send_signal(signal.SIGKILL)
            except psutil.Error:
                pass
