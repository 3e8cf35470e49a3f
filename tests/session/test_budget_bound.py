"""The budget is a promise whatever the trainer's speed (issue 46): every halving launch — a new config,
a promotion, a seed trained again — starts only while the budget pays for it, and every run in flight,
to train on to its own end (a trainer may race past its rung before the stop lands). Tables on plain
views (``SearchView``, ``Budget.pays``, the ``Halving`` scheduler's decisions); no process, no store."""

from __future__ import annotations

import dataclasses

import pytest

from bracket.search.halving import Promotion
from bracket.session.search_settings import HalvingSettings
from tests.fakes.plain_views import halving_on, view_of
from tests.session.test_scheduler_tables import HALVING, config, run

#: budget 2 of 8-step runs, rungs at 2, 4 and 8 (eta 2 from 1/4)
THREE = dataclasses.replace(HALVING, halving=HalvingSettings(eta=2, smallest_rung=0.25, launch_share=0))


@pytest.mark.parametrize(("rows", "at_most"), [
    ([run(1, 1, "done", last=8)], 8),
    ([run(1, 1, "paused", pause=4, last=5)], 5),  # paused: what it trained (the overshoot too), no more
    ([run(1, 1, "running", last=1)], 8),  # to its rung at 4, but it may race to its end at 8
    ([run(1, 1, "pending", launches=0)], 8),  # reserved, not started yet
    ([run(1, 1, "running", pause=4, last=6, launches=2, restart_steps=1)], 1 + 8),  # a resume: its thrown step too
    ([run(1, 1, "running", last=2, launches=2, restart_steps=4)], 4 + 8),  # a restart from 0 after 4 thrown
    ([run(1, 1, "running", last=3, max_steps=16)], 8),  # 16 steps of its own are the session's 8
    ([run(1, 1, "interrupted", last=3)], 3),  # its worker died at step 3: those steps were trained
    ([run(1, 1, "running", seed=1, last=3)], 0),  # a confirmation run (seed past the seeds): not the search's
])
def test_every_run_in_flight_is_reserved_to_its_own_end(rows, at_most):
    scheduler = halving_on(HALVING)
    view = view_of(scheduler, rows)
    assert view.full_runs_at_most() == pytest.approx(at_most / 8)
    assert view.full_runs_at_most() >= view.full_runs_spent() - 1e-9 or rows[0]["seed_index"] >= 1


def test_a_new_config_is_bought_only_while_the_budget_pays_for_it_to_race_to_full_length():
    scheduler = halving_on(HALVING)  # 16 steps: 3 configs to 1/2 -> 1 to full
    configs = [config(1, "done"), config(2, "paused", rung=0)]
    one = view_of(scheduler, [run(1, 1, "done", last=8)], configs=configs[:1])
    assert scheduler.bought(one)[0] == 3  # 8 trained + 8 if the next races to its end: 16 of 16
    # 12 trained: the next config's first rung (4) fits, but were it to race to its end it would spend 20 of 16
    two = view_of(scheduler, [run(1, 1, "done", last=8), run(2, 2, "paused", pause=4, last=4)], configs=configs)
    count, note = scheduler.bought(two)
    assert count == 2 and "the plan is redone" in note and "pays for it to train to full length" in note
    # another worker's run in flight at step 1 is reserved to its end (8), not to its rung (4)
    flight = view_of(scheduler, [run(1, 1, "done", last=8), run(2, 2, "running", last=1)],
                     configs=[configs[0], config(2)])
    assert scheduler.bought(flight)[0] == 2


@pytest.mark.parametrize(("rows", "pays"), [
    ([run(1, 1, "done", last=8), run(2, 2, "paused", pause=2, last=2)], True),  # 10 + 6 = 16 of 16
    # 12 trained: the promotion's 2 steps to the next rung fit (14), but it may race on to 8 (18 of 16)
    ([run(1, 1, "done", last=8), run(2, 2, "paused", pause=2, last=2), run(3, 3, "paused", pause=2, last=2)], False),
    # 11 + 6: the step it trained past its rung is spent, and a resume from the rung's state trains it again
    ([run(1, 1, "done", last=8), run(2, 2, "paused", pause=2, last=3)], False),
])
def test_a_promotion_to_a_rung_before_the_last_is_paid_to_full_length(rows, pays):
    scheduler = halving_on(THREE)
    assert scheduler.rungs.steps == (2, 4, 8)
    scores = {(2, 0): 0.1, (3, 0): 0.5, (1, 0): 0.9}
    view = view_of(scheduler, rows, scores, configs=[config(r["config_id"], r["status"]) for r in rows])
    assert scheduler.affordable(Promotion(2, 1, ""), view, closing=True) is pays


@pytest.mark.parametrize(("rows", "pays"), [
    ([run(1, 1, "interrupted", last=2), run(2, 2, "paused", pause=4, last=4)], True),  # 6 + 8 of 16
    ([run(1, 1, "interrupted", last=5), run(2, 2, "paused", pause=4, last=4)], False),  # 9 + 8
])
def test_a_seed_trained_again_after_an_interrupted_run_is_paid_or_its_config_stopped(rows, pays):
    scheduler = halving_on(HALVING)
    view = view_of(scheduler, rows, configs=[config(1, "running"), config(2, "paused", rung=0)])
    assert (scheduler.target(view.config(1), view) == ([0], 4)) is pays
    assert scheduler.unpaid(view.config(1), view) is not pays  # ``settle`` stops it: never left open


def test_a_trainer_that_exits_at_its_rung_by_itself_is_reserved_to_that_rung_only():
    """The demo trainer's ``--stop_at_step``: a run never trains past the rung it was asked to pause at,
    whatever its speed (``TrainerFacts.stops_at_rung``, decided at creation from the adapter's ``stops_at_pause``)."""
    from bracket.session.loop.trainer_facts import TrainerFacts

    scheduler = halving_on(HALVING, facts=TrainerFacts(stops_at_rung=True))
    rows = [run(1, 1, "done", last=8), run(2, 2, "paused", pause=4, last=4)]
    view = view_of(scheduler, rows, configs=[config(1, "done"), config(2, "paused", rung=0)])
    assert scheduler.bought(view)[0] == 3  # 12 + the next config's rung (4): 16 of 16
    flight = view_of(scheduler, [run(1, 1, "done", last=8), run(2, 2, "running", last=1)])
    assert flight.full_runs_at_most(to_rungs=lambda run: True) == pytest.approx((8 + 4) / 8)
    assert TrainerFacts.from_dict(TrainerFacts(stops_at_rung=True).to_dict()).stops_at_rung
    assert not TrainerFacts.from_dict({"restarts": False}).stops_at_rung  # a store from before: not assumed


@pytest.mark.parametrize(("row", "goes_to"), [
    (run(1, 1, "running", last=1), 2),  # a new run: to the first rung
    (run(1, 1, "running", pause=2, last=3, launches=2), 4),  # resumed from 1/4: to 1/2
    (run(1, 1, "running", pause=4, last=5, launches=2), 8),  # resumed from 1/2: to full length
    (run(1, 1, "running", pause=4, last=5, launches=2, max_steps=16), 4),  # 4 of its own 16: 1/4 → 1/2 (4 of 8)
])
def test_the_scheduler_and_the_budget_read_the_same_rung_a_run_in_flight_goes_to(row, goes_to):
    """A run in flight trains to the first rung past its pause: the scheduler's commitment
    (``Halving.committed``) and the budget's bound for a trainer that stops itself there
    (``SearchView.full_runs_at_most``) read it from one place (``StepRungs.goes_to``)."""
    from bracket.session.loop.trainer_facts import TrainerFacts
    from bracket.session.store.rows import RunRow

    scheduler = halving_on(THREE, facts=TrainerFacts(stops_at_rung=True))
    view = view_of(scheduler, [row])
    assert scheduler.rungs.goes_to(RunRow.of(row), 8) == goes_to
    assert scheduler.committed(RunRow.of(row)) == goes_to
    assert view.full_runs_at_most(to_rungs=lambda run: True) == pytest.approx(goes_to / 8)
