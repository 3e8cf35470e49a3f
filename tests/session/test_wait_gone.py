"""Waiting for a run's processes to end (``bracket.session.process.groups.wait_gone``): told by the
kernel where it can tell (a pidfd per process on Linux), a look every 20 ms where it cannot."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import psutil
import pytest

from bracket.session.process import groups

pytestmark = pytest.mark.timeout(60)
#: a child that ends when its stdin closes (the test decides when; nothing here is timed)
UNTIL_STDIN_CLOSES = [sys.executable, "-c", "import sys; sys.stdin.read()"]


def counted_looks(monkeypatch) -> list[int]:
    """Every look at whether a process is alive, counted."""
    looks: list[int] = []
    real = groups.alive
    monkeypatch.setattr(groups, "alive", lambda p: looks.append(p.pid) or real(p))
    return looks


def ends_later(seconds: float) -> subprocess.Popen:
    child = subprocess.Popen(UNTIL_STDIN_CLOSES, stdin=subprocess.PIPE)
    threading.Timer(seconds, child.stdin.close).start()
    return child


@pytest.mark.skipif(not hasattr(os, "pidfd_open") or groups.PLATFORM.name != "posix", reason="Linux pidfds")
def test_the_kernel_tells_when_a_process_ends_no_looks_in_between(monkeypatch):
    looks = counted_looks(monkeypatch)
    child = ends_later(1.0)
    try:
        assert groups.wait_gone([psutil.Process(child.pid)], timeout=30) == []
        assert looks == [child.pid, child.pid]  # once before the wait, once after the kernel said so
    finally:
        child.wait()


def test_where_the_platform_cannot_tell_it_looks_until_the_end(monkeypatch):
    looks = counted_looks(monkeypatch)
    monkeypatch.setattr(groups.PLATFORM, "wait_exits", lambda processes, timeout: None)
    child = ends_later(0.3)
    try:
        assert groups.wait_gone([psutil.Process(child.pid)], timeout=30) == []
        assert len(looks) > 2
    finally:
        child.wait()


def test_a_process_that_outlives_the_timeout_is_returned():
    child = subprocess.Popen(UNTIL_STDIN_CLOSES, stdin=subprocess.PIPE)
    try:
        process = psutil.Process(child.pid)
        assert groups.wait_gone([process], timeout=0.1) == [process]
    finally:
        child.stdin.close()
        child.wait()
