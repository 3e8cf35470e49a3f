"""Every process a run starts dies with the run: escapees, and orphans whose leader died.

Issue 16, items 3 and 4. The fake trainer's ``escapee`` mode leaves a grandchild that called
``setsid`` and double-forked (a new session and group, reparented away from the trainer),
``grandchild`` a plain child in the trainer's group. Stop, a timeout and a normal exit must
end both (:class:`~bracket.session.process.runner.Runner`), and so must recovery after Bracket died
— also when the trainer's leader died in the meantime and no process with the recorded pid
is left (:func:`~bracket.session.recovery.recover_interrupted_runs`).
"""

from __future__ import annotations

import os
import signal
import time

import psutil
import pytest

from bracket.session.process import Runner
from bracket.session.process import groups as proc
from bracket.session.recovery import recover_interrupted_runs
from bracket.session.store import Store, sqlite_url
from tests.fakes import fake_trainer_spec
from tests.reliability.rel_helpers import dead, kill_now, read_pid, wait_for

pytestmark = pytest.mark.timeout(120)


def _runner(tmp_path, mode: str, **kw) -> Runner:
    return Runner(fake_trainer_spec(tmp_path / "run", mode=mode), tmp_path / "run.log", grace_s=2.0, **kw)


def test_the_escapee_leaves_tree_session_and_group(tmp_path):
    """The fault is real: the escapee is in none of the places the tree/group kill looks."""
    runner = _runner(tmp_path, "escapee,hang")
    runner.start()
    try:
        escapee = read_pid(tmp_path / "run" / "output" / "escapee.pid", 30)
        wait_for(lambda: psutil.Process(escapee).ppid() != runner.pid, 60, "the double fork's middle process gone")
        assert escapee not in [c.pid for c in psutil.Process(runner.pid).children(recursive=True)]
        assert os.getpgid(escapee) != runner.pid and os.getsid(escapee) != runner.pid
        assert psutil.Process(escapee).environ()[proc.MARKER_ENV] == runner.marker
    finally:
        runner.stop()
        runner.wait()


@pytest.mark.parametrize("how", ["stop", "timeout", "exit"])
def test_stop_timeout_and_exit_end_the_escapee_and_the_grandchild(tmp_path, how):
    mode = {"stop": "escapee,grandchild,hang", "timeout": "escapee,grandchild,hang", "exit": "escapee,grandchild"}[how]
    runner = _runner(tmp_path, mode, timeout_s=4.0 if how == "timeout" else None)
    runner.start()
    output = tmp_path / "run" / "output"
    escapee, grandchild = read_pid(output / "escapee.pid", 30), read_pid(output / "grandchild.pid", 30)
    try:
        if how == "stop":
            runner.stop("stopped by the user")
        result = runner.wait()
        assert (result.stopped, result.timed_out) == {"stop": (True, False), "timeout": (True, True),
                                                      "exit": (False, False)}[how]
        assert dead(grandchild), "the grandchild in the trainer's group outlived the run"
        assert dead(escapee), "the setsid + double-fork escapee outlived the run"
        assert dead(runner.pid)
    finally:
        kill_now(escapee, grandchild)


def _running_row(store: Store, session: str) -> int:
    store.create_session(session, preset_id="demo-cpu", fields={}, settings={})
    return store.add_run(session, kind="search", status="running", worker="")


@pytest.mark.parametrize("leader", ["dead", "alive"])
def test_recovery_kills_the_runs_processes_even_when_its_leader_died(tmp_path, leader):
    """Bracket died mid-run; then (or not) the trainer's top process died too, leaving its children."""
    store = Store.open(sqlite_url(tmp_path / "bracket.db"))
    run_id = _running_row(store, "s")
    started_at = time.time()
    spec = fake_trainer_spec(tmp_path / "run", mode="escapee,grandchild,hang")
    with open(tmp_path / "run.log", "ab") as log:  # started as the executor starts it, then "Bracket dies"
        started = proc.start(spec.cmd, cwd=spec.cwd, env=spec.env, stdout=log,
                             marker=proc.run_marker("s", run_id, started_at))
    store.update_run(run_id, pid=started.pid, pid_create_time=started.create_time, started_at=started_at)
    output = tmp_path / "run" / "output"
    escapee, grandchild = read_pid(output / "escapee.pid", 30), read_pid(output / "grandchild.pid", 30)
    try:
        if leader == "dead":
            started.popen.send_signal(signal.SIGKILL)
            started.popen.wait(10)
            wait_for(lambda: psutil.Process(grandchild).ppid() != started.pid, 60, "the orphan reparented")
            assert not dead(grandchild) and not dead(escapee), "the leader's children outlive it"
        notes = recover_interrupted_runs(store, "s", self_worker="me")
        assert notes == [f"run {run_id} was interrupted and will be run again"]
        assert dead(grandchild), "the orphan in the dead leader's group was not killed"
        assert dead(escapee), "the escapee was not killed"
        assert dead(started.pid)
        run = store.get_run(run_id)
        assert run["status"] == "interrupted" and "leftover trainer processes were killed" in run["failure_reason"]
    finally:
        kill_now(escapee, grandchild, started.pid)
        started.popen.poll()
        store.close()


def test_a_marker_never_matches_another_run_or_an_unrelated_process(tmp_path):
    """Another run's processes (another marker) and processes without one are never touched."""
    spec = fake_trainer_spec(tmp_path / "other", mode="hang")
    with open(tmp_path / "other.log", "ab") as log:
        other = proc.start(spec.cmd, cwd=spec.cwd, env=spec.env, stdout=log, marker=proc.run_marker("s", 2, 1.5))
    try:
        read_pid(tmp_path / "other" / "output" / "trainer.pid", 30)
        record = proc.ProcessRecord(None, None, proc.run_marker("s", 1, 1.5))
        assert proc.find_leftovers(record) == []
        assert proc.kill_leftovers(record) is False
        assert other.popen.poll() is None
        assert [p.pid for p in proc.marked(other.marker)] == [other.pid]
    finally:
        other.kill_group()
        other.popen.wait(10)
        other.close()


@pytest.mark.slow
def test_resume_after_bracket_and_the_trainer_leader_died_kills_orphan_and_escapee(fast_fields, runs_dir, tmp_path):
    """End to end: ``bracket run`` SIGKILLed mid-run, then the trainer's top process killed too.

    Left behind: a grandchild in the dead leader's group and a setsid escapee, neither with a
    parent Bracket knows. ``resume`` (``Session.open(...).run()``) kills both and re-runs the slot.
    """
    from bracket.session import Session
    from tests.fakes import write_fake_plan
    from tests.reliability.rel_helpers import bracket_process, cli_args, kill_tree_now

    plan = write_fake_plan(tmp_path / "plan.json", ["escapee,grandchild,hang", "ok", "ok"])
    args = ["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "2", "--steps", "5",
            "--name", "orphans", "--out", str(runs_dir), "--quiet"]
    process = bracket_process(args, {"BRACKET_FAKE_PLAN": str(plan)}, tmp_path / "bracket.log")
    folder = runs_dir / "orphans"
    escapee = grandchild = trainer = 0
    try:
        escapee_file = wait_for(lambda: next(folder.glob("trials/*/output/escapee.pid"), None), 90, "the escapee")
        escapee, grandchild = read_pid(escapee_file), read_pid(escapee_file.with_name("grandchild.pid"))
        trainer = read_pid(escapee_file.with_name("trainer.pid"))
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        psutil.Process(trainer).send_signal(signal.SIGKILL)
        wait_for(lambda: dead(trainer), 60, "the trainer's leader gone")
        assert not dead(grandchild) and not dead(escapee), "both outlive Bracket and the leader"

        session = Session.open(folder)
        assert session.run() == "finished", session.error
        assert dead(grandchild), "the orphan of the dead leader survived resume"
        assert dead(escapee), "the escapee survived resume"
        runs = session.store.runs(session.name)
        assert [r["status"] for r in runs] == ["interrupted", "done", "done"]
        assert "leftover trainer processes were killed" in runs[0]["failure_reason"]
        session.close()
    finally:
        kill_tree_now(process)
        kill_now(escapee, grandchild, trainer)
