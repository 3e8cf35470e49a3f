"""Helpers of the reliability suite: fast fake inputs, process checks, a CLI runner.

The demo adapter checks that its trainer python imports torch, diffusers and accelerate
(seconds per check, each time a session is created). :func:`make_probe_python` writes a
``python`` that answers that probe at once and otherwise hands over to the fake python of
``tests/fakes`` (which logs every argv it gets to ``BRACKET_FAKE_PYTHON_LOG``), so a subprocess
Bracket needs no monkeypatch and the argv log holds real launches only.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import psutil

from tests.fakes import make_fake_python
from tests.fakes.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")

_PROBE_PYTHON = """#!/bin/sh
# the demo adapter's import probe ("python -c <code> torch diffusers accelerate"): nothing missing
if [ "$1" = "-c" ]; then
    echo ""
    exit 0
fi
exec {fake} "$@"
"""


def make_probe_python(directory: Path) -> Path:
    """A ``python`` that passes the import probe at once and otherwise runs the fake python."""
    directory = Path(directory)
    fake = make_fake_python(directory / "inner")
    path = directory / "python"
    path.write_text(_PROBE_PYTHON.format(fake=shlex.quote(str(fake))), encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def launches(log: Path) -> list[list[str]]:
    """Every argv the fake python was started with (the trainer launches)."""
    if not log.is_file():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]


def wait_for(predicate: Callable[[], T], timeout: float = 60.0, what: str = "condition") -> T:
    """``tests.fakes.waiting.wait_until``: the one wait for a condition."""
    return wait_until(predicate, timeout, what)


def dead(pid: int) -> bool:
    """Gone, or a zombie (this container's PID 1 does not reap orphans)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def read_pid(path: Path, timeout: float = 60.0) -> int:
    return int(wait_for(lambda: path.is_file() and path.read_text().strip(), timeout, f"pid file {path}"))


def cli_args(fields: dict[str, str], *extra: str) -> list[str]:
    args: list[str] = []
    for name, value in fields.items():
        args += ["--set", f"{name}={value}"]
    return [*args, *extra]


def python_process(args: list[str], env_extra: dict[str, str], log: Path) -> subprocess.Popen:
    """``python ARGS`` in the background from the project root, output to ``log`` (never a pipe)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", **env_extra)
    with open(log, "wb") as handle:
        return subprocess.Popen([sys.executable, *args], cwd=ROOT, env=env, stdout=handle,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def bracket_process(args: list[str], env_extra: dict[str, str], log: Path) -> subprocess.Popen:
    """``python -m bracket ARGS`` in the background, output to ``log``."""
    return python_process(["-m", "bracket", *args], env_extra, log)


def kill_now(*pids: int) -> None:
    """SIGKILL each of ``pids`` that still lives (a test's clean-up)."""
    for pid in pids:
        try:
            psutil.Process(pid).kill()
        except psutil.Error:
            pass


def kill_tree_now(process: subprocess.Popen | psutil.Process | Any) -> None:
    """Test cleanup: SIGKILL a process we started and everything below it."""
    try:
        root = psutil.Process(process.pid)
        for child in root.children(recursive=True):
            child.kill()
        root.kill()
    except psutil.Error:
        pass


def inline_error(result) -> str:
    """The ``⚠`` message a UI handler showed inline (``ui.common.inline_errors``); fails if none.

    Handlers no longer raise ``gr.Error`` (its badge covered other components): a refused
    action returns its message in its own output and leaves the rest unchanged."""
    values = result if isinstance(result, tuple) else (result,)
    messages = [v[2:] for v in values if isinstance(v, str) and v.startswith("⚠ ")]
    assert messages, f"the handler showed no inline error: {result!r}"
    return messages[0]


class _NoLaunch:
    """What ``ui.blocks.build_app`` returns in :func:`app_manager`: an app that never serves."""

    def launch(self, **kwargs) -> None:
        pass

    def block_thread(self) -> None:
        pass


def app_manager(monkeypatch, *args: str):
    """The SessionManager exactly as ``python app.py ARGS`` builds it (launch stubbed)."""
    import app
    import ui.blocks

    seen = []
    monkeypatch.setattr(ui.blocks, "build_app", lambda manager: seen.append(manager) or _NoLaunch())
    monkeypatch.delenv("BRACKET_AUTH", raising=False)
    assert app.main(list(args)) == 0
    return seen[0]
