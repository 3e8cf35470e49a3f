"""A full disk: one ``error:`` line, no traceback, states fixed by the next command (issue 16, item 8).

Two ways to fill the disk:

* **a real full file system** — a 3 MB tmpfs mounted for the test (needs root and the right to
  mount; skipped otherwise, with the reason). ``python -m bracket run`` in a subprocess with
  the runs folder on it and ~0.9 MB left: the store (SQLite: "database or disk is full") and
  every file write fail part-way through the search. Then ``report``, ``export``, ``finals``
  and ``promote`` of a finished session on a disk with nothing left.
* **patched writes** (always runs): ``Path.write_text``/``write_bytes`` and ``open`` for
  writing raise ``OSError(ENOSPC)`` for ``report`` and ``export``.

Each command must print exactly one line, ``error: …`` saying the disk is full and what to do,
and exit 1 (a write failed) or 2 (refused before starting: the store could only be read).
``status`` must not claim a dead search is running, and once space is freed ``resume``
finishes the search with every run ``done``.
"""

from __future__ import annotations

import builtins
import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bracket.cli import main
from tests.reliability.rel_helpers import ROOT, cli_args

pytestmark = pytest.mark.timeout(300)


def _one_error_line(err: str) -> None:
    assert "Traceback" not in err, err
    # the dataset pre-flight's `warning:` lines come before the run starts; the failure is one line
    lines = [line for line in err.strip().splitlines() if line.strip() and not line.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "The disk is full" in lines[0], err
    assert "Free some space" in lines[0]


@pytest.fixture
def tiny_disk(tmp_path):
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path, leave: int) -> Path:
    stat = os.statvfs(disk)
    filler = disk / "filler"
    free = stat.f_bavail * stat.f_frsize
    with open(filler, "ab") as handle:
        handle.write(b"\0" * max(0, free - leave))
    return filler


def _bracket(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bracket", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=240)


@pytest.mark.slow
def test_a_real_full_disk_during_a_search_then_resume(tiny_disk, fast_fields):
    runs = tiny_disk / "runs"
    filler = _fill(tiny_disk, 900_000)
    result = _bracket("run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "4", "--steps", "6",
                      "--name", "full", "--out", str(runs), "--quiet")
    assert result.returncode == 1, result.stdout + result.stderr
    _one_error_line(result.stderr)
    status = _bracket("status", str(runs / "full"))
    assert status.returncode == 0, status.stderr
    assert ": running;" not in status.stdout.splitlines()[0], status.stdout
    filler.unlink()
    resumed = _bracket("resume", str(runs / "full"), "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    status = _bracket("status", str(runs / "full"))
    assert ": finished;" in status.stdout.splitlines()[0]
    # the run the full disk cut short (when it came during a run, not between two) is kept as
    # interrupted with its reason, and its config was trained again to the end
    from bracket.session.store import Store

    store = Store.open(f"sqlite:///{runs / 'full' / 'bracket.db'}", create=False)
    try:
        runs_now = store.runs("full", with_series=False)
    finally:
        store.close()
    assert not [r for r in runs_now if r["status"] == "running"], runs_now
    done = {r["config_id"] for r in runs_now if r["status"] == "done"}
    assert all(r["config_id"] in done for r in runs_now if r["status"] == "interrupted"), runs_now
    assert " running;" not in status.stdout and ": interrupted" not in status.stdout


@pytest.mark.slow
def test_report_export_finals_promote_on_a_real_full_disk(tiny_disk, fast_fields):
    runs = tiny_disk / "runs"
    result = _bracket("run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "2", "--steps", "4",
                      "--name", "done", "--out", str(runs), "--quiet")
    assert result.returncode == 0, result.stderr
    folder = str(runs / "done")
    filler = _fill(tiny_disk, 0)
    for command in (["report", folder], ["export", folder], ["finals", folder, "--top", "1", "--seeds", "1"],
                    ["promote", folder, "--steps", "8"]):
        done = _bracket(*command)
        # 1: a write failed; 2: refused up front (the store could only be opened for reading)
        assert done.returncode in (1, 2), (command, done.stdout, done.stderr)
        _one_error_line(done.stderr)
    filler.unlink()
    assert _bracket("report", folder).returncode == 0
    assert _bracket("export", folder).returncode == 0


def _disk_full(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_report_and_export_on_a_full_disk_print_one_line(fast_fields, runs_dir, capsys, monkeypatch):
    assert main(["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "2", "--steps", "3",
                 "--name", "done", "--out", str(runs_dir), "--quiet"]) == 0
    capsys.readouterr()
    real_open = builtins.open

    def open_(file, mode="r", *args, **kwargs):
        if any(flag in mode for flag in "wax+"):
            _disk_full()
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", _disk_full)
    monkeypatch.setattr(Path, "write_bytes", _disk_full)
    monkeypatch.setattr(builtins, "open", open_)
    for command in (["report", str(runs_dir / "done")], ["export", str(runs_dir / "done")]):
        assert main(command) == 1, command
        _one_error_line(capsys.readouterr().err)


def test_a_report_cut_by_a_full_disk_leaves_no_empty_or_half_file(fast_fields, runs_dir, capsys, monkeypatch):
    """Issue 44, item 8: ``report`` on a full disk left an empty report.md. The disk fills in the
    middle of each file (half of it written, then ENOSPC): no report file is left empty or cut —
    an earlier report stays whole, and none appears where there was none."""
    assert main(["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "2", "--steps", "3",
                 "--name", "done", "--out", str(runs_dir), "--quiet"]) == 0
    folder = runs_dir / "done"
    elsewhere = runs_dir / "fresh"
    assert main(["report", str(folder)]) == 0
    for earlier in folder.rglob("report.*"):  # an earlier report of other content (a rating since, another
        earlier.write_bytes(earlier.read_bytes() + b"\n")  # second): an unchanged one is rightly not rewritten
    before = {p: p.read_bytes() for p in folder.rglob("report.*")}
    assert before and all(before.values())
    capsys.readouterr()
    real_write_bytes = Path.write_bytes

    def half_then_full(self, data, *args, **kwargs):  # the disk fills while a report file is written
        data = data.encode("utf-8") if isinstance(data, str) else data
        if "report." not in self.name:
            return real_write_bytes(self, data)
        real_write_bytes(self, data[: len(data) // 2])
        _disk_full()

    monkeypatch.setattr(Path, "write_text", half_then_full)
    monkeypatch.setattr(Path, "write_bytes", half_then_full)
    for out in ([], ["--out", str(elsewhere)]):
        assert main(["report", str(folder), *out]) == 1
        _one_error_line(capsys.readouterr().err)
    monkeypatch.undo()
    assert {p: p.read_bytes() for p in folder.rglob("report.*")} == before  # the earlier report, whole
    assert not list(elsewhere.rglob("report.*")) if elsewhere.exists() else True
    leftovers = [p for p in (*folder.rglob("*"), *elsewhere.rglob("*")) if p.name.endswith(".tmp")]
    assert not leftovers, leftovers
