"""A run that trains past its rung before the stop lands is charged what it trained (issue 46): the
charge and the measured overshoot as tables on plain rows (``RunRow``, ``SearchView``, ``Launch.of``)."""

from __future__ import annotations

import pytest

from bracket.session.launches import Launch, back_to_pause
from bracket.session.store.rows import RunRow
from tests.fakes.plain_views import halving_on, view_of
from tests.session.test_scheduler_tables import HALVING, config, run


@pytest.mark.parametrize(("row", "trained", "overshoot"), [
    (run(1, 1, "paused", pause=4, last=4), 4, 0),  # stopped at its rung
    (run(1, 1, "paused", pause=4, last=7), 7, 3),  # the stop landed 3 steps past the rung
    (run(1, 1, "done", last=8), 8, 0),
    (run(1, 1, "paused", pause=4, last=7, restart_steps=2), 9, 3),  # and a restart threw 2 away before
    # resumed from 4 after training to 7: the 3 past the state are thrown away, it stands at its state's step
    (run(1, 1, "running", pause=4, last=4, launches=2, restart_steps=3), 7, 0),
    (run(1, 1, "running", pause=4, last=6, launches=2, restart_steps=3), 9, 0),
])
def test_a_run_is_charged_every_step_it_trained_past_its_rung_too(row, trained, overshoot):
    typed = RunRow.of(row)
    assert (typed.trained_steps(), typed.overshoot()) == (trained, overshoot)


def test_the_view_measures_the_overshoot_and_the_budget_spends_it():
    scheduler = halving_on(HALVING)  # runs of 8 steps, rungs at 4 and 8
    runs = [run(1, 1, "paused", pause=4, last=7), run(2, 2, "paused", pause=4, last=4),
            run(3, 3, "paused", pause=8, last=12, max_steps=16)]  # a run of 16 own steps: 2 of the session's
    view = view_of(scheduler, runs, configs=[config(1, "paused"), config(2, "paused"), config(3, "paused")])
    assert view.overshoot_steps() == pytest.approx(3 + 0 + 2)
    assert scheduler.budget.spent(view) == pytest.approx((7 + 4 + 6) / 8)


def test_a_resume_charges_what_the_run_trained_past_the_state_it_resumes_from_as_thrown_away():
    paused = run(1, 1, "paused", pause=4, last=7, restart_steps=2)
    assert Launch.of(paused, None, "*", 4).restart_steps == 2 + 3
    assert Launch.of(run(1, 1, "paused", pause=4, last=4), None, "*", 4).restart_steps == 0
    # a restart (no state to resume from) throws away every step it trained, the overshoot included
    assert Launch.of(paused, None, "*", None).restart_steps == 2 + 7


def test_a_resume_in_flight_commits_its_thrown_steps_and_the_way_to_its_next_rung():
    scheduler = halving_on(HALVING)
    resumed = RunRow.of(run(1, 1, "running", pause=4, last=4, launches=2, restart_steps=3))
    assert scheduler.committed(resumed) == 8 + 3  # to the full length, beside the 3 steps thrown away


@pytest.mark.parametrize("row", [
    run(1, 1, "running", pause=4, last=7, launches=2),  # a resume from 4 killed at 7: 3 steps lost, charged
    run(1, 1, "running", pause=4, last=7, launches=3, restart_steps=2),
    run(1, 1, "running", pause=4, last=2, launches=2, restart_steps=4),  # a restart from 0 killed at 2
])
def test_a_resume_cut_short_goes_back_to_its_pause_still_charged_every_step_it_trained(row):
    """The one rule: every step a launch trained is spent, also one a killed process trained."""
    back = {**row, **back_to_pause(row)}
    assert back["status"] == "paused" and back["last_step"] == 4
    assert RunRow.of(back).trained_steps() == RunRow.of(row).trained_steps()
