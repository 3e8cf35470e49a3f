"""Fault injection into the trainer: every way a real trainer process misbehaves, end to end.

Each test runs a real session (in this process) whose trainer is the fake trainer of
``tests/fakes``, told how to misbehave through ``BRACKET_FAKE_PLAN`` (one mode per run), and
asserts what the session records and that no process of the run is left alive.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bracket.app.manager import SessionManager
from bracket.session import SearchSettings, Session
from tests.fakes import write_fake_plan
from tests.reliability.rel_helpers import dead, read_pid, wait_for

pytestmark = pytest.mark.timeout(240)
PROMPTS = "a red circle --d 7\na blue square --d 8"


def _settings(**overrides) -> SearchSettings:
    values = {"budget": 1, "steps": 10, "seeds": 1, "sample_prompts": PROMPTS}
    values.update(overrides)
    return SearchSettings(**values)


def _plan(tmp_path: Path, monkeypatch, runs: list[str]) -> Path:
    plan = write_fake_plan(tmp_path / "plan.json", runs)
    monkeypatch.setenv("BRACKET_FAKE_PLAN", str(plan))
    return plan


def _output(run: dict) -> Path:
    return Path(run["run_dir"]) / "output"


def test_crashing_and_silent_trainers_are_recorded_and_the_search_goes_on(fast_fields, runs_dir, tmp_path,
                                                                          monkeypatch):
    _plan(tmp_path, monkeypatch, ["exit1", "segv", "noevents", "nan", "nosamples", "ok"])
    session = Session.create("demo-cpu", fast_fields, _settings(budget=6), out_dir=runs_dir, name="faults")
    assert session.run() == "finished", session.error
    runs = session.store.runs(session.name)
    assert [r["status"] for r in runs][:3] == ["failed", "failed", "disqualified"]
    exit1, segv, noevents, nan, nosamples, ok = runs
    assert (exit1["failure_reason"] == "RuntimeError: fake trainer failure (exit1) (exit code 1)"
            and "RuntimeError: fake trainer failure" in exit1["log_tail"])
    assert segv["failure_reason"] == "killed by signal SIGSEGV" and segv["exit_code"] == -11
    assert "no loss" in noevents["failure_reason"] and noevents["loss"] == []
    assert nan["status"] in ("pruned", "disqualified") and "nan" in nan["failure_reason"].lower()
    # a run without samples still counts (loss judge) and the Compare grid shows it with empty cells
    assert nosamples["status"] == "done" and nosamples["samples"] == [] and nosamples["loss"]
    assert ok["status"] == "done" and len(ok["samples"]) >= 2
    assert all(dead(read_pid(_output(run) / "trainer.pid", 1)) for run in runs)
    assert session.snapshot().runs_spent == 6, "failed, pruned and disqualified runs spend budget"
    manager = SessionManager(runs_dir, allow_custom_executables=True)
    manager.open(session.folder)
    grid = manager.compare.grid([nosamples["id"], ok["id"]])
    assert grid is not None
    manager.close()
    session.close()


@pytest.mark.parametrize(("mode", "started"), [("hang", ("output/trainer.pid", "")),
                                               ("hang_printing", ("logs/stdout.log", "still working"))])
def test_hanging_trainers_time_out_with_or_without_output(mode, started, fast_fields, runs_dir, tmp_path, monkeypatch):
    """The runner's clock starts once the trainer has started (and, printing, printed): a loaded machine
    that takes seconds to start it cannot turn the test's 3 s into a kill before it did anything (a
    normal run beside it in the same session timed out that way)."""
    from bracket.session.process import runner

    _plan(tmp_path, monkeypatch, [mode])
    session = Session.create("demo-cpu", fast_fields, _settings(budget=1, timeout_s=3), out_dir=runs_dir)
    monkeypatch.setattr(runner, "time", StartedClock(session.folder, *started))
    started_at = time.monotonic()
    assert session.run() == "finished", session.error
    assert time.monotonic() - started_at < 240
    (run,) = session.store.runs(session.name)
    assert run["status"] == "failed" and run["failure_reason"] == "timed out after 3 s"
    assert 2.5 < run["duration_s"] < 3 + 5 + 3, "stopped at the timeout, SIGKILL after the grace time at worst"
    assert dead(read_pid(_output(run) / "trainer.pid", 1))
    if mode == "hang_printing":
        assert "still working" in run["log_tail"] and len(run["log_tail"].splitlines()) <= 40
    session.close()


def test_fifty_megabytes_of_progress_bars_neither_block_nor_bloat_the_store(fast_fields, runs_dir, tmp_path,
                                                                         monkeypatch):
    _plan(tmp_path, monkeypatch, ["spam"])
    monkeypatch.setenv("BRACKET_FAKE_SPAM_MB", "50")
    session = Session.create("demo-cpu", fast_fields, _settings(budget=1), out_dir=runs_dir)
    started = time.monotonic()
    assert session.run() == "finished", session.error
    assert time.monotonic() - started < 120
    run = session.store.runs(session.name)[0]
    assert run["status"] == "done"
    log = Path(run["run_dir"]) / "logs" / "stdout.log"
    assert log.stat().st_size >= 50 * 1024 * 1024, "the whole output went to the log file"
    assert len(run["log_tail"]) < 8_000, "the stored tail is the last lines, \\r updates collapsed"
    assert "fake trainer: done" in run["log_tail"]
    assert (session.folder / "bracket.db").stat().st_size < 2 * 1024 * 1024
    session.close()


def test_stop_kills_a_grandchild_that_would_outlive_the_trainer(fast_fields, runs_dir, tmp_path, monkeypatch):
    _plan(tmp_path, monkeypatch, ["grandchild,hang"])
    session = Session.create("demo-cpu", fast_fields, _settings(budget=1), out_dir=runs_dir)
    session.start()
    pid_file = wait_for(lambda: next(session.folder.glob("trials/*/output/grandchild.pid"), None), 60, "grandchild")
    grandchild, trainer = read_pid(pid_file), read_pid(pid_file.with_name("trainer.pid"))
    assert not dead(grandchild) and not dead(trainer)
    session.stop(now=True)
    assert session.wait(20)
    assert dead(trainer) and dead(grandchild)
    assert session.store.runs(session.name)[0]["status"] == "interrupted"
    session.close()


class StartedClock:
    """The trainer runner's clock in a timeout test: it stands still until the run's trainer has
    done what the test needs before the timeout (a file ``trials/*/<path>`` exists, holding ``text``),
    then runs from 0. The timeout then always falls after that, however slowly a loaded machine
    starts the trainer (with the real clock a 3 s timeout could kill it before it did anything)."""

    def __init__(self, folder: Path, path: str, text: str = "") -> None:
        self.folder, self.path, self.text = folder, path, text
        self.began: float | None = None

    def _ready(self) -> bool:
        for found in self.folder.glob(f"trials/*/{self.path}"):
            try:
                if self.text in found.read_text(encoding="utf-8", errors="replace"):
                    return True
            except OSError:
                pass
        return False

    def monotonic(self) -> float:
        now = time.monotonic()
        if self.began is None:
            if not self._ready():
                return 0.0
            self.began = now
        return now - self.began

    def __getattr__(self, name: str):
        return getattr(time, name)


def test_a_timeout_kills_the_grandchild(fast_fields, runs_dir, tmp_path, monkeypatch):
    from bracket.session.process import runner

    _plan(tmp_path, monkeypatch, ["grandchild,hang"])
    session = Session.create("demo-cpu", fast_fields, _settings(budget=1, timeout_s=3), out_dir=runs_dir)
    monkeypatch.setattr(runner, "time", StartedClock(session.folder, "output/grandchild.pid"))
    assert session.run() == "finished", session.error
    (timed_out,) = session.store.runs(session.name)
    assert timed_out["status"] == "failed" and "timed out" in timed_out["failure_reason"]
    assert dead(read_pid(_output(timed_out) / "grandchild.pid", 1)), "the timed-out run left its grandchild"
    assert dead(read_pid(_output(timed_out) / "trainer.pid", 1))
    session.close()


def test_a_normal_exit_kills_the_grandchild(fast_fields, runs_dir, tmp_path, monkeypatch):
    """No timeout here: a run that ends on its own must never be cut short by a slow machine."""
    _plan(tmp_path, monkeypatch, ["grandchild"])
    session = Session.create("demo-cpu", fast_fields, _settings(budget=1), out_dir=runs_dir)
    assert session.run() == "finished", session.error
    (finished,) = session.store.runs(session.name)
    assert finished["status"] == "done"
    assert dead(read_pid(_output(finished) / "grandchild.pid", 1)), "the finished run left its grandchild"
    assert dead(read_pid(_output(finished) / "trainer.pid", 1))
    session.close()
