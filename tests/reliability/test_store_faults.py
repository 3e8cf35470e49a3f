"""A damaged store, a session file pointing nowhere, a run folder deleted mid-search, a full disk.

Every case must end with a message that says what to do (exit 2 from the CLI), never a
traceback, and — where the data is still there — a session that resumes to the end.
"""

from __future__ import annotations

import errno
import json
import shutil
from pathlib import Path

import pytest

from bracket.cli import main
from bracket.session import SearchSettings, Session
from bracket.session.process import Runner
from bracket.session.store import Store
from tests.reliability.rel_helpers import cli_args, wait_for

pytestmark = pytest.mark.timeout(240)


def _finished_session(fields: dict[str, str], runs_dir: Path, name: str = "damaged") -> Path:
    code = main(["run", "--preset", "demo-cpu", *cli_args(fields), "--budget", "2", "--steps", "4",
                 "--name", name, "--out", str(runs_dir), "--quiet"])
    assert code == 0
    return runs_dir / name


def _garble(path: Path, offset: int, length: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset:offset + length] = bytes((i * 37 + 11) % 256 for i in range(length))
    path.write_bytes(bytes(data))


DAMAGES = {
    "empty file": lambda db: db.write_bytes(b""),
    "truncated to half": lambda db: db.write_bytes(db.read_bytes()[: db.stat().st_size // 2]),
    "garbled header": lambda db: _garble(db, 0, 100),
    "garbled pages": lambda db: _garble(db, 4096, db.stat().st_size - 4096),
    "not a database": lambda db: db.write_text("hello, I am a text file\n" * 100),
    "deleted": lambda db: db.unlink(),
}


@pytest.mark.parametrize("damage", list(DAMAGES), ids=list(DAMAGES))
def test_a_damaged_store_gives_one_clear_line(capsys, fast_fields, runs_dir, damage):
    folder = _finished_session(fast_fields, runs_dir)
    capsys.readouterr()
    for extra in folder.glob("bracket.db-*"):  # WAL and shared-memory files of a closed store
        extra.unlink()
    DAMAGES[damage](folder / "bracket.db")
    for command in (["status", str(folder)], ["resume", str(folder), "--quiet"]):
        code = main(command)
        err = capsys.readouterr().err
        assert code == 2, (command, err)
        assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
        assert "store" in err and str(folder) in err or "bracket.db" in err, err


SESSION_FILES = {
    "not JSON": "{ this is not json",
    "empty": "",
    "a list": "[1, 2, 3]",
    "no name": json.dumps({"preset_id": "demo-cpu", "storage": "bracket.db"}),
    "store elsewhere": json.dumps({"name": "damaged", "preset_id": "demo-cpu", "storage": "missing/other.db"}),
    "other session name": json.dumps({"name": "someone-else", "preset_id": "demo-cpu", "storage": "bracket.db"}),
    "unknown storage URL": json.dumps({"name": "damaged", "preset_id": "demo-cpu", "storage": "nosuchdb://x/y"}),
}


@pytest.mark.parametrize("content", list(SESSION_FILES), ids=list(SESSION_FILES))
def test_a_broken_session_file_gives_one_clear_line(capsys, fast_fields, runs_dir, content):
    folder = _finished_session(fast_fields, runs_dir)
    capsys.readouterr()
    (folder / "session.json").write_text(SESSION_FILES[content], encoding="utf-8")
    for command in (["status", str(folder)], ["resume", str(folder), "--quiet"]):
        code = main(command)
        err = capsys.readouterr().err
        assert code == 2, (command, err)
        assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
        assert "session" in err.lower() or "store" in err.lower(), err


def test_run_folders_deleted_under_a_running_search(fast_fields, runs_dir, monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_MODE", "slow")
    monkeypatch.setenv("BRACKET_FAKE_STEP_SECONDS", "0.1")
    settings = SearchSettings(budget=2, steps=20, seeds=1, sample_prompts="a red circle --d 1",
                              sample_every_n_steps=5)
    session = Session.create("demo-cpu", fast_fields, settings, out_dir=runs_dir, name="deleted")
    session.start()
    wait_for(lambda: (session.snapshot().current or {}).get("step", 0) >= 3, 60, "a few steps")
    run_dir = Path(session.store.runs(session.name)[0]["run_dir"])
    shutil.rmtree(session.folder / "trials")
    run_dir.mkdir(parents=True)  # as a trainer that makes its output folders again would
    assert session.wait(90), "the search must not hang"
    snapshot = session.snapshot()
    assert snapshot.status in ("finished", "failed"), snapshot.status
    first = session.store.runs(session.name)[0]
    assert first["status"] != "running", "the run whose folder vanished is not left running"
    if first["status"] != "done":
        assert "run folder" in first["failure_reason"] and "deleted" in first["failure_reason"]
    folder = session.folder
    session.close()
    monkeypatch.setenv("BRACKET_FAKE_STEP_SECONDS", "0")
    resumed = Session.open(folder)
    assert resumed.run() == "finished", resumed.error
    assert resumed.snapshot().runs_spent == 2
    resumed.close()


def _disk_full(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_when_a_run_starts_stops_cleanly_and_resumes(capsys, fast_fields, runs_dir, monkeypatch):
    real_start = Runner.start
    calls = {"n": 0}

    def start(self):
        calls["n"] += 1
        if calls["n"] == 2:  # the second run's log file cannot be created
            _disk_full()
        return real_start(self)

    monkeypatch.setattr(Runner, "start", start)
    monkeypatch.setattr(Path, "write_text", _no_room_for_the_error_log(Path.write_text))
    code = main(["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "3", "--steps", "4",
                 "--name", "full", "--out", str(runs_dir), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "Traceback" not in out + err
    assert "No space left on device" in err and "free" in err.lower() and "resume" in err.lower(), err
    monkeypatch.undo()
    session = Session.open(runs_dir / "full")
    statuses = [r["status"] for r in session.store.runs(session.name)]
    assert statuses == ["done", "interrupted"], "a run that could not start is not left 'running'"
    assert session.store.get_session(session.name)["status"] == "failed"
    assert session.run() == "finished", session.error
    assert [r["status"] for r in session.store.runs(session.name)] == ["done", "interrupted", "done", "done"]
    session.close()


def _no_room_for_the_error_log(real):
    """Path.write_text that cannot write session-error.log (the disk is still full)."""

    def write_text(self, *args, **kwargs):
        if self.name == "session-error.log":
            _disk_full()
        return real(self, *args, **kwargs)

    return write_text


def test_a_full_disk_when_the_store_records_a_result(fast_fields, runs_dir, monkeypatch):
    real_update = Store.update_run

    def update_run(self, run_id, **values):
        if values.get("status") == "done" and run_id == 2:
            _disk_full()
        return real_update(self, run_id, **values)

    monkeypatch.setattr(Store, "update_run", update_run)
    settings = SearchSettings(budget=3, steps=4, seeds=1, sample_prompts="a red circle --d 1")
    session = Session.create("demo-cpu", fast_fields, settings, out_dir=runs_dir, name="full-store")
    assert session.run() == "failed"
    assert "No space left on device" in session.error and "resume" in session.error.lower()
    monkeypatch.undo()
    folder = session.folder
    session.close()
    # resumed in the same process (as the app does): the run whose result was lost runs again
    resumed = Session.open(folder)
    assert resumed.run() == "finished", resumed.error
    statuses = [r["status"] for r in resumed.store.runs(resumed.name)]
    assert statuses.count("done") == 3 and "running" not in statuses, statuses
    resumed.close()
