"""The test run fails when a test leaves a process behind (``tests/conftest.py``,
``pytest_sessionfinish``), and ends what was left, so no run leaves anything on the machine."""

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
    (folder / "conftest.py").write_text("from tests.conftest import pytest_sessionfinish  # noqa: F401\n")
    (folder / "test_inner.py").write_text(body)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(folder),
                           str(folder)], cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def test_a_run_that_leaves_a_process_fails_and_the_process_is_ended(tmp_path):
    leaked = _run(tmp_path / "leaks", LEAKS)
    pid = int((tmp_path / "leaks" / "pid").read_text())
    assert leaked.returncode == 1, leaked.stdout + leaked.stderr
    assert "the tests left these processes behind" in leaked.stderr and f"pid {pid}: sleep 120" in leaked.stderr
    try:
        assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE  # killed (this container's init reaps no orphan)
    except psutil.NoSuchProcess:
        pass
    clean = _run(tmp_path / "clean", CLEAN)
    assert clean.returncode == 0 and "left these processes" not in clean.stderr, clean.stdout + clean.stderr
