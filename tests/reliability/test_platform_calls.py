"""No module but ``bracket/session/process/groups.py`` and its platform parts calls a platform-specific
process API.

Issue 27: ``os.killpg``, ``os.getpgid``, ``signal.SIGKILL`` and ``start_new_session`` do not
exist (or do nothing) on Windows, and ``os.kill(pid, 0)`` — the POSIX "does it exist" probe —
*terminates* the process there. One module, :mod:`bracket.session.process.groups` (with
``_posix``, ``_windows`` and ``_cgroup`` beside it), holds the POSIX and the Windows
implementation; this test scans the syntax tree of ``bracket/``, ``ui/`` and
``app.py`` and fails on any such call, attribute, keyword or import anywhere else.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.reliability.rel_helpers import ROOT

#: the process-control modules (bracket/session/process/groups.py and its platform parts): the only
#: place allowed to use what follows
PROCESS = ROOT / "bracket" / "session" / "process"
ALLOWED = {PROCESS / name for name in ("groups.py", "_posix.py", "_windows.py", "_cgroup.py")}
#: module -> attributes that are process control tied to one platform
PLATFORM_ATTRIBUTES = {
    "os": {"kill", "killpg", "getpgid", "getpgrp", "setpgid", "setpgrp", "setsid", "getsid", "fork", "forkpty",
           "wait", "waitpid", "wait3", "wait4", "spawnv", "spawnve", "spawnvp", "spawnvpe", "tcsetpgrp"},
    "signal": {"SIGKILL", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGSTOP", "SIGCONT", "SIGCHLD", "SIGALRM",
               "SIGTSTP", "CTRL_BREAK_EVENT", "CTRL_C_EVENT", "pthread_kill", "killpg", "alarm", "setitimer",
               "pidfd_send_signal"},
    "subprocess": {"CREATE_NEW_PROCESS_GROUP", "CREATE_NEW_CONSOLE", "CREATE_NO_WINDOW", "DETACHED_PROCESS",
                   "CREATE_BREAKAWAY_FROM_JOB", "STARTUPINFO"},
}
#: Popen keywords that only mean something on one platform
PLATFORM_KEYWORDS = {"start_new_session", "preexec_fn", "process_group", "creationflags", "startupinfo"}
#: modules that are process control for one platform
PLATFORM_MODULES = {"win32job", "win32api", "win32process", "win32con", "prctl", "pywintypes"}


def platform_calls(source: str, filename: str = "<source>") -> list[str]:
    """Every platform-specific process call, keyword or import in ``source`` (line: what)."""
    problems = []
    tree = ast.parse(source, filename=filename)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.attr in PLATFORM_ATTRIBUTES.get(node.value.id, ()):
                problems.append(f"{line}: {node.value.id}.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            banned = PLATFORM_ATTRIBUTES.get(node.module, set())
            for alias in node.names:
                if alias.name in banned or node.module.split(".")[0] in PLATFORM_MODULES:
                    problems.append(f"{line}: from {node.module} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PLATFORM_MODULES:
                    problems.append(f"{line}: import {alias.name}")
        elif isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg in PLATFORM_KEYWORDS:
                    problems.append(f"{line}: {keyword.arg}=")
    return problems


def _sources() -> list[Path]:
    return sorted([*(ROOT / "bracket").rglob("*.py"), *(ROOT / "ui").rglob("*.py"), ROOT / "app.py"])


def test_the_scan_finds_each_kind_of_platform_call():
    """The scanner itself: each pattern it must catch, and a cross-platform call it must not."""
    snippet = """
import os, signal, subprocess
from os import killpg
import win32job
os.killpg(os.getpgid(pid), signal.SIGKILL)
os.kill(pid, 0)
subprocess.Popen(cmd, start_new_session=True)
subprocess.Popen(cmd, creationflags=subprocess.CREATE_NEW_PROCESS_GROUP)
signal.signal(signal.SIGTERM, handler)
psutil.Process(pid).kill()
"""
    found = platform_calls(snippet)
    for expected in ("from os import killpg", "import win32job", "os.killpg", "os.getpgid", "signal.SIGKILL",
                     "os.kill", "start_new_session=", "creationflags=", "subprocess.CREATE_NEW_PROCESS_GROUP"):
        assert any(item.endswith(expected) for item in found), (expected, found)
    assert not any("SIGTERM" in item or "signal.signal" in item for item in found)
    assert len(found) == 9


def test_no_platform_specific_process_call_outside_the_process_control_modules():
    problems = []
    sources = _sources()
    assert len(sources) > 30
    for path in sources:
        if path in ALLOWED:
            continue
        problems += [f"{path.relative_to(ROOT)}:{p}"
                     for p in platform_calls(path.read_text(encoding="utf-8"), str(path))]
    assert problems == [], "use bracket.session.process.groups instead"


def test_the_process_control_modules_have_both_implementations():
    names = {p.name for p in PROCESS.glob("*.py")}
    assert {"groups.py", "_posix.py", "_windows.py"} <= names
    assert platform_calls((PROCESS / "_posix.py").read_text(encoding="utf-8"))
    assert any("creationflags" in p for p in platform_calls((PROCESS / "_windows.py").read_text(encoding="utf-8")))
