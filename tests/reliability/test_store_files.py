"""Store files that are not where or what Bracket expects (issue 16, items 9, 10 and 11).

* **Read-only session** (9): a finished session on a read-only bind mount (root ignores
  ``chmod``; skipped where mounting is not allowed) — ``status``, ``report --out`` and ``export
  --out`` work and change nothing; ``report`` into the session folder, ``resume``, ``finals`` and
  ``promote`` refuse with one ``error:`` line. Without the mount, the same read-only open is
  checked with ``os.access`` patched.
* **Another program's SQLite file** (10): ``--storage sqlite:///their.db`` is refused with the
  reason, and the file is byte for byte unchanged (its journal mode is still ``delete``).
* **A relative SQLite URL** (11): ``--storage sqlite:///rel.db`` is stored as an absolute path, so
  ``status`` from another working directory opens the same store and creates no stray database.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from bracket.cli import main
from tests.reliability.rel_helpers import cli_args

pytestmark = pytest.mark.timeout(300)


def _finished(fields, runs_dir: Path, name: str = "done", *extra: str) -> Path:
    assert main(["run", "--preset", "demo-cpu", *cli_args(fields), "--budget", "2", "--steps", "3", "--name", name,
                 "--out", str(runs_dir), "--quiet", *extra]) == 0
    return runs_dir / name


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _one_line(err: str, *needles: str) -> None:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    assert all(n.lower() in lines[0].lower() for n in needles), err


@pytest.fixture
def read_only_copy(tmp_path):
    """Bind-mount a folder read-only (root only); yields a function folder -> read-only view."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a read-only bind mount needs root")
    mounts: list[Path] = []

    def mount(folder: Path) -> Path:
        view = tmp_path / f"ro-{len(mounts)}"
        view.mkdir()
        for args in (["mount", "--bind", str(folder), str(view)], ["mount", "-o", "remount,bind,ro", str(view)]):
            done = subprocess.run(args, capture_output=True, text=True)
            if done.returncode != 0:
                pytest.skip(f"cannot make a read-only bind mount here: {done.stderr.strip()}")
            mounts.append(view)
        return view

    yield mount
    for view in dict.fromkeys(reversed(mounts)):
        subprocess.run(["umount", "-l", str(view)], check=False)


def test_a_finished_session_on_a_read_only_mount_can_be_viewed(fast_fields, runs_dir, tmp_path, capsys,
                                                                read_only_copy):
    folder = _finished(fast_fields, runs_dir)
    before = _digest(folder)
    view = read_only_copy(runs_dir) / "done"
    with pytest.raises(OSError):
        (view / "probe").write_text("x")
    capsys.readouterr()
    assert main(["status", str(view)]) == 0
    assert "finished" in capsys.readouterr().out
    assert main(["report", str(view), "--out", str(tmp_path / "report")]) == 0
    assert (tmp_path / "report" / "report.md").is_file()
    assert main(["export", str(view), "--out", str(tmp_path / "export")]) == 0
    assert (tmp_path / "export" / "train.sh").is_file()
    capsys.readouterr()
    for command in (["report", str(view)], ["resume", str(view)], ["finals", str(view)],
                    ["promote", str(view), "--steps", "6"]):
        assert main(command) in (1, 2), command
        _one_line(capsys.readouterr().err, "read-only")
    assert _digest(folder) == before


def test_a_read_only_store_is_opened_without_writing(fast_fields, runs_dir, tmp_path, capsys, monkeypatch):
    """Without root: os.access says the session folder is read-only; status/report/export still work."""
    folder = _finished(fast_fields, runs_dir)
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: False if mode & os.W_OK and
                        str(Path(p).resolve()).startswith(str(folder.resolve())) else real(p, mode, *a, **k))
    for leftover in folder.glob("bracket.db-*"):
        leftover.unlink()
    before = _digest(folder)
    assert main(["status", str(folder)]) == 0
    assert main(["report", str(folder), "--out", str(tmp_path / "report")]) == 0
    assert main(["export", str(folder), "--out", str(tmp_path / "export")]) == 0
    capsys.readouterr()
    assert main(["resume", str(folder)]) == 2
    _one_line(capsys.readouterr().err, "can only be read", "read-only")
    assert _digest(folder) == before and not list(folder.glob("bracket.db-*"))


def test_another_programs_sqlite_file_is_refused_unchanged(fast_fields, runs_dir, tmp_path, capsys):
    theirs = tmp_path / "theirs.db"
    connection = sqlite3.connect(theirs)
    connection.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL)")
    connection.execute("INSERT INTO invoices (amount) VALUES (12.5)")
    connection.commit()
    connection.close()
    before = theirs.read_bytes()
    code = main(["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "2", "--steps", "3",
                 "--storage", f"sqlite:///{theirs}", "--out", str(runs_dir), "--quiet"])
    assert code == 2
    _one_line(capsys.readouterr().err, "another program's SQLite database", "invoices", "nothing was changed")
    assert theirs.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("theirs")) == ["theirs.db"]
    connection = sqlite3.connect(f"file:{theirs}?mode=ro", uri=True)
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    connection.close()
    assert list(runs_dir.iterdir()) == []


def test_a_relative_sqlite_url_is_stored_absolute(fast_fields, runs_dir, tmp_path, capsys, monkeypatch):
    first, second = tmp_path / "cwd1", tmp_path / "cwd2"
    first.mkdir()
    second.mkdir()
    monkeypatch.chdir(first)
    folder = _finished(fast_fields, runs_dir, "rel", "--storage", "sqlite:///rel.db")
    stored = json.loads((folder / "session.json").read_text())["storage"]
    assert stored == f"sqlite:///{first / 'rel.db'}", stored
    monkeypatch.chdir(second)
    capsys.readouterr()
    assert main(["status", str(folder)]) == 0
    assert "finished" in capsys.readouterr().out
    assert list(second.iterdir()) == [], "no stray database in another working directory"
    assert main(["status", str(folder), "--storage", "sqlite:///missing.db"]) == 2
    _one_line(capsys.readouterr().err, "does not exist")
    assert list(second.iterdir()) == []


@pytest.mark.parametrize("command", ["report", "resume"])
def test_a_store_another_program_keeps_locked_is_one_error_line(command, fast_fields, runs_dir, capsys,
                                                               monkeypatch):
    """A database browser or ``sqlite3`` shell holding a write on bracket.db past the busy timeout
    (a minute; shortened here): one line that says what to do, not Optuna's traceback. (``resume``
    of a finished session writes only with ``--more-runs``; without it, it says there is nothing to do.)"""
    folder = _finished(fast_fields, runs_dir, "done", "--budget", "2")
    capsys.readouterr()
    monkeypatch.setattr("bracket.session.store.database.SQLITE_BUSY_TIMEOUT_S", 0.5)
    holder = sqlite3.connect(folder / "bracket.db", isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        code = main([command, str(folder), "--quiet", "--more-runs", "1"] if command == "resume"
                    else [command, str(folder)])
    finally:
        holder.close()
    _one_line(capsys.readouterr().err, "locked", "Close whatever holds it")
    assert code == 1
    assert main(["status", str(folder)]) == 0  # the store is intact
