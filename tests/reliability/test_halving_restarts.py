"""A successive-halving search on the default SQLite store, killed and restarted.

SQLite holds one search process per session: a ``bracket worker`` on it is refused and a second
``bracket resume`` too, while the first goes on. The process is SIGKILLed while it resumes a
paused run, or stopped while runs wait at a rung, and ``bracket resume`` finishes the search with
the guarantees of ``tests/distributed/halving_checks.py`` (each slot once, no rung trained twice,
the steps before a resume kept, the budget held, the winner a full-length run). The trainer is
``tests/session/pausing_trainer.py`` at 0.1 s a step; budget 3 full runs at eta 2 from a quarter
of 16 steps: 7 configs to step 4 → 3 to step 8 → 1 to 16.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bracket.session import Session
from bracket.session.store import Store, sqlite_url
from tests.distributed.halving_checks import ROOT, SETTINGS, check_halving_search, launches_by_output, status_text
from tests.reliability.rel_helpers import wait_for
from tests.session.test_halving_search import halving_fields

pytestmark = pytest.mark.slow


@pytest.fixture
def search(tmp_path, runs_dir, monkeypatch) -> dict:
    launch_log = tmp_path / "launches.jsonl"
    monkeypatch.setenv("BRACKET_FAKE_PAUSE_STEP_SECONDS", "0.1")
    monkeypatch.setenv("BRACKET_FAKE_PAUSE_LAUNCH_LOG", str(launch_log))
    Session.create("demo-cpu", halving_fields(tmp_path), SETTINGS, out_dir=runs_dir, name="halving").close()
    folder = runs_dir / "halving"
    return {"folder": folder, "launch_log": launch_log, "logs": tmp_path,
            "env": {**os.environ, "PYTHONPATH": str(ROOT)}}


def _bracket(search: dict, *args: str, tag: str) -> subprocess.Popen:
    log = open(search["logs"] / f"proc-{tag}.log", "w", encoding="utf-8")  # noqa: SIM115
    return subprocess.Popen([sys.executable, "-m", "bracket", *args], cwd=ROOT, env=search["env"], stdout=log,
                            stderr=subprocess.STDOUT)


def _log(search: dict, tag: str) -> str:
    return (search["logs"] / f"proc-{tag}.log").read_text(encoding="utf-8", errors="replace")


def _finished(search: dict, *, lost_allowed: bool) -> None:
    store = Store.open(sqlite_url(search["folder"] / "bracket.db"), create=False)
    try:
        winner = check_halving_search(store, "halving", SETTINGS, search["launch_log"], lost_allowed=lost_allowed)
        assert store.get_session("halving")["status"] == "finished"
    finally:
        store.close()
    assert f"full-length run {winner['id']}, 16 steps" in status_text(search["folder"])


def test_sigkill_while_a_paused_run_resumes_then_resume_finishes_the_search(search):
    first = _bracket(search, "resume", str(search["folder"]), "--quiet", tag="first")
    store = Store.open(sqlite_url(search["folder"] / "bracket.db"), create=False)
    try:
        wait_for(lambda: any(r["status"] == "running" for r in store.runs("halving", with_series=False)), 120,
                  "the first run")
        # one process per SQLite session: a worker and a second resume are refused
        worker = subprocess.run([sys.executable, "-m", "bracket", "worker", "--storage", store.url, "--session",
                                 "halving"], cwd=ROOT, env=search["env"], capture_output=True, text=True,
                                timeout=120, check=False)
        assert worker.returncode == 2 and worker.stderr.startswith("error: Workers need a PostgreSQL store")
        second = subprocess.run([sys.executable, "-m", "bracket", "resume", str(search["folder"]), "--quiet"],
                                cwd=ROOT, env=search["env"], capture_output=True, text=True, timeout=120,
                                check=False)
        assert second.returncode == 2 and "already being run by another Bracket process" in second.stderr

        def resuming() -> dict | None:  # a paused run whose trainer is resuming it now
            launches = launches_by_output(search["launch_log"]) if search["launch_log"].is_file() else {}
            for run in store.runs("halving", with_series=False):
                seen = launches.get(str(Path(run["output_dir"] or "-").resolve()), [])
                if run["status"] == "running" and run["pause_step"] and seen and seen[-1]["end"] is None \
                        and seen[-1]["from"] == run["pause_step"]:
                    return run
            return None

        victim = wait_for(resuming, 120, "a resumed run in flight")
        first.send_signal(signal.SIGKILL)
        first.wait()
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    store.close()
    again = _bracket(search, "resume", str(search["folder"]), "--quiet", tag="again")
    assert again.wait(timeout=240) == 0, _log(search, "again")
    assert "was cut short while resuming and stays paused at step" in _log(search, "again")
    _finished(search, lost_allowed=True)
    store = Store.open(sqlite_url(search["folder"] / "bracket.db"), create=False)
    run = store.get_run(victim["id"])  # its steps before the resume kept through the kill
    assert [step for step, _ in run["loss"]][:victim["pause_step"]] == list(range(1, victim["pause_step"] + 1))
    store.close()


def test_a_search_stopped_with_every_config_at_a_rung_resumes_and_promotes(search):
    session = Session.open(search["folder"])
    session.start()
    try:
        wait_for(lambda: len(session.store.configs("halving", stage="search")) == SETTINGS.n_configs, 180,
                  "the last config to start")
        session.stop(now=False)  # after the trial: every config tried, the promotions still to come
        assert session.wait(60)
    finally:
        session.close()
    store = Store.open(sqlite_url(search["folder"] / "bracket.db"), create=False)
    runs = [r for r in store.runs("halving", with_series=False) if r["stage"] == "search"]
    assert store.get_session("halving")["status"] == "stopped"
    assert any(r["status"] == "paused" for r in runs) and not any(r["status"] == "running" for r in runs)
    opened = Session.open(search["folder"])
    assert opened.spent_runs() == opened.total_runs() and not opened.budget_spent()  # promotions to come
    opened.close()
    store.close()
    again = _bracket(search, "resume", str(search["folder"]), "--quiet", tag="again")
    assert again.wait(timeout=240) == 0, _log(search, "again")
    _finished(search, lost_allowed=False)
