"""A seed whose run was interrupted trains again only while the budget pays for it (issue 46): every
step a launch trained is spent, a killed one's too. Where the budget cannot pay, the config is stopped
with that reason — never trained past the budget, never left ``running`` with nothing to train (the loop
would wait for it forever)."""

from __future__ import annotations

import pytest

from bracket.session import Session
from bracket.session.loop.search_loop import SearchLoop, session_scheduler
from tests.session.test_paused_runs import SETTINGS, _first_paused

pytestmark = pytest.mark.timeout(120)


def test_a_config_whose_interrupted_seed_the_budget_cannot_pay_is_stopped_and_the_search_ends(tmp_path, runs_dir):
    session, run = _first_paused(tmp_path, runs_dir, "unpaid")  # budget 2 of 16-step runs: 32 steps
    # its worker died twice: a first launch trained to step 14, the second to step 16 (killed before it
    # was recorded done): 30 steps of GPU time used, and the seed has no run that stands
    session.store.update_run(run["id"], status="interrupted", last_step=16, pause_step=None)
    lost = session.store.add_run(session.name, config_id=run["config_id"], kind=run["kind"], stage="search",
                                 label=run["label"], seed=run["seed"], seed_index=0, params=run["params"],
                                 max_steps=16)
    session.store.update_run(lost, status="interrupted", last_step=14, launches=1)
    assert session.budget.spent(session.view()) == pytest.approx(30 / 16)
    SearchLoop(session, session_scheduler(session), wait_s=0.1).run()  # returns: nothing is left open
    config = next(c for c in session.store.configs(session.name) if c["id"] == run["config_id"])
    assert config["status"] == "stopped" and "the budget cannot pay" in config["rung_note"], config
    runs = session.store.runs(session.name)
    assert len(runs) == 2 and session.budget.spent(session.view()) <= SETTINGS.budget  # nothing more launched
    session.close()


def test_a_session_reopened_keeps_the_fact_that_its_trainer_stops_at_the_rung(tmp_path, runs_dir):
    session, _ = _first_paused(tmp_path, runs_dir, "facts")  # the demo trainer: --stop_at_step
    assert session.budget.facts.stops_at_rung
    folder = session.parts.folder
    session.close()
    again = Session.open(folder)
    assert again.budget.facts.stops_at_rung
    again.close()
