"""What a halving search costs when its trainer cannot resume (``resume_mode = "restart"``):
a promoted config trains again from step 0, so the plan, the budget's checks and the compute
spent count the whole next rung, and the steps a restart threw away (``restart_steps``). A
trainer that resumes is counted as before. The rungs a sample interval rounds far past their
shares cost what they train."""

from __future__ import annotations

import json

import pytest

from bracket.search.halving import Promotion
from bracket.session import HalvingSettings, SearchSettings, Session
from bracket.session.loop.rung_scores import full_runs_spent
from bracket.session.loop.trainer_facts import TrainerFacts
from bracket.session.search_settings import SettingsError, halving_cost
from bracket.session.store.rows import RunRow
from bracket.standings.rungs import session_rung_table
from tests.fakes.plain_views import halving_on, view_of
from tests.session.test_halving_search import halving_fields

RESTARTS = " (restarts: a promoted config trains again from step 0)"


def test_the_plan_of_a_restarting_trainer_pays_for_every_rung_from_step_0():
    resumes = SearchSettings(budget=4, steps=60, halving=HalvingSettings())
    restarts = TrainerFacts(restarts=True)
    assert resumes.plan() == "budget 4 full runs = 8 configs to 1/3 → 2 to full"
    # the user walk of sdxl-full at budget 4: 8 × 20 + 2 × 60 steps = 4.67 full runs, over the budget
    assert halving_cost(8, (1 / 3, 1.0), 3, restarts=True) == pytest.approx(280 / 60)
    assert resumes.configs_planned(restarts) == 6
    assert resumes.plan(facts=restarts) == "budget 4 full runs = 6 configs to 1/3 → 2 to full" + RESTARTS
    assert halving_cost(6, (1 / 3, 1.0), 3, restarts=True) <= 4
    # one config to full length costs its first rung and the whole run again
    with pytest.raises(SettingsError, match=r"budget 1 buys no config with halving: .* costs 1\.33 full runs"):
        SearchSettings(budget=1, steps=60, halving=HalvingSettings()).validate(TrainerFacts(restarts=True))


def test_rungs_rounded_far_past_their_shares_cost_the_steps_they_train():
    planned = SearchSettings(budget=4, steps=60, sample_every_n_steps=50, halving=HalvingSettings())
    rounded = TrainerFacts(rung_every=50)  # 1/3 trains to step 50 of 60
    assert planned.rung_fractions(rounded) == pytest.approx((50 / 60, 1.0))
    assert planned.n_configs == 8 and planned.configs_planned(rounded) == 4  # 4 × 50 + 1 × 10 steps of 240


def test_the_budget_check_counts_a_restart_to_the_whole_next_rung():
    settings = SearchSettings(budget=2, steps=8, sample_every_n_steps=2,
                              halving=HalvingSettings(eta=2, smallest_rung=0.5, launch_share=0),
                              confirm=0)
    scores = {(1, 0): 0.1, (2, 0): 0.5, (3, 0): 0.9}
    paused = [{"id": i, "config_id": i, "status": "paused", "pause_step": 4, "last_step": 4, "launches": 1,
               "seed_index": 0} for i in (1, 2, 3)]
    second = Promotion(2, 1, "promoted: 2 of 3 at 1/2, top 2 go on to full")
    resumes = halving_on(settings)
    restarts = halving_on(settings, facts=TrainerFacts(restarts=True))
    assert resumes.affordable(second, view_of(resumes, paused, scores))  # 12 steps + 4 more = 16, the budget
    assert not restarts.affordable(second, view_of(restarts, paused, scores))  # 12 + 8 from step 0 = 20 of 16
    # a restart in flight: its launch threw the 4 steps of the first away and trains 8 from 0
    flight = {**paused[0], "status": "running", "last_step": 2, "launches": 2, "restart_steps": 4}
    assert restarts.committed(RunRow.of(flight)) == 12
    assert full_runs_spent([flight], 8) == pytest.approx(6 / 8)


def test_a_restarting_halving_search_spends_no_more_than_its_budget(tmp_path, runs_dir, monkeypatch):
    launches = tmp_path / "launches.jsonl"
    monkeypatch.setenv("BRACKET_FAKE_PAUSE_LAUNCH_LOG", str(launches))
    monkeypatch.setattr("bracket.trainer.demo.adapter.DemoLoRA.resume_mode", "restart")
    settings = SearchSettings(budget=2, steps=16, sample_every_n_steps=2,
                              halving=HalvingSettings(eta=2, smallest_rung=0.25, launch_share=0),
                              confirm=0, sample_prompts="a red circle --d 1")
    session = Session.create("demo-cpu", halving_fields(tmp_path), settings, out_dir=runs_dir, name="restarts")
    # resuming, 4 configs to 1/4 → 2 to 1/2 → 1 to full; restarting, 2 × 4 + 8 + 16 steps = 2 full runs
    assert session.facts.restarts
    assert session.settings.plan(facts=session.facts) == (
        "budget 2 full runs = 2 configs to 1/4 → 1 to 1/2 → 1 to full" + RESTARTS)
    assert session.run() == "finished"
    events = [json.loads(line) for line in launches.read_text().splitlines()]
    starts = [e for e in events if e["event"] == "start"]
    trained = sum(e["step"] for e in events if e["event"] == "end") - sum(e["step"] for e in starts)
    assert all(e["step"] == 0 for e in starts)  # every launch from step 0
    assert trained == 32  # the budget: 2 full runs of 16 steps
    runs = [r for r in session.store.runs(session.name) if r["stage"] == "search"]
    full = [r for r in runs if r["status"] == "done"]
    assert len(full) == 1 and (full[0]["launches"], full[0]["restart_steps"]) == (3, 4 + 8)
    assert full_runs_spent(runs, 16) == pytest.approx(trained / 16)
    assert session.snapshot().full_runs_spent == pytest.approx(2.0)
    # a paused run of a trainer that cannot resume kept its weights, not its state
    _plan, rows = session_rung_table(session)
    paused = [row[-1] for row in rows if "paused at step" in row[-1]]
    assert paused and all(", weights saved" in text and "state saved" not in text for text in paused), rows
    session.close()
