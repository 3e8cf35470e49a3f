"""The session loop with the fake trainer: order, budget, failures, stop, resume after SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import optuna
import psutil
import pytest

from bracket.errors import BracketError, SessionBusyError
from bracket.session import SearchSettings, Session
from bracket.session.snapshot import phase_label
from tests.fakes.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


def _settings(**overrides) -> SearchSettings:
    values = dict(budget=4, steps=10, seeds=1, sample_prompts="a red circle --d 7\na blue square --d 8")
    values.update(overrides)
    return SearchSettings(**values)


def test_warm_start_order_then_tpe_and_budget_with_seeds(demo_fields, runs_dir):
    session = Session.create("demo-cpu", demo_fields, _settings(budget=17, seeds=2, confirm=0), out_dir=runs_dir)
    assert session.settings.plan() == "budget 17 = 8 configs × 2 seeds (1 run left over)"
    assert session.run() == "finished"
    snapshot = session.snapshot()
    runs = [r for r in snapshot.runs if r["kind"] != "setup"]
    assert len(runs) == 16 and snapshot.runs_spent == 16
    kinds = [r["kind"] for r in runs]
    assert kinds == ["baseline"] * 2 + ["curated"] * 6 + ["bracket"] * 4 + ["search"] * 4
    names = [r["config_name"] for r in runs[::2]]
    trainer = session.trainer
    assert names[:4] == ["baseline"] + [c.name for c in trainer.curated_configs()]
    # the bracket: the best warm-start config at a lower, then a higher learning rate
    configs = session.store.configs(session.name, stage="search")
    warm = [c for c in configs if c["kind"] in ("baseline", "curated")]
    lower, higher = (c["params"] for c in configs if c["kind"] == "bracket")
    # the warm-start config the bracket centred on (the best when the warm start was scored;
    # the loss judge's cross-run normalisation may reorder the warm start later)
    best = next(c for c in warm if {k: v for k, v in c["params"].items() if k != "learning_rate"}
                == {k: v for k, v in lower.items() if k != "learning_rate"})
    rate = best["params"]["learning_rate"]
    assert lower["learning_rate"] < rate < higher["learning_rate"] or higher["learning_rate"] == 3e-2
    assert lower["learning_rate"] == pytest.approx(rate / 10 ** 0.5, rel=0.01)
    for bracket in (lower, higher):
        assert {k: v for k, v in bracket.items() if k != "learning_rate"} == \
            {k: v for k, v in best["params"].items() if k != "learning_rate"}
    # what the Search tab shows as the phase while each config trains
    assert [phase_label(session, c) for c in configs] == [
        "baseline", "curated 1/3", "curated 2/3", "curated 3/3", "learning-rate bracket 1/2",
        "learning-rate bracket 2/2", "search 1/2", "search 2/2"]
    # every config is trained with the same two seeds, so the grids compare like with like
    assert {tuple(sorted(r["seed"] for r in runs if r["config_id"] == c)) for c in {r["config_id"] for r in runs}} \
        == {(42, 43)}
    assert all(r["status"] == "done" and r["score"] is not None for r in runs)
    # each run rendered the two prompts with their fixed seeds
    seeds = {(s["prompt_index"], s["seed"]) for s in runs[0]["samples"]}
    assert seeds == {(0, 7), (1, 8)}
    study = optuna.load_study(study_name=session.name, storage=session.store.url)
    assert len(study.trials) == 8 and all(t.state.name == "COMPLETE" for t in study.trials)
    assert [t.user_attrs["kind"] for t in study.trials] == ["baseline"] + ["curated"] * 3 + ["bracket"] * 2 \
        + ["search"] * 2
    session.close()


def test_a_budget_that_ends_inside_the_bracket_says_so_and_an_old_session_resumes_without_one(
        demo_fields, runs_dir):
    session = Session.create("demo-cpu", demo_fields, _settings(budget=5, steps=5), out_dir=runs_dir, name="short")
    assert session.run() == "finished"
    configs = session.store.configs("short", stage="search")
    assert [c["kind"] for c in configs] == ["baseline", "curated", "curated", "curated", "bracket"]
    assert phase_label(session, configs[-1]) == "learning-rate bracket 1/1"
    # a session stored before the bracket existed has no lr_bracket in its settings
    stored = {k: v for k, v in session.store.get_session("short")["settings"].items() if k != "lr_bracket"}
    session.store.update_session("short", settings=stored | {"budget": 7})
    folder = session.folder
    session.close()
    resumed = Session.open(folder)
    assert resumed.settings.lr_bracket is False and resumed.settings.warm_start is True
    assert resumed.run() == "finished"
    assert [c["kind"] for c in resumed.store.configs("short", stage="search")][5:] == ["search", "search"]
    resumed.close()


def test_failed_and_diverging_runs_are_recorded_and_spend_budget(demo_fields, runs_dir, tmp_path, monkeypatch):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(["ok", "exit1", "diverge,slow", "nan"]))
    monkeypatch.setenv("BRACKET_FAKE_PLAN", str(plan))
    monkeypatch.setenv("BRACKET_FAKE_STEP_SECONDS", "0.02")
    session = Session.create("demo-cpu", demo_fields, _settings(budget=4, steps=200), out_dir=runs_dir)
    assert session.run() == "finished"
    runs = {r["id"]: r for r in session.snapshot().runs}
    statuses = [runs[i]["status"] for i in sorted(runs)]
    assert statuses[:3] == ["done", "failed", "pruned"]
    # NaN is caught while the run goes (stopped early) or, if it ends first, at its end
    assert statuses[3] in ("pruned", "disqualified")
    assert runs[2]["failure_reason"] == "RuntimeError: fake trainer failure (exit1) (exit code 1)"
    assert "Traceback" in session.store.get_run(2)["log_tail"]
    assert runs[3]["failure_reason"].startswith("diverged")
    assert runs[3]["last_step"] < 150, "a diverging run is stopped early"
    snapshot = session.snapshot()
    assert snapshot.stopped_early >= 1
    run = runs[3]
    expected = run["duration_s"] * (200 - run["last_step"]) / run["last_step"]
    assert snapshot.time_saved_s >= expected * 0.99 > 0
    assert "nan" in runs[4]["failure_reason"].lower()
    assert runs[1]["score"] is not None and runs[3]["score"] == 1.0
    # the learning-rate bracket reads the diverged and NaN configs as diverged, no other
    history = session.scored_configs()
    assert [(h.state.name, h.diverged) for h in history] == [("COMPLETE", False), ("FAIL", False),
                                                              ("COMPLETE", True), ("COMPLETE", True)]
    session.close()


def test_stop_kills_the_current_run_and_resume_reruns_its_slot(demo_fields, runs_dir, monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_MODE", "slow")
    monkeypatch.setenv("BRACKET_FAKE_STEP_SECONDS", "0.1")
    session = Session.create("demo-cpu", demo_fields, _settings(budget=2, steps=30), out_dir=runs_dir)
    session.start()
    wait_until(lambda: (session.snapshot().current or {}).get("step"), 30, "the run's first step")
    pid = session.store.runs(session.name)[0]["pid"]
    assert pid and psutil.pid_exists(pid)
    session.stop(now=True)
    assert session.wait(15)
    assert session.snapshot().status == "stopped"
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert session.store.runs(session.name)[0]["status"] == "interrupted"
    folder = session.folder
    session.close()
    monkeypatch.setenv("BRACKET_FAKE_STEP_SECONDS", "0")
    resumed = Session.open(folder)
    assert resumed.run() == "finished"
    statuses = [r["status"] for r in resumed.store.runs(resumed.name)]
    assert statuses == ["interrupted", "done", "done"]
    resumed.close()


def test_second_process_on_the_same_session_is_refused(demo_fields, runs_dir, monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_MODE", "slow")
    monkeypatch.setenv("BRACKET_FAKE_STEP_SECONDS", "0.05")
    session = Session.create("demo-cpu", demo_fields, _settings(budget=1, steps=40), out_dir=runs_dir)
    session.start()
    other = Session.open(session.folder)
    with pytest.raises(SessionBusyError, match="already being run"):
        other.run()
    session.stop()
    session.wait(15)
    other.store.close()
    session.close()


def _wait_for(predicate, timeout=60.0):
    return wait_until(predicate, timeout)


@pytest.mark.slow
def test_resume_after_sigkill_mid_trial_keeps_finished_runs_and_kills_the_orphan(demo_fields, runs_dir, tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(["ok", "grandchild,hang"]))
    env = dict(os.environ, BRACKET_FAKE_PLAN=str(plan), BRACKET_RUNS_DIR=str(runs_dir))
    args = [sys.executable, "-m", "bracket", "run", "--preset", "demo-cpu", "--budget", "3", "--steps", "10",
            "--name", "killed", "--quiet", "--out", str(runs_dir)]
    for name, value in demo_fields.items():
        args += ["--set", f"{name}={value}"]
    log = open(tmp_path / "bracket.log", "wb")
    process = subprocess.Popen(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    folder = runs_dir / "killed"
    grandchild_file = _wait_for(lambda: next(folder.glob("trials/*/output/grandchild.pid"), None))
    trainer_file = grandchild_file.with_name("trainer.pid")
    grandchild = int(_wait_for(lambda: grandchild_file.read_text().strip()))
    trainer = int(trainer_file.read_text().strip())
    process.send_signal(signal.SIGKILL)
    process.wait(10)
    log.close()
    assert psutil.pid_exists(trainer) and psutil.pid_exists(grandchild), "orphans outlive a SIGKILLed Bracket"

    session = Session.open(folder)
    assert session.run() == "finished"
    assert not psutil.pid_exists(grandchild) or psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE
    assert not psutil.pid_exists(trainer) or psutil.Process(trainer).status() == psutil.STATUS_ZOMBIE
    runs = session.store.runs(session.name)
    assert [r["status"] for r in runs] == ["done", "interrupted", "done", "done"]
    assert runs[1]["config_id"] == runs[2]["config_id"], "the interrupted slot is run again with the same config"
    assert "killed" in runs[1]["failure_reason"]
    session.close()


def test_nothing_is_written_when_validation_fails(demo_fields, runs_dir):
    with pytest.raises(BracketError, match="budget must be at least 1"):
        Session.create("demo-cpu", demo_fields, _settings(budget=0), out_dir=runs_dir)
    with pytest.raises(BracketError, match="does not exist"):
        Session.create("demo-cpu", {**demo_fields, "dataset": "/nonexistent/data"}, _settings(), out_dir=runs_dir)
    with pytest.raises(BracketError, match="malformed"):
        Session.create("demo-cpu", demo_fields, _settings(), out_dir=runs_dir, storage_url="not a url")
    assert list(runs_dir.iterdir()) == []


def test_pause_takes_effect_between_seeds_and_unpause_goes_on(demo_fields, runs_dir, monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_MODE", "slow")
    monkeypatch.setenv("BRACKET_FAKE_STEP_SECONDS", "0.05")
    session = Session.create("demo-cpu", demo_fields, _settings(budget=4, steps=20, seeds=2), out_dir=runs_dir)
    held = threading.Event()  # the loop has reached the pause and waits in it
    real = session.control.wait_while_paused

    def waiting(on_pause=None) -> None:
        if session.control.pausing:
            held.set()
        real(on_pause)

    monkeypatch.setattr(session.control, "wait_while_paused", waiting)
    session.start()
    _wait_for(lambda: session.store.runs(session.name) and session.store.runs(session.name)[0]["status"] == "running",
              30)
    session.pause()
    assert held.wait(60), "the pause never took effect"
    assert [r["status"] for r in session.store.runs(session.name)] == ["done"], \
        "the pause takes effect after the run, before the next seed"
    assert session.running
    session.unpause()
    assert session.wait(60)
    assert [r["status"] for r in session.store.runs(session.name)] == ["done"] * 4
    session.close()
