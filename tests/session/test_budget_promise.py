"""A budget is a promise (issue 46): a trainer whose saved state never completes trains every config
of a halving search to full length, each charged as a full run, and the plan is redone (fewer configs,
said) instead of the budget overspent. The launch log of the fake trainer is the witness of what
really trained."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bracket.session import HalvingSettings, SearchSettings, Session
from tests.session.test_halving_search import halving_fields

SETTINGS = SearchSettings(budget=2, steps=16, sample_every_n_steps=2,
                          halving=HalvingSettings(eta=2, smallest_rung=0.25, launch_share=0),
                          confirm=0, sample_prompts="a red circle --d 1")
FULL_STEPS = 16


def trained_steps(log: Path) -> int:
    """Every step any launch trained, from the fake trainer's own start and end lines."""
    events = [json.loads(line) for line in log.read_text().splitlines()]
    return sum(e["step"] for e in events if e["event"] == "end") - sum(e["step"] for e in events
                                                                        if e["event"] == "start")


@pytest.fixture
def launch_log(tmp_path, monkeypatch) -> Path:
    log = tmp_path / "launches.jsonl"
    monkeypatch.setenv("BRACKET_FAKE_PAUSE_LAUNCH_LOG", str(log))
    return log


def test_a_trainer_whose_state_never_completes_is_charged_full_runs_and_the_plan_is_redone(
        tmp_path, runs_dir, monkeypatch, launch_log):
    monkeypatch.setenv("BRACKET_FAKE_PAUSE_NO_STATE", "1")  # no run ever pauses: each trains to full length
    session = Session.create("demo-cpu", halving_fields(tmp_path), SETTINGS, out_dir=runs_dir, name="nostate")
    assert session.settings.plan() == "budget 2 full runs = 4 configs to 1/4 → 2 to 1/2 → 1 to full"
    assert session.run() == "finished"
    snapshot = session.snapshot()
    assert trained_steps(launch_log) == 2 * FULL_STEPS == snapshot.full_runs_spent * FULL_STEPS  # never 4 full runs
    configs = session.store.configs(session.name, stage="search")
    assert [(c["status"], c["rung_state"]) for c in configs] == [("done", "full")] * 2
    notes = session.store.get_session(session.name)["notes"]
    assert any("the plan is redone, 2 full runs buy 2 configs, not 4" in note for note in notes), notes
    session.close()


def test_runs_that_train_past_their_rung_are_charged_every_step_they_trained(tmp_path, runs_dir, monkeypatch,
                                                                              launch_log):
    monkeypatch.setenv("BRACKET_FAKE_PAUSE_OVERRUN", "1")  # each pause lands a step past its rung, as sd-scripts'
    session = Session.create("demo-cpu", halving_fields(tmp_path), SETTINGS, out_dir=runs_dir, name="overrun")
    assert session.run() == "finished"
    snapshot = session.snapshot()
    paused = [r for r in session.store.runs(session.name, with_series=False) if r["status"] == "paused"]
    assert paused and all(r["last_step"] == r["pause_step"] + 1 for r in paused)  # what it trained, recorded
    assert session.view().overshoot_steps() == len(paused)  # measured
    assert trained_steps(launch_log) == pytest.approx(snapshot.full_runs_spent * FULL_STEPS)  # charged what it trained
    assert snapshot.full_runs_spent <= 2
    session.close()
