"""A successive-halving search trained by two processes on one PostgreSQL store, with restarts.

The session's own process (``python -m bracket resume``) and a ``python -m bracket worker``, or two
workers, each a real OS process, cooperate only through the database; the trainer pauses and
resumes as the demo's does (``tests/session/pausing_trainer.py``, 0.1 s a step). Budget 3 full
runs at eta 2 from a quarter of 16 steps: 7 configs to step 4 → 3 to step 8 → 1 to 16. The checks
(``halving_checks``): no slot trained twice, no paused run resumed by two workers at once, every
promoted run resumed in its own row with true steps, the budget held, the winner a full-length run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bracket.session import Session
from bracket.session.store import Store
from tests.distributed.halving_checks import ROOT, SETTINGS, check_halving_search, launches_by_output, status_text
from tests.reliability.rel_helpers import wait_for
from tests.session.test_halving_search import halving_fields

pytestmark = pytest.mark.slow


@pytest.fixture
def shared(postgres, tmp_path, monkeypatch, request):
    monkeypatch.setenv("PGPASSWORD", postgres.password)
    url = postgres.create_database(request.node.name.lower()[:60])
    runs = tmp_path / "shared-runs"
    runs.mkdir()
    name = "halving"
    Session.create("demo-cpu", halving_fields(tmp_path), SETTINGS, out_dir=runs, name=name, storage_url=url).close()
    env = {**os.environ, "PGPASSWORD": postgres.password, "PYTHONPATH": str(ROOT),
           "BRACKET_FAKE_PAUSE_STEP_SECONDS": "0.1", "BRACKET_FAKE_PAUSE_LAUNCH_LOG": str(tmp_path / "launches.jsonl")}
    env.pop("BRACKET_STORAGE_URL", None)
    return {"url": url, "runs": runs, "name": name, "folder": runs / name, "env": env, "logs": tmp_path,
            "launch_log": tmp_path / "launches.jsonl"}


def _start(shared: dict, *args: str, tag: str) -> subprocess.Popen:
    log = open(shared["logs"] / f"proc-{tag}-{time.time():.3f}.log", "w", encoding="utf-8")  # noqa: SIM115
    return subprocess.Popen([sys.executable, "-m", "bracket", *args], cwd=ROOT, env=shared["env"], stdout=log,
                            stderr=subprocess.STDOUT)


def _worker(shared: dict, gpu: str) -> subprocess.Popen:
    return _start(shared, "worker", "--storage", shared["url"], "--session", shared["name"], "--runs-dir",
                  str(shared["runs"]), "--gpu", gpu, "--grace", "10", "--quiet", "--allow-custom-executables",
                  tag=f"worker{gpu}")  # the fake trainer is not this machine's configured script


def _logs(shared: dict) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(shared["logs"].glob("proc-*.log")))


def _finish(processes: list[subprocess.Popen], timeout: float = 240) -> list[int]:
    try:
        return [process.wait(timeout=timeout) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()


def _finished_search(shared: dict, *, lost_allowed: bool = False) -> None:
    """The guarantees, the winner named by the standings and by ``status`` as its full-length run."""
    from bracket.standings import standings

    store = Store.open(shared["url"], create=False)
    try:
        winner = check_halving_search(store, shared["name"], SETTINGS, shared["launch_log"],
                                      lost_allowed=lost_allowed)
        assert store.get_session(shared["name"])["status"] == "finished"
    finally:
        store.close()
    session = Session.open(shared["folder"])
    try:
        table = standings(session)
        assert table.winner is not None and table.winner.run_id == winner["id"] and table.winner.full_length
    finally:
        session.close()
    assert f"full-length run {winner['id']}, 16 steps" in status_text(shared["folder"], shared["env"])


def test_the_session_and_a_worker_share_a_halving_search(shared):
    processes = [_start(shared, "resume", str(shared["folder"]), "--quiet", tag="session"), _worker(shared, "1")]
    assert _finish(processes) == [0, 0], _logs(shared)
    _finished_search(shared)
    store = Store.open(shared["url"], create=False)
    runs = [r for r in store.runs(shared["name"], with_series=False) if r["stage"] == "search"]
    assert len({r["worker"] for r in runs}) == 2  # both trained
    store.close()


def test_a_worker_killed_while_resuming_a_paused_run_is_taken_over(shared):
    store = Store.open(shared["url"], create=False)
    workers = [_worker(shared, "0"), _worker(shared, "1")]
    replacement = None
    try:
        def resuming() -> dict | None:  # a paused run whose trainer is resuming it now
            launches = launches_by_output(shared["launch_log"]) if shared["launch_log"].is_file() else {}
            for run in store.runs(shared["name"], with_series=False):
                seen = launches.get(str(Path(run["output_dir"] or "-").resolve()), [])
                if run["status"] == "running" and run["pause_step"] and seen and seen[-1]["end"] is None \
                        and seen[-1]["from"] == run["pause_step"]:
                    return run
            return None

        victim = wait_for(resuming, 180, "a resumed run in flight")
        pid = int(victim["worker"].rsplit(":", 1)[1])
        killed = next(w for w in workers if w.pid == pid)
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        replacement = _worker(shared, "2")  # the machine comes back: a new worker joins
        assert _finish([w for w in workers if w is not killed] + [replacement]) == [0, 0], _logs(shared)
    finally:
        _finish([*workers, *([replacement] if replacement else [])], timeout=1)
    again = store.get_run(victim["id"])
    # back at the state it resumed from, its steps before the resume kept (then resumed again, or
    # stopped there when others passed it at that rung meanwhile)
    assert [step for step, _ in again["loss"]][:victim["pause_step"]] == list(range(1, victim["pause_step"] + 1))
    assert again["launches"] == victim["launches"] or again["worker"] != victim["worker"]
    store.close()
    _finished_search(shared, lost_allowed=True)


def test_a_stopped_search_with_paused_runs_finishes_after_a_restart(shared):
    store = Store.open(shared["url"], create=False)
    workers = [_worker(shared, "0"), _worker(shared, "1")]
    try:
        wait_for(lambda: sum(r["status"] == "paused" for r in store.runs(shared["name"], with_series=False)) >= 2,
                  180, "two paused runs")
        store.update_session(shared["name"], stop_requested="now")  # the app's Stop now, for every worker
        _finish(workers, timeout=60)
    finally:
        _finish(workers, timeout=1)
    runs = [r for r in store.runs(shared["name"], with_series=False) if r["stage"] == "search"]
    assert store.get_session(shared["name"])["status"] == "stopped"
    assert any(r["status"] == "paused" for r in runs) and not any(r["status"] == "running" for r in runs)
    store.close()
    workers = [_start(shared, "resume", str(shared["folder"]), "--quiet", tag="session2"), _worker(shared, "1")]
    assert _finish(workers) == [0, 0], _logs(shared)
    _finished_search(shared, lost_allowed=True)
