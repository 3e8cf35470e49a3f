"""Several `python -m bracket worker` processes sharing one search on a real PostgreSQL server.

Every worker is a real OS process running the demo-cpu preset against the fake trainer,
exactly as on a GPU machine; they cooperate only through the database. Runs share one runs
folder (the documented way to give the UI every worker's samples and logs).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import optuna
import psutil
import pytest
import sqlalchemy as sa

from bracket.session import SearchSettings, Session
from bracket.session.store import Store
from bracket.session.store.schema import RUN_SPENT
from tests.fakes import make_fake_python
from tests.fakes.waiting import wait_until

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]

_GPU_PYTHON = '''#!{python}
"""Records the CUDA_VISIBLE_DEVICES a training launch got, then runs the fake python."""
import os, sys
if any(arg.endswith("fake_trainer.py") for arg in sys.argv):  # not the preset's version probes
    with open({log!r}, "a", encoding="utf-8") as handle:
        handle.write(os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>") + "\\n")
os.execv({fake!r}, [{fake!r}] + sys.argv[1:])
'''


@pytest.fixture
def shared(postgres, demo_fields, tmp_path, monkeypatch, request):
    """A database for this test, a shared runs folder, and field values whose python logs the GPU."""
    monkeypatch.setenv("PGPASSWORD", postgres.password)
    url = postgres.create_database(request.node.name.replace("[", "_").replace("]", "").lower()[:60])
    gpu_log = tmp_path / "gpus.log"
    python = tmp_path / "gpu-python"
    fake = make_fake_python(tmp_path / "fakebin2")
    python.write_text(_GPU_PYTHON.format(python=sys.executable, log=str(gpu_log), fake=str(fake)), encoding="utf-8")
    python.chmod(0o755)
    runs = tmp_path / "shared-runs"
    runs.mkdir()
    return {"url": url, "runs": runs, "fields": {**demo_fields, "trainer_python": str(python)}, "gpu_log": gpu_log,
            "logs": tmp_path, "password": postgres.password}


def _create(shared: dict, name: str, *, budget: int, steps: int, confirm: int = 0) -> list[str]:
    settings = SearchSettings(budget=budget, steps=steps, seeds=1, sample_prompts="a red circle --d 7",
                              confirm=confirm)
    session = Session.create("demo-cpu", shared["fields"], settings, out_dir=shared["runs"], name=name,
                             storage_url=shared["url"])
    curated = [c.name for c in session.trainer.curated_configs()]
    session.close()
    return curated


def _worker(shared: dict, name: str, gpu: str, *, grace: float, step_seconds: float, mode: str = ""
            ) -> subprocess.Popen:
    env = {**os.environ, "PGPASSWORD": shared["password"], "BRACKET_FAKE_STEP_SECONDS": str(step_seconds),
           "BRACKET_FAKE_MODE": mode, "PYTHONPATH": str(ROOT)}
    env.pop("BRACKET_STORAGE_URL", None)
    log = open(shared["logs"] / f"worker-{name}-{gpu}-{time.time():.0f}.log", "w", encoding="utf-8")  # noqa: SIM115
    return subprocess.Popen(
        [sys.executable, "-m", "bracket", "worker", "--storage", shared["url"], "--session", name,
         "--runs-dir", str(shared["runs"]), "--gpu", gpu, "--grace", str(grace), "--quiet",
         "--allow-custom-executables"],  # the fake trainer is not this machine's configured script
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def _wait_for(predicate, timeout: float, what: str) -> None:
    wait_until(predicate, timeout, what)


def _finish(processes: list[subprocess.Popen], timeout: float = 120) -> list[int]:
    codes = []
    try:
        for process in processes:
            codes.append(process.wait(timeout=timeout))
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    return codes


def _search_runs(store: Store, name: str) -> list[dict]:
    return [r for r in store.runs(name, with_series=False) if r["stage"] == "search"]


def _logs(shared: dict) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(shared["logs"].glob("worker-*.log")))


def test_two_workers_share_a_budget_and_run_every_slot_once(shared):
    curated = _create(shared, "share", budget=8, steps=10)
    workers = [_worker(shared, "share", gpu, grace=10, step_seconds=0.1) for gpu in ("0", "1")]
    codes = _finish(workers)
    assert codes == [0, 0], _logs(shared)

    store = Store.open(shared["url"], create=False)
    runs, configs = _search_runs(store, "share"), store.configs("share", stage="search")
    assert len(configs) == 8 and len(runs) == 8
    assert all(r["status"] == "done" for r in runs)
    # every slot exactly once: one spent run per config, no trial twice, no config trained twice
    assert sorted(r["config_id"] for r in runs) == sorted(c["id"] for c in configs)
    assert len({c["trial_number"] for c in configs}) == 8
    assert len({tuple(sorted(c["params"].items())) for c in configs}) == 8
    kinds = [c["kind"] for c in configs]
    assert kinds.count("baseline") == 1 and kinds.count("curated") == len(curated)
    assert sorted(c["name"] for c in configs if c["kind"] == "curated") == sorted(curated)
    # the bracket waits for the whole warm start, then comes once per side (under the row lock)
    assert 1 <= kinds.count("bracket") <= 2
    # both workers trained, each with its own GPU, and the trainers got that GPU
    by_worker = {r["worker"] for r in runs}
    workers_rows = store.workers("share")
    assert len(by_worker) == 2 and by_worker <= {w["worker_id"] for w in workers_rows}
    assert sorted(w["gpu"] for w in workers_rows) == ["0", "1"]
    assert all(w["status"] == "stopped" for w in workers_rows)
    launches = shared["gpu_log"].read_text().split()
    assert len(launches) == 8 and sorted(set(launches)) == ["0", "1"]
    # artifacts are in the one shared runs folder, by absolute path
    assert all(Path(r["run_dir"]).is_dir() and Path(r["run_dir"]).parent.parent == shared["runs"] / "share"
               for r in runs)
    assert all(r["samples"] and Path(r["samples"][0]["path"]).is_file() for r in runs)
    assert store.get_session("share")["status"] == "finished"

    # the study opens with plain Optuna and holds every trial, none left waiting
    study = optuna.load_study(study_name="share", storage=shared["url"])
    assert len(study.trials) == 8 and all(t.state.name == "COMPLETE" for t in study.trials)

    # the password is nowhere: not in output, files, or the store's tables
    password = shared["password"]
    assert password not in _logs(shared)
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in shared["runs"].rglob("*")
             if p.is_file() and p.suffix in (".json", ".log", ".toml", ".txt")]
    assert texts and not any(password in t for t in texts)
    assert "PGPASSWORD" not in "".join(texts)
    with store.engine.connect() as c:
        for table in ("bracket_sessions", "bracket_configs", "bracket_runs", "bracket_workers"):
            assert password not in str(c.execute(sa.text(f"SELECT * FROM {table}")).fetchall())
    store.close()


def test_two_workers_share_the_confirmation_rung(shared):
    _create(shared, "rung", budget=9, steps=10, confirm=3)  # 6 configs, then 2 at 2 seeds, then the leader
    workers = [_worker(shared, "rung", gpu, grace=10, step_seconds=0.05) for gpu in ("0", "1")]
    assert _finish(workers) == [0, 0], _logs(shared)
    store = Store.open(shared["url"], create=False)
    runs = _search_runs(store, "rung")
    assert len(store.configs("rung", stage="search")) == 6 and len(runs) == 9
    assert all(r["status"] == "done" for r in runs)
    confirm = [r for r in runs if r["seed_index"] >= 1]
    assert len(confirm) == 3
    # no (config, seed) twice, fresh seeds only
    assert len({(r["config_id"], r["seed_index"]) for r in runs}) == 9
    assert all(r["seed"] != 42 for r in confirm)
    # the rung starts when the search is done, and rung 2 when rung 1 is done
    search_end = max(r["finished_at"] for r in runs if r["seed_index"] == 0)
    assert all(r["started_at"] >= search_end for r in confirm)
    first = [r for r in confirm if r["seed_index"] == 1]
    second = [r for r in confirm if r["seed_index"] == 2]
    assert len(second) <= 1 and all(r["started_at"] >= max(f["finished_at"] for f in first) for r in second)
    assert store.get_session("rung")["status"] == "finished"
    store.close()


def test_a_killed_worker_is_taken_over_after_the_grace_period(shared):
    grace = 3.0
    _create(shared, "kill", budget=3, steps=20)
    store = Store.open(shared["url"], create=False)
    first = _worker(shared, "kill", "0", grace=grace, step_seconds=0.25, mode="slow")
    second = None
    try:
        _wait_for(lambda: any(r["status"] == "running" and (r["last_step"] or 0) >= 2
                              for r in _search_runs(store, "kill")), 90, "the first worker's run to train")
        victim = next(r for r in _search_runs(store, "kill") if r["status"] == "running")
        first.send_signal(signal.SIGKILL)
        # the killed worker is made to look like one on another machine (its host rewritten before the
        # survivor starts), so the survivor cannot see its pid is gone and only the missing heartbeats tell it
        from bracket.session.store.schema import workers_table
        with store.engine.begin() as connection:
            connection.execute(workers_table.update().where(workers_table.c.worker_id == victim["worker"])
                               .values(host="another-machine"))
        second = _worker(shared, "kill", "1", grace=grace, step_seconds=0.25, mode="slow")
        assert second.wait(timeout=120) == 0, _logs(shared)
        with store.engine.begin() as connection:  # back on this machine, where `status` can see the pid is gone
            connection.execute(workers_table.update().where(workers_table.c.worker_id == victim["worker"])
                               .values(host=socket.gethostname()))
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.kill()
            if process is not None:
                process.wait()

    runs = {r["id"]: r for r in _search_runs(store, "kill")}
    killed = runs[victim["id"]]
    dead = next(w for w in store.workers("kill") if w["worker_id"] == victim["worker"])
    assert killed["status"] == "interrupted"
    assert killed["finished_at"] - dead["heartbeat_at"] >= grace - 0.5  # not before the grace period ended
    # the orphaned trainer was killed by the survivor
    assert not psutil.pid_exists(victim["pid"]) or psutil.Process(victim["pid"]).status() == psutil.STATUS_ZOMBIE
    # its slot was run again by the other worker; every config has exactly one spent run
    rerun = [r for r in runs.values() if r["config_id"] == victim["config_id"] and r["status"] in RUN_SPENT]
    assert len(rerun) == 1 and rerun[0]["worker"] != victim["worker"] and rerun[0]["status"] == "done"
    spent = [r for r in runs.values() if r["status"] in RUN_SPENT]
    configs = store.configs("kill", stage="search")
    assert len(spent) == 3 and sorted(r["config_id"] for r in spent) == sorted(c["id"] for c in configs)
    study = optuna.load_study(study_name="kill", storage=shared["url"])
    # 3 trials told; the 4th warm-start config (budget 3 < baseline + 3 curated) was never trained, and the
    # last worker closed it with a note when the search finished (the study tells the truth at the end)
    assert [t.state.name for t in study.trials] == ["COMPLETE"] * 3 + ["FAIL"]
    assert "budget ran out" in study.trials[3].user_attrs["bracket_note"]
    store.close()

    # `bracket status` shows which worker ran each trial and which workers are alive
    result = subprocess.run([sys.executable, "-m", "bracket", "status", str(shared["runs"] / "kill")],
                            cwd=ROOT, check=False, env={**os.environ, "PGPASSWORD": shared["password"]},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"worker {victim['worker']} gpu=0: gone" in result.stdout
    # each run: its row, then its indented lines (the worker comes first there when several trained)
    runs = re.split(r"\n(?=\s*\d+  \S)", result.stdout)
    assert any("interrupted" in run and f"worker {victim['worker']};" in run for run in runs)
    assert any(" done " in run and f"worker {rerun[0]['worker']};" in run for run in runs)
    assert shared["password"] not in result.stdout + result.stderr


def test_stop_after_trial_and_stop_now_reach_every_worker(shared):
    _create(shared, "stop", budget=8, steps=40)  # 10 s trials
    store = Store.open(shared["url"], create=False)

    def both_training() -> bool:
        active = [r for r in _search_runs(store, "stop") if r["status"] == "running" and r["pid"]]
        return len({r["worker"] for r in active}) == 2

    workers = [_worker(shared, "stop", gpu, grace=10, step_seconds=0.25, mode="slow") for gpu in ("0", "1")]
    try:
        _wait_for(both_training, 90, "both workers to train")
        store.update_session("stop", stop_requested="after-trial")  # what the app's Stop button writes
        _finish(workers, timeout=90)
    finally:
        _finish(workers, timeout=1)
    runs = _search_runs(store, "stop")
    assert runs and all(r["status"] == "done" for r in runs)  # the trials in progress were finished
    assert len(runs) < 8
    assert store.get_session("stop")["status"] == "stopped"

    # starting workers again resumes the search (nobody is carrying out the old stop any more)
    workers = [_worker(shared, "stop", gpu, grace=10, step_seconds=0.25, mode="slow") for gpu in ("0", "1")]
    try:
        _wait_for(both_training, 90, "both workers to train again")
        store.update_session("stop", stop_requested="now")
        started = time.time()
        _finish(workers, timeout=60)
        assert time.time() - started < 9  # before their 10 s trials could have ended
    finally:
        _finish(workers, timeout=1)
    runs = _search_runs(store, "stop")
    interrupted = [r for r in runs if r["status"] == "interrupted"]
    assert len({r["worker"] for r in interrupted}) == 2  # each worker's run was killed, not finished
    assert all(r["status"] in ("done", "interrupted") for r in runs)
    store.close()
