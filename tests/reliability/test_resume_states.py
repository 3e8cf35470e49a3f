"""What a resume may start from, and what a killed attempt leaves (issue 44, items 3 and 7).

* ``promote`` SIGKILLed mid-run left its trainer training beside the next attempt, the row
  ``running`` for good, and the next ``promote`` resumed from the newest state folder by mtime —
  a half-written one — and failed. Every entry point that launches runs first recovers dead
  owners' runs (interrupted, their process group killed); a resume takes only a state the
  trainer's completeness rule accepts, else the one before, else step 0.
* ``promote`` again with the same ``--steps`` after a finished promotion launched a run the
  trainer must refuse (its state is at the end): now nothing is launched.
* A halving resume took any state folder: another session's state linked in, a
  ``train_state.json`` with ``current_step: 1e400``. A state must be the run's own
  (``bracket-run.json`` in its run folder, the real path inside it) with a step before the end.
* A run whose trainer exits 0 short of its length without pausing is ``failed``, not ``done``.
"""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import psutil
import pytest

from bracket.cli import main
from bracket.session import Session
from bracket.session.run_state import RUN_FILE
from tests.reliability.rel_helpers import bracket_process, cli_args, dead, kill_now, launches, read_pid, wait_for
from tests.session.test_paused_runs import _first_paused

pytestmark = pytest.mark.timeout(300)


def _search(fast_fields: dict[str, str], runs_dir: Path, name: str) -> Path:
    assert main(["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "1", "--steps", "4",
                 "--name", name, "--out", str(runs_dir), "--quiet"]) == 0
    return runs_dir / name


def _promoted(folder: Path) -> list[dict]:
    session = Session.open(folder, validate=False)
    try:
        return [r for r in session.store.runs(session.name, with_series=False) if r["stage"] == "promote"]
    finally:
        session.close()


@pytest.mark.slow
def test_promote_after_a_sigkill_kills_the_orphan_and_resumes_from_a_complete_state(fast_fields, runs_dir,
                                                                                       tmp_path, capsys):
    folder = _search(fast_fields, runs_dir, "promo")
    first = bracket_process(["promote", str(folder), "--steps", "40", "--save-every", "5"],
                            {"BRACKET_FAKE_MODE": "slow", "BRACKET_FAKE_STEP_SECONDS": "0.5"}, tmp_path / "first.log")
    orphan = None
    try:
        pid_file = wait_for(lambda: next(folder.glob("promote/*/output/trainer.pid"), None), 120, "the promote run")
        orphan = read_pid(pid_file)
        output = pid_file.parent
        wait_for(lambda: (output / "demo-step00000005-state" / "COMPLETE").is_file(), 120, "a saved state")
        first.send_signal(signal.SIGKILL)  # Bracket dies; its trainer goes on training
        first.wait(30)
        assert psutil.pid_exists(orphan) and not dead(orphan)
        # the newest state folder is half-written (a SIGKILL mid-save): not complete by the demo's rule
        broken = output / "demo-step00000035-state"
        broken.mkdir()
        (broken / "train_state.json").write_text(json.dumps({"current_epoch": 1, "current_step": 35}))
        capsys.readouterr()
        assert main(["promote", str(folder), "--steps", "40", "--save-every", "5"]) == 0, capsys.readouterr()
        assert dead(orphan)  # the earlier attempt's trainer was killed before this one started
    finally:
        kill_now(first.pid, *([orphan] if orphan else []))
    promoted = _promoted(folder)
    assert [(r["status"], r["launches"]) for r in promoted] == [("done", 2)], promoted
    resumed = json.loads((Path(promoted[0]["output_dir"]) / "fake_args.json").read_text())["args"]["resume"]
    assert resumed and Path(resumed).name != broken.name and (Path(resumed) / "COMPLETE").is_file(), resumed
    assert main(["status", str(folder)]) == 0
    assert "running" not in capsys.readouterr().out.splitlines()[0]


def test_promote_again_with_the_same_steps_launches_nothing(fast_fields, runs_dir, argv_log, capsys):
    folder = _search(fast_fields, runs_dir, "twice")
    assert main(["promote", str(folder), "--steps", "12", "--save-every", "4"]) == 0
    before = len(launches(argv_log))
    capsys.readouterr()
    assert main(["promote", str(folder), "--steps", "12", "--save-every", "4"]) == 0
    assert len(launches(argv_log)) == before  # no run the trainer would refuse (its state is at the end)
    assert [r["status"] for r in _promoted(folder)] == ["done"]
    assert ": done" in capsys.readouterr().out


def test_a_halving_resume_refuses_another_sessions_state_and_a_damaged_one(tmp_path, runs_dir):
    mine, run = _first_paused(tmp_path / "a", runs_dir, "mine")
    other, theirs = _first_paused(tmp_path / "b", runs_dir, "other")
    assert (Path(run["run_dir"]) / RUN_FILE).is_file()  # written before the first launch
    state = Path(run["output_dir"]) / "demo-step00000004-state"
    shutil.rmtree(state)
    state.symlink_to(Path(theirs["output_dir"]) / "demo-step00000004-state")  # another session's state linked in
    assert mine.pipeline.resume(run["id"], stop_at_step=8) == "failed"
    row = mine.store.get_run(run["id"])
    assert row["launches"] == 1 and "outside its run folder" in row["failure_reason"], row["failure_reason"]

    own = Path(theirs["output_dir"]) / "demo-step00000004-state" / "train_state.json"
    own.write_text('{"current_epoch": 1, "current_step": 1e400}')  # its own state, damaged
    assert other.pipeline.resume(theirs["id"], stop_at_step=8) == "failed"
    row = other.store.get_run(theirs["id"])
    assert row["launches"] == 1 and "not a whole number" in row["failure_reason"], row["failure_reason"]
    mine.close()
    other.close()


def test_a_run_that_ends_short_of_its_length_without_a_pause_is_failed(fast_fields, runs_dir, monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_MODE", "short")  # exits 0 at step 4 of 8
    assert main(["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "1", "--steps", "8",
                 "--name", "short", "--out", str(runs_dir), "--quiet"]) == 1
    session = Session.open(runs_dir / "short", validate=False)
    run = session.store.runs(session.name, with_series=False)[-1]
    session.close()
    assert run["status"] == "failed" and run["last_step"] == 4, run
    assert "step 4 of 8" in run["failure_reason"]
