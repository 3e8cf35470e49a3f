"""A process that clears its environment dies with its run, where cgroups allow (issue 35, item 12).

The fake trainer's ``bareescapee`` mode leaves a grandchild that called ``setsid``, double-forked
and then replaced itself by ``sleep 600`` with an empty environment: it is in neither the
trainer's tree, session nor group, and carries no run marker. Where Bracket may create a cgroup
v2 (``proc._cgroup.probe``), each run's cgroup holds it, and the run's end — Stop, a timeout,
the trainer's own exit, or recovery after Bracket died — kills it. Where Bracket may not, the
cgroup tests are skipped with the probe's reason, and the start-up notice says what may escape.
"""

from __future__ import annotations

import signal
import time

import psutil
import pytest

from bracket.session.process import Runner, _cgroup
from bracket.session.process import groups as proc
from bracket.session.recovery import recover_interrupted_runs
from bracket.session.store import Store, sqlite_url
from tests.fakes import fake_trainer_spec
from tests.reliability.rel_helpers import dead, kill_now, read_pid, wait_for

pytestmark = pytest.mark.timeout(120)
needs_cgroups = pytest.mark.skipif(bool(_cgroup.probe()), reason=f"no cgroup per run here: {_cgroup.probe()}")


def _run_cgroup(marker: str):
    own = _cgroup.own_cgroup()
    return None if own is None else own / f"{_cgroup.PREFIX}{marker}"


def _bare_escapee(output, runner_pid: int) -> int:
    escapee = read_pid(output / "escapee.pid", 30)
    wait_for(lambda: psutil.Process(escapee).name() == "sleep", 60, "the escapee became `sleep` (env -i)")
    assert proc.MARKER_ENV not in psutil.Process(escapee).environ(), "the escapee still carries the marker"
    assert escapee not in [c.pid for c in psutil.Process(runner_pid).children(recursive=True)]
    return escapee


@needs_cgroups
@pytest.mark.parametrize("how", ["stop", "timeout", "exit"])
def test_an_escapee_without_environment_dies_with_its_run(tmp_path, how):
    mode = "bareescapee" if how == "exit" else "bareescapee,hang"
    spec = fake_trainer_spec(tmp_path / "run", mode=mode, BRACKET_FAKE_STEP_SECONDS="0.3")
    runner = Runner(spec, tmp_path / "run.log", grace_s=2.0, timeout_s=5.0 if how == "timeout" else None)
    runner.start()
    escapee = 0
    try:
        escapee = _bare_escapee(tmp_path / "run" / "output", runner.pid)
        assert escapee not in [p.pid for p in proc.marked(runner.marker)], "the marker finds it (no fault)"
        held = escapee in _cgroup.pids_in(_run_cgroup(runner.marker))
        if how == "stop":
            runner.stop("stopped by the user")
        runner.wait()
        assert dead(escapee), "the escapee that cleared its environment outlived the run"
        assert held, "the escapee was not in the run's cgroup"
        assert not _run_cgroup(runner.marker).exists(), "the run's cgroup was left behind"
    finally:
        kill_now(escapee)


@needs_cgroups
def test_recovery_kills_an_escapee_without_environment_after_bracket_died(tmp_path):
    store = Store.open(sqlite_url(tmp_path / "bracket.db"))
    store.create_session("s", preset_id="demo-cpu", fields={}, settings={})
    run_id = store.add_run("s", kind="search", status="running", worker="")
    started_at = time.time()
    spec = fake_trainer_spec(tmp_path / "run", mode="bareescapee,hang")
    with open(tmp_path / "run.log", "ab") as log:  # started as the executor starts it, then "Bracket dies"
        started = proc.start(spec.cmd, cwd=spec.cwd, env=spec.env, stdout=log,
                             marker=proc.run_marker("s", run_id, started_at))
    store.update_run(run_id, pid=started.pid, pid_create_time=started.create_time, started_at=started_at)
    escapee = 0
    try:
        escapee = _bare_escapee(tmp_path / "run" / "output", started.pid)
        started.popen.send_signal(signal.SIGKILL)  # the leader dies too: only the cgroup knows the escapee
        started.popen.wait(10)
        assert not dead(escapee) and proc.find_leftovers(proc.ProcessRecord(
            started.pid, started.create_time, started.marker)) == []
        notes = recover_interrupted_runs(store, "s", self_worker="me")
        assert notes == [f"run {run_id} was interrupted and will be run again"]
        assert dead(escapee), "recovery left the escapee that cleared its environment"
        assert not _run_cgroup(started.marker).exists()
        assert "leftover trainer processes were killed" in store.get_run(run_id)["failure_reason"]
    finally:
        kill_now(escapee, started.pid)
        started.popen.poll()
        store.close()


def test_without_cgroups_runs_still_start_and_the_app_says_so_at_start_up(monkeypatch, tmp_path, capsys):
    """The fallback: process group and marker only, and one notice when the app starts."""
    import app
    import ui.blocks

    monkeypatch.setattr(_cgroup, "probe", lambda: "Bracket may not create a cgroup in /sys/fs/cgroup (test)")
    note = proc.containment_note()
    assert note.startswith("note: Bracket may not create a cgroup in /sys/fs/cgroup (test), so runs get no "
                           "cgroup of their own") and "may outlive its run" in note
    runner = Runner(fake_trainer_spec(tmp_path / "run", mode="ok"), tmp_path / "run.log", grace_s=2.0)
    result = runner.run()
    assert result.exit_code == 0 and _cgroup.RunCgroup.create(runner.marker) is None

    class _Launched:
        def launch(self, **kwargs):
            pass

        def block_thread(self):
            pass

    monkeypatch.setattr(ui.blocks, "build_app", lambda manager: _Launched())
    monkeypatch.delenv("BRACKET_AUTH", raising=False)
    assert app.main([]) == 0
    assert note in capsys.readouterr().err
    monkeypatch.setattr(_cgroup, "probe", lambda: "")
    assert proc.containment_note() == ""
