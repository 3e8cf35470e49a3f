"""Issue 43 item 4: a halving launch whose command carries its own step limit at the rung (an sd-scripts run
with a constant schedule: ``pause.own_step_limit``) is charged that rung, not its full length, so an
sd-scripts search whose space has only constant schedules buys the configs its plan counts — Setup and
``run`` say one number, and Start runs that many — where each new config used to be reserved a full run
(the plan said "4 to 8 configs" and Start ran 6, a third of a full run left unspent). A space that mixes
schedules states its range, and the search's count lies in it. Every step any launch trained is charged,
and the GPU time used stays within the budget. The inventory-parsing fake sd-scripts trains at 0 s a step."""

from __future__ import annotations

import pytest

from bracket.app.forms import plan_text
from bracket.session import HalvingSettings, SearchSettings
from bracket.session.loop.rung_steps import trainer_facts
from bracket.trainer.pause import KOHYA_SELF_STOP
from tests.sd_scripts.test_sd_full_halving_cost import STEPS, halving_session, trained_by_launches

pytestmark = pytest.mark.timeout(300)
BUDGET = 4
#: 12-step runs, rungs at 4 and 12: 8 configs to 1/3 → 2 to full fit 4 full runs
PLANNED = 8


@pytest.mark.parametrize(("bounds", "every"), [
    ({"lr_scheduler": ["constant"]}, True), ({"lr_scheduler": ["constant", "constant_with_warmup"]}, True),
    ({}, False), ({"lr_scheduler": ["constant", "cosine"]}, False), ({"lr_scheduler": ["linear"]}, False)])
def test_the_session_facts_say_every_run_stops_itself_only_for_a_space_of_constant_schedules(build, bounds, every):
    settings = SearchSettings(budget=BUDGET, steps=STEPS, halving=HalvingSettings(launch_share=0), bounds=bounds)
    facts = trainer_facts(settings, build("sdxl-lora"))
    assert facts.stops_at_rung is every and facts.stops_when == KOHYA_SELF_STOP


def _search(session):
    runs = [r for r in session.store.runs(session.name) if r["stage"] == "search"]
    return runs, len(session.store.configs(session.name, stage="search"))


def test_a_search_of_constant_schedules_runs_the_count_its_plan_says_within_its_budget(
        field_values, image_folder, tmp_path, runs_dir, monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_HORIZON", str(STEPS))  # the fake's constant schedule: as long as the run
    monkeypatch.setenv("BRACKET_FAKE_LOSS_TAG", "loss")
    bounds = {"lr_scheduler": ["constant", "constant_with_warmup"]}
    session = halving_session("sdxl-lora", "sdxl_train_network.py", BUDGET, "flat", field_values, image_folder,
                              tmp_path, runs_dir, bounds=bounds)
    # Setup's budget box, on the same form: one count (an upper bound only while a launch's start-up is unknown)
    setup = plan_text(BUDGET, 1, 0, "sdxl-lora", steps=STEPS, halving=True, fields=session.parts.fields,
                      bounds=bounds)
    assert setup.startswith(f"= {BUDGET} full runs: up to {PLANNED} configs to 1/3 → 2 to full"), setup
    assert "if all do" not in setup and "train on past their rung" not in setup, setup
    printed = session.plan_text()  # `bracket run`'s plan line: the start-up is fixed (0), so the count is exact
    assert printed == f"budget {BUDGET} full runs = {PLANNED} configs to 1/3 → 2 to full", printed
    assert session.run() == "finished"
    runs, ran = _search(session)
    shown = [(r["id"], r["status"], r["pause_step"], r["last_step"]) for r in runs]
    assert ran == PLANNED, shown  # each new config was reserved a full run: 6 ran
    assert all(r["last_step"] in (4, STEPS) for r in runs), shown  # each stopped itself exactly at its rung
    assert session.budget.spent(session.view()) == pytest.approx(trained_by_launches(runs)), shown
    assert trained_by_launches(runs) <= BUDGET + 1e-9, shown
    session.close()


def test_a_search_that_mixes_schedules_states_its_range_and_charges_every_step(
        field_values, image_folder, tmp_path, runs_dir, monkeypatch):
    """The constant configs stop themselves at their rung; the cosine ones race to their end (0 s a step,
    the pause's stop ignored) and are charged all of it."""
    from tests.fakes import write_fake_plan

    monkeypatch.setenv("BRACKET_FAKE_HORIZON", str(STEPS))
    monkeypatch.setenv("BRACKET_FAKE_LOSS_TAG", "loss")
    monkeypatch.setenv("BRACKET_FAKE_PLAN", str(write_fake_plan(tmp_path / "plan.json", ["stubborn"] * 40)))
    session = halving_session("sdxl-lora", "sdxl_train_network.py", BUDGET, "mixed", field_values, image_folder,
                              tmp_path, runs_dir, bounds={"lr_scheduler": ["constant", "cosine"]})
    printed = session.plan_text()
    assert printed.startswith(f"budget {BUDGET} full runs = {BUDGET} to {PLANNED} configs: "), printed
    assert "unless their lr_scheduler is constant or constant_with_warmup" in printed, printed
    assert session.run() == "finished"
    runs, ran = _search(session)
    shown = [(r["id"], r["status"], r["params"].get("lr_scheduler"), r["last_step"]) for r in runs]
    assert BUDGET <= ran <= PLANNED, shown
    assert session.budget.spent(session.view()) == pytest.approx(trained_by_launches(runs)), shown
    assert trained_by_launches(runs) <= BUDGET + 1e-9, shown
    session.close()
