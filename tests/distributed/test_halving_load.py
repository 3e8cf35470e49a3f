"""Load test: three workers on one PostgreSQL store share a successive-halving search while a
seeded random choice SIGKILLs one of them, again and again; each killed worker is restarted.

The kills are triggered by what the store says, never by the clock: ``random.Random(seed)``
picks the progress points (rungs passed by the runs' recorded last steps, read from the store) at
which a worker is killed — just as a run reaches a rung, around its pause being recorded — and
which worker (one whose run trains now, when there is one). The trainer is
``tests/session/pausing_trainer.py`` (0.05 s a step; budget 3 full runs, 7 configs to step 4 → 3
to step 8 → 1 to 16, ``halving_checks.SETTINGS``). When the last worker exits the search must be
finished with: every config ``done`` or ``stopped`` (none ``running``), no run ``running``; per
config one live run per seed and never two trainers of one run at once (watched while it runs),
no rung of a run trained twice; the Optuna trial numbers unique; the budget kept as the
session's own ``Budget`` counts it; ``halving_checks.check_halving_search`` holds; every worker
exits 0; and the answer is a full-length run, or — only where the kills spent the budget so that
no config could go one rung further (``halving_checks.ended_short``) — the best config at its
highest rung with the ``promote --run`` that finishes it (``Standings.budget_short``).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest

from bracket.session import Session
from bracket.session.store import Store
from bracket.standings import standings
from tests.distributed.halving_checks import (
    ROOT,
    SETTINGS,
    check_halving_search,
    launches_by_output,
    unpaid_stops,
)
from tests.session.test_halving_search import halving_fields

pytestmark = pytest.mark.slow
#: eight kill schedules with BRACKET_TEST_LOAD=1 (each run ~60-120 s on a loaded 2-core machine); two
#: by default, so the suite's slow run keeps the guarantee in sight within a few minutes
SEEDS = list(range(44, 52)) if os.environ.get("BRACKET_TEST_LOAD") else [44, 47]
WORKERS = ("0", "1", "2")
KILLS = 5
#: the rungs (steps) of SETTINGS; the search passes 7 + 3 + 1 = 11 of them in all, counted from the
#: store as each run's last step passes a rung: every kill point lies below that, so each is reached
RUNGS = (4, 8, 16)
PASSED_IN_ALL = 11
#: a hang guard only (a run takes ~15-30 s on an idle 2-core machine, up to 2 min on a loaded one)
DEADLINE_S = 300.0


@pytest.fixture
def search(postgres, tmp_path, monkeypatch, request):
    monkeypatch.setenv("PGPASSWORD", postgres.password)
    url = postgres.create_database(f"load_{request.node.callspec.params['seed']}")
    runs = tmp_path / "shared-runs"
    runs.mkdir()
    Session.create("demo-cpu", halving_fields(tmp_path), SETTINGS, out_dir=runs, name="load", storage_url=url).close()
    launch_log = tmp_path / "launches.jsonl"
    env = {**os.environ, "PGPASSWORD": postgres.password, "PYTHONPATH": str(ROOT),
           "BRACKET_FAKE_PAUSE_STEP_SECONDS": "0.05", "BRACKET_FAKE_PAUSE_LAUNCH_LOG": str(launch_log)}
    env.pop("BRACKET_STORAGE_URL", None)
    return {"url": url, "runs": runs, "name": "load", "folder": runs / "load", "env": env, "logs": tmp_path,
            "launch_log": launch_log}


def _worker(search: dict, gpu: str) -> subprocess.Popen:
    log = open(search["logs"] / f"worker{gpu}-{time.monotonic_ns()}.log", "w", encoding="utf-8")  # noqa: SIM115
    with log:
        return subprocess.Popen(
            [sys.executable, "-m", "bracket", "worker", "--storage", search["url"], "--session", search["name"],
             "--runs-dir", str(search["runs"]), "--gpu", gpu, "--grace", "10", "--quiet",
             "--allow-custom-executables"],  # the fake trainer is not this machine's configured script
            cwd=ROOT, env=search["env"], stdout=log, stderr=subprocess.STDOUT)


def _trainers(launch_log: Path) -> list[psutil.Process]:
    """The live trainers of this test (their launch log in the environment), orphans included."""
    found = []
    for process in psutil.process_iter(["pid"]):
        try:
            if process.environ().get("BRACKET_FAKE_PAUSE_LAUNCH_LOG") == str(launch_log) \
                    and process.status() != psutil.STATUS_ZOMBIE and "pausing_trainer" in " ".join(process.cmdline()):
                found.append(process)
        except psutil.Error:  # gone, or another user's
            continue
    return found


def _output_of(process: psutil.Process) -> str | None:
    args = process.cmdline()
    return str(Path(args[args.index("--output_dir") + 1]).resolve()) if "--output_dir" in args[:-1] else None


def _live_launches(launch_log: Path) -> dict[str, list[int]]:
    """Output folder -> the pids of the live trainers training it now (a launch's pid and its own
    ``--output_dir`` both, so a reused pid is not mistaken for a killed launch's)."""
    if not launch_log.is_file():
        return {}
    alive = set()
    for process in _trainers(launch_log):
        try:
            alive.add((process.pid, _output_of(process)))
        except psutil.Error:
            continue
    by_output = {output: [launch["pid"] for launch in launches
                          if launch["end"] is None and (launch["pid"], output) in alive]
                 for output, launches in launches_by_output(launch_log).items()}
    return {output: pids for output, pids in by_output.items() if pids}


def _logs(search: dict) -> str:
    """Each worker's output (stdout and stderr, one file per start) and a session error's traceback."""
    logs = [*sorted(search["logs"].glob("worker*.log")), *search["folder"].glob("session-error.log")]
    return "\n".join(f"--- {p.name}\n{p.read_text(encoding='utf-8')[-3000:]}" for p in logs)


def _rows(store: Store, name: str) -> str:
    """The search's config and run rows, one line each: what a failed check is read against."""
    configs = [f"config {c['id']} {c['name']}: {c['status']} rung {c['rung']} {c['rung_state']} "
               f"worker {c['worker']}" for c in store.configs(name, stage="search")]
    runs = [f"run {r['id']} config {r['config_id']} seed {r['seed_index']}: {r['status']} last {r['last_step']} "
            f"pause {r['pause_step']} launches {r['launches']} restart {r['restart_steps']} worker {r['worker']}"
            for r in store.runs(name, with_series=False) if r["stage"] == "search"]
    return "\n".join(configs + runs)


def _end_all(workers: dict[str, subprocess.Popen], launch_log: Path) -> None:
    for process in workers.values():
        if process.poll() is None:
            process.kill()
        process.wait()
    orphans = _trainers(launch_log)
    for process in orphans:
        try:
            process.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(orphans, timeout=10)


@pytest.mark.parametrize("seed", SEEDS)
def test_workers_killed_at_random_finish_a_halving_search(search, seed):
    rng = random.Random(seed)
    kill_at = sorted(rng.sample(range(1, PASSED_IN_ALL), KILLS))  # rungs passed, read from the store
    store = Store.open(search["url"], create=False)
    workers = {gpu: _worker(search, gpu) for gpu in WORKERS}
    killed: list[tuple[int, str, int]] = []  # (rungs passed, gpu, pid)
    doubled: list[dict[str, list[int]]] = []
    watched: set[str] = set()  # run folders seen training
    try:
        deadline = time.monotonic() + DEADLINE_S
        while any(w.poll() is None for w in workers.values()):
            if time.monotonic() > deadline:
                pytest.fail(f"the search did not finish in {DEADLINE_S:g} s\n{_logs(search)}")
            runs = [r for r in store.runs(search["name"], with_series=False) if r["stage"] == "search"]
            training = _live_launches(search["launch_log"])
            watched.update(training)
            if (two := {output: pids for output, pids in training.items() if len(pids) > 1}):
                doubled.append(two)
            passed = sum(int(r["last_step"] or 0) >= rung for r in runs if r["status"] != "interrupted"
                         for rung in RUNGS)
            if kill_at and passed >= kill_at[0]:
                live = {w.pid: gpu for gpu, w in workers.items() if w.poll() is None}
                busy = sorted({live[pid] for r in runs if r["status"] == "running" and r["worker"]
                               and (pid := int(r["worker"].rsplit(":", 1)[1])) in live})
                gpu = rng.choice(busy or sorted(live.values()))
                victim = workers[gpu]
                victim.send_signal(signal.SIGKILL)
                victim.wait()
                killed.append((passed, gpu, victim.pid))
                kill_at.pop(0)
                workers[gpu] = _worker(search, gpu)  # the machine comes back
                continue
            time.sleep(0.1)
        codes = {gpu: w.returncode for gpu, w in workers.items()}
        if set(codes.values()) != {0}:
            pytest.fail(f"a worker failed: {codes}\n{_rows(store, search['name'])}\n{_logs(search)}")
    finally:
        _end_all(workers, search["launch_log"])
    assert len(killed) == KILLS, killed
    assert watched and not doubled, f"two trainers of one run at once: {doubled}"
    print("killed (rungs passed, gpu, pid):", killed)
    try:
        _check_finished(search, store)
    except AssertionError as error:
        pytest.fail(f"{error}\n{_rows(store, search['name'])}\n{_logs(search)}")
    finally:
        store.close()


def _check_finished(search: dict, store: Store) -> None:
    name = search["name"]
    assert store.get_session(name)["status"] == "finished"
    configs = store.configs(name, stage="search")
    runs = [r for r in store.runs(name) if r["stage"] == "search"]
    # every config done or stopped, no run left training
    assert all(c["status"] in ("done", "stopped") for c in configs), [(c["id"], c["status"]) for c in configs]
    assert not [r["label"] for r in runs if r["status"] == "running"]
    # nothing duplicated or lost: one live run per seed of each config (each rung of a run trained
    # once, its launches in sequence: check_halving_search below)
    live = Counter(r["config_id"] for r in runs if r["status"] != "interrupted")
    unpaid = unpaid_stops(configs, runs, SETTINGS)  # a killed seed the budget cannot train again: stopped, said why
    assert all(live[c["id"]] == SETTINGS.seeds or c["id"] in unpaid for c in configs), \
        (live, [c["id"] for c in configs])
    numbers = [c["trial_number"] for c in configs]
    assert len(set(numbers)) == len(numbers), numbers
    trials = [t.number for t in store.study(name).trials]
    assert len(set(trials)) == len(trials), trials
    # the project's own check of a finished halving search (killed launches allowed)
    winner = check_halving_search(store, name, SETTINGS, search["launch_log"], lost_allowed=True, short_allowed=True)
    # the budget, as the session itself counts it
    session = Session.open(search["folder"])
    try:
        budget = session.budget
        spent = budget.spent(session.counted())
        assert 0 < spent <= budget.total + 1e-9, budget.label(session.counted())
        assert budget.finished(session.counted())
        # the search's answer: its winner's full-length run, or (the kills spent the budget) the best
        # config at its highest rung and the command that finishes it
        table = standings(session)
        print("answer:", table.budget_short or f"winner's full-length run {winner['id']}")
        if winner is None:
            assert table.budget_short and "`python -m bracket promote PATH --run " in table.budget_short, table.warnings
        else:
            assert not table.budget_short
    finally:
        session.close()
