"""The Setup tab's successive-halving switch: its plan line, Start, and the form filled again."""

from __future__ import annotations

import pytest

from bracket.app.forms import plan_text
from bracket.app.manager import SessionManager
from bracket.session import HalvingSettings
from ui import setup_tab

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("no_torch_probe")]


def test_the_budget_box_says_its_unit():
    assert setup_tab.budget_label(False) == "Budget (training runs)"
    assert "full runs" in setup_tab.budget_label(True)


def test_the_plan_line_counts_full_runs_with_halving():
    off, on = plan_text(8, 1, 0, "demo-cpu"), plan_text(8, 1, 0, "demo-cpu", halving=True)
    assert "full runs" not in off and on.startswith("= ") and "configs to 1/3 → " in on and "to full" in on
    assert on.startswith("= 8 full runs: ")  # seen in a walk: the line never said the budget counts full runs
    # a trainer that cannot resume pays for each promotion from step 0: fewer configs, and the line says why
    full, lora = plan_text(4, 1, 0, "sdxl-full", halving=True), plan_text(4, 1, 0, "sdxl-lora", halving=True)
    # (1/3 of the default 100 steps rounds up to the sample step 34, as Start rounds it: 5, not 6)
    # sd-scripts may train past a rung before the stop lands: a new config starts only while a full run of it
    # fits, so the line states the range Start runs, from one config a full run (4) to the planned count
    assert full.startswith("= 4 full runs: 4 to 5 configs: up to 5 configs to 1/3 → 1 to full (restarts: a promoted "
                           "config trains again from step 0) (up to: each launch's start-up"), full
    assert lora.startswith("= 4 full runs: 4 to 7 configs: up to 7 configs to 1/3 → 2 to full (up to: "), lora
    assert lora.split(" — ")[0].endswith(", 4 if all do"), lora


def test_the_plan_before_start_is_the_plan_start_runs(runs_dir, demo_fields):
    """Seen: Setup said 11 configs and Start ran 8. The form decides the rungs as Start does (its steps,
    its sample interval, the trainer's facts) and says its count is an upper bound until a launch's
    start-up is known; with the start-up fixed (--launch-cost) it is the count."""
    from bracket.session import HalvingSettings, SearchSettings, Session

    line = plan_text(4, 1, 0, "demo-cpu", fields=demo_fields, steps=60, halving=True, sample_every=50)
    settings = SearchSettings(budget=4, steps=60, sample_every_n_steps=50, halving=HalvingSettings(), confirm=0,
                              sample_prompts="a red circle --d 1")
    session = Session.create("demo-cpu", demo_fields, settings, out_dir=runs_dir, name="same")
    started = session.plan_text()
    session.close()
    assert started.startswith("budget 4 full runs = up to 4 configs to 1/3 → 1 to full"), started  # 1/3 at step 50
    assert line.split(" — ")[0] == "= 4 full runs: " + started.split(" = ", 1)[1]


def test_the_halving_switch_reaches_the_session_and_fills_the_form_again(runs_dir, demo_fields):
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    message, *_ = setup_tab.start_search(
        manager, preset_id="demo-cpu", fields=demo_fields, budget=1, steps=20, seeds=1,
        prompts="a red circle --d 1", sample_every=10, algorithm="tpe", space=None, name="halved", halving=True)
    assert manager.session.settings.halving == HalvingSettings() and "full runs" in message, message
    manager.stop()
    assert manager.session.wait(120)
    assert setup_tab.reflect_open(manager)["halving"] is True
    # a session without halving fills the switch off
    manager.session.settings.halving = None
    assert setup_tab.reflect_open(manager)["halving"] is False


def test_open_says_what_resume_says_of_a_halving_search_waiting_at_a_rung(runs_dir, demo_fields):
    """Seen: Setup's Open said "0 of 4 runs left" of a halving search whose configs all waited at
    a rung (every run of its budget started), while the Search tab's Resume said they go on."""
    from tests.fakes.halving_rows import waiting_session
    from ui import search_tab

    folder = waiting_session(runs_dir, demo_fields)
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    message, tabs, on_search = setup_tab.open_session(manager, str(folder))
    session = manager.session
    assert session.spent_runs() == session.total_runs() == 4 and not session.budget_spent()
    assert message == "Opened **waiting** (not running). Resume it to continue: the configs waiting at a rung go on."
    assert on_search == message and tabs.selected == "search"
    assert search_tab.resumed_text(session) == "Resumed **waiting**: the configs waiting at a rung go on."


def test_open_of_a_spent_halving_search_says_its_budget_in_full_runs(runs_dir, demo_fields, monkeypatch):
    """Seen in review (SDXL LoRA, halving, 6 full runs buying 5 configs): Open said "all 5 runs of
    its budget are trained" while the status line read "5 configs, 5.8/6 full runs"; Open, Resume
    and the CLI's resume now say what was spent in the status line's words."""
    from bracket.session import Session
    from tests.fakes.halving_rows import halving_session
    from ui import search_tab

    folder, _ids = halving_session(runs_dir, demo_fields)
    monkeypatch.setattr(Session, "budget_spent", lambda self: True)  # nothing left to train
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    message = setup_tab.open_session(manager, str(folder))[0]
    spent = manager.snapshot().spent_label
    assert "full runs" in spent and spent.startswith("4 configs, ")  # 6 full runs bought 4 configs
    assert f"its whole budget is trained ({spent})" in message and " runs of its budget" not in message, message
    assert f"already trained its whole budget ({spent})" in search_tab.resumed_text(manager.session, spent)
