"""The test run fails when a test leaves a process behind (``tests/conftest.py``,
``pytest_sessionfinish``), names the test that started it (in the error and at the end of the
summary), and ends what was left, so no run leaves anything on the machine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]

LEAKS = '''
import subprocess, sys
from pathlib import Path

def test_leaves_a_sleeper(tmp_path):
    process = subprocess.Popen(["sleep", "120"])
    (Path(__file__).parent / "pid").write_text(str(process.pid))
'''
CLEAN = '''
import multiprocessing
import subprocess

def test_waits_for_its_child():
    subprocess.run(["sleep", "0.1"], check=True)

def test_a_spawned_child_starts_the_interpreters_resource_tracker():
    child = multiprocessing.get_context("spawn").Process(target=print)
    child.start()
    child.join()
    assert child.exitcode == 0
'''


def _run(folder: Path, body: str) -> subprocess.CompletedProcess:
    folder.mkdir()
    (folder / "conftest.py").write_text("from tests.conftest import (  # noqa: F401\n"
                                        "    pytest_runtest_protocol, pytest_sessionfinish, pytest_terminal_summary)\n")
    (folder / "test_inner.py").write_text(body)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(folder),
                           str(folder)], cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def test_a_run_that_leaves_a_process_fails_and_the_process_is_ended(tmp_path):
    leaked = _run(tmp_path / "leaks", LEAKS)
    pid = int((tmp_path / "leaks" / "pid").read_text())
    assert leaked.returncode == 1, leaked.stdout + leaked.stderr
    line = f"pid {pid}, started during test_inner.py::test_leaves_a_sleeper: sleep 120"
    assert "the tests left these processes behind" in leaked.stderr and line in leaked.stderr, leaked.stderr
    # and again at the end of the summary, where the reader of a failed run looks
    summary = leaked.stdout[leaked.stdout.index("processes left behind"):]
    assert "the tests left 1 process(es) behind" in summary and line in summary, leaked.stdout
    try:
        assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE  # killed (this container's init reaps no orphan)
    except psutil.NoSuchProcess:
        pass
    clean = _run(tmp_path / "clean", CLEAN)
    assert clean.returncode == 0 and "left these processes" not in clean.stderr, clean.stdout + clean.stderr
