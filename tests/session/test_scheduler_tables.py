"""The schedulers' and the budget's decisions as tables, on plain views (no process, no store):
which seeds of a config train and to where, what resumes, what the budget buys and counts."""

from __future__ import annotations

import dataclasses

import pytest

from bracket.errors import StoreError
from bracket.search.halving import Promotion
from bracket.session.loop.budget import Budget, BudgetUnit
from bracket.session.loop.search_view import SearchView
from bracket.session.loop.trainer_facts import TrainerFacts
from bracket.session.search_settings import HalvingSettings, SearchSettings
from bracket.session.store.rows import ConfigState, RunRow, RunState
from tests.fakes.plain_views import NO_VALIDATION, full_runs_on, halving_on, view_of

HALVING = SearchSettings(budget=2, steps=8, sample_every_n_steps=2,
                         halving=HalvingSettings(eta=2, smallest_rung=0.5, launch_share=0),
                         confirm=0)
FULL = SearchSettings(budget=4, steps=8, seeds=2, confirm=0)
#: the load test's search (tests/distributed/halving_checks.SETTINGS): 7 configs to 4 → 3 to 8 → 1 to 16
LOAD = SearchSettings(budget=3, steps=16, sample_every_n_steps=2,
                      halving=HalvingSettings(eta=2, smallest_rung=0.25, launch_share=0), confirm=0)


def run(run_id: int, config_id: int, status: str, *, seed: int = 0, pause: int | None = None, last: int = 0,
        launches: int = 1, **more: object) -> dict:
    return {"id": run_id, "config_id": config_id, "status": status, "seed_index": seed, "pause_step": pause,
            "last_step": last, "launches": launches, "stage": "search", "kind": "curated", **more}


def config(config_id: int, status: str = "running", **more: object) -> dict:
    return {"id": config_id, "status": status, "trial_number": config_id, "kind": "curated", "stage": "search",
            "name": f"c{config_id}", "worker": "", "params": {}, **more}


@pytest.mark.parametrize(("runs", "status", "expected"), [
    ([], "running", ([0, 1], None)),  # a new config: every seed, to full length
    ([run(1, 1, "done", last=8)], "running", ([1], None)),
    ([run(1, 1, "done", last=8), run(2, 1, "interrupted", seed=1)], "running", ([1], None)),  # its slot again
    ([run(1, 1, "done", last=8), run(2, 1, "failed", seed=1)], "running", None),  # every seed spent
    ([run(1, 1, "done", last=8)], "done", None),  # a finished config has nothing to train
])
def test_full_runs_trains_every_seed_not_spent_to_full_length(runs, status, expected):
    scheduler = full_runs_on(FULL)
    view = view_of(scheduler, runs, configs=[config(1, status)])
    assert scheduler.target(view.config(1), view) == expected
    assert scheduler.first_stop() is None and list(scheduler.resumes(view)) == []


@pytest.mark.parametrize(("runs", "status", "expected"), [
    ([], "running", ([0], 4)),  # a new config stops at the first rung, step 4 of 8
    ([run(1, 1, "interrupted", pause=4, last=4)], "running", ([0], 4)),  # interrupted: its seed again
    ([run(1, 1, "paused", pause=4, last=4)], "paused", None),  # waits at its rung for a promotion
    ([run(1, 1, "running", pause=4, last=5)], "running", None),  # trains now (another worker's resume)
    ([run(1, 1, "failed", last=2)], "running", None),  # ended: goes no further
])
def test_halving_trains_a_seed_without_a_run_to_the_rung_its_config_stands_at(runs, status, expected):
    scheduler = halving_on(HALVING)
    view = view_of(scheduler, runs, configs=[config(1, status)])
    assert scheduler.target(view.config(1), view) == expected


def test_halving_offers_the_best_paused_config_of_a_rung_first_while_the_budget_pays():
    scheduler = halving_on(dataclasses.replace(HALVING, budget=3))
    paused = [run(i, i, "paused", pause=4, last=4) for i in (1, 2, 3, 4)]
    configs = [config(i, "paused", rung=0) for i in (1, 2, 3, 4)]
    scores = {(1, 0): 0.5, (2, 0): 0.1, (3, 0): 0.9, (4, 0): 0.7}
    view = view_of(scheduler, paused, scores, configs=configs)
    offered = list(scheduler.resumes(view))
    assert [(w.config_id, w.runs, w.stop_at) for w in offered] == [(2, (2,), None), (1, (1,), None)]
    assert offered[0].note == "promoted: 1 of 4 at 1/2, top 2 go on to full"
    # budget 2: its 16 steps trained already; not even the best goes on (the budget is a promise)
    tight = halving_on(HALVING)
    assert [w.config_id for w in tight.resumes(view_of(tight, paused, scores, configs=configs))] == []
    # with 12 trained the best's 4 more fit: it goes on, though nothing is left for the rest of the way
    three = view_of(tight, paused[:3], {k: v for k, v in scores.items() if k[0] != 4}, configs=configs[:3])
    assert [w.config_id for w in tight.resumes(three)][:1] == [2]


@pytest.mark.parametrize(("runs", "to_rung", "fits"), [
    ([run(i, i, "paused", pause=4, last=4) for i in (1, 2, 3)], 1, True),  # 12 + 4 = 16 steps of 16
    ([run(1, 1, "done", last=8, launches=2)] + [run(i, i, "paused", pause=4, last=4) for i in (2, 3)], 1, False),
    ([run(1, 1, "running", pause=4, last=5)] + [run(i, i, "paused", pause=4, last=4) for i in (2, 3)], 1, False),
])
def test_halving_counts_runs_in_flight_to_the_rung_they_go_to(runs, to_rung, fits):
    scheduler = halving_on(HALVING)
    scores = {(1, 0): 0.1, (2, 0): 0.5, (3, 0): 0.9}
    assert scheduler.affordable(Promotion(2, to_rung, ""), view_of(scheduler, runs, scores)) is fits


@pytest.mark.parametrize(("settings", "unit", "total_runs"), [
    (SearchSettings(budget=8, confirm=0), BudgetUnit.RUNS, 8),
    (SearchSettings(budget=9, seeds=2, confirm=0), BudgetUnit.RUNS, 8),  # a run the seeds cannot use
    (SearchSettings(budget=24), BudgetUnit.RUNS, 24),  # 18 search runs + the confirmation round's 6
    (HALVING, BudgetUnit.FULL_RUNS, 3),  # 3 configs to 1/2 → 1 to full
])
def test_the_budget_counts_in_one_unit(settings, unit, total_runs):
    budget = Budget.of(settings, NO_VALIDATION)
    assert (budget.unit, budget.total_runs) == (unit, total_runs)


def test_a_run_budget_is_spent_by_spent_runs_and_paused_ones_only():
    scheduler = full_runs_on(SearchSettings(budget=3, steps=8, confirm=0))
    budget = scheduler.budget
    runs = [run(1, 1, "done", last=8), run(2, 2, "interrupted"), run(3, 3, "failed", last=2)]
    view = view_of(scheduler, runs)
    assert (budget.spent(view), budget.exhausted(lambda: view), budget.label(view)) == (2.0, False, "2/3 runs")
    view = view_of(scheduler, [*runs, run(4, 4, "pruned", last=3)])
    assert budget.exhausted(lambda: view) and budget.label(view) == "3/3 runs"


def test_a_full_run_budget_counts_every_step_trained_and_each_launch():
    scheduler = halving_on(HALVING)
    budget = scheduler.budget
    runs = [run(1, 1, "done", last=8, launches=2), run(2, 2, "paused", pause=4, last=4),
            run(3, 3, "running", last=2, launches=2, restart_steps=4)]  # a restart in flight: 4 thrown + 2
    view = view_of(scheduler, runs, configs=[config(1, "done"), config(2, "paused"), config(3)])
    assert budget.spent(view) == pytest.approx((8 + 4 + 6) / 8)
    assert budget.label(view) == "3 configs, 2.2/2 full runs"
    assert not budget.exhausted(lambda: pytest.fail("a halving budget is checked per decision"))
    launched = view_of(scheduler, runs, launch=2.0)  # a start-up of 2 steps per launch: 18 + 10 of 10 per run
    assert budget.spent(launched) == pytest.approx((18 + 5 * 2) / 10)


@pytest.mark.parametrize(("launch", "count", "noted"), [(0.0, 3, False), (2.0, 2, True)])
def test_what_a_halving_budget_buys_depends_on_the_launch_cost_the_view_holds_not_the_clock(launch, count, noted):
    scheduler = halving_on(HALVING)
    bought, note = scheduler.budget.configs(view_of(scheduler, [], launch=launch))
    assert (bought, bool(note)) == (count, noted)


def test_typed_rows_keep_the_stored_strings():
    row = RunRow.of(run(1, 1, "paused", pause=4, last=4))
    assert row.status is RunState.PAUSED and row.status == "paused" and row.spends_budget()
    assert (row.reached_step(), row.trained_steps()) == (4, 4)
    assert ConfigState("stopped") == "stopped" and f"{ConfigState.STOPPED}" == "stopped"
    with pytest.raises(StoreError, match=r"^The session's store is damaged \(a run state 'lost' is not one of "):
        RunRow.of(run(1, 1, "lost"))
    with pytest.raises(StoreError, match="a number column holds 'four'"):
        RunRow.of(run(1, 1, "paused", pause="four"))


def test_an_interrupted_run_is_charged_by_both_the_budget_and_the_scheduler():
    """A worker killed after its run's step 4 was recorded but before its pause: the run is
    ``interrupted`` and its slot trains again, but the GPU time its launch used is spent. The budget's
    count and the scheduler's decisions both count it (one rule: every step a launch trained), so the
    plan and the count never part — before, neither did and the session trained past its budget."""
    scheduler = halving_on(HALVING)
    budget = scheduler.budget
    standing = [run(2, 1, "paused", pause=4, last=4), run(3, 2, "done", last=8)]
    lost = run(1, 1, "interrupted", last=4)
    view = view_of(scheduler, [lost, *standing], configs=[config(1, "paused"), config(2, "done")])
    assert budget.spent(view) == pytest.approx((4 + 4 + 8) / 8)
    assert budget.spent(view) * 8 == pytest.approx(sum(scheduler.committed(r) for r in scheduler.search_runs(view)))
    assert budget.spent(view) > budget.spent(view_of(scheduler, standing, configs=[config(1, "paused"),
                                                                                  config(2, "done")]))


def test_a_config_reserved_whose_run_has_not_started_counts_in_every_budget_decision():
    """The load test's race (3 full runs of 16 steps: 7 configs to 4 → 3 to 8 → 1 to 16). Worker A
    has reserved config 7 (its row is in the store, its run not yet); worker B, deciding under the
    session's lock with configs 1-3 already at 1/2, weighs config 4. Config 7 is one of the 7 the
    budget buys, so no config is left to come and the closing rule's wider share applies — before,
    B counted config 7 nowhere (not to come, no run in flight): 36 + 4 + 8 = 48 of 48 fitted, a
    fourth config went to 1/2 and the search ended at 3.25 of 3. Config 7's first rung is promised:
    no room. (A trainer that stops itself at its rung, as the load test's demo trainer does: a run in
    flight and a reservation are held to their rung; one that may race past it: test_budget_bound.py.)"""
    scheduler = halving_on(LOAD, facts=TrainerFacts(stops_at_rung=True))
    rung0 = [run(i, i, "paused", pause=4, last=4) for i in (4, 5, 6)]
    rung1 = [run(i, i, "paused", pause=8, last=8, launches=2) for i in (1, 2, 3)]
    scores = {**{(i, 0): 0.1 * i for i in range(1, 7)}, **{(i, 1): 0.1 * i for i in (1, 2, 3)}}
    configs = [config(i, "paused", rung=1 if i <= 3 else 0) for i in range(1, 7)]
    promote = Promotion(4, 1, "promoted")
    before = view_of(scheduler, [*rung1, *rung0], scores, configs=configs)
    assert scheduler.bought(before)[0] == 7 and scheduler.affordable(promote, before, configs_left=1, closing=False) \
        is False  # while config 7 is still to come its first rung is kept back
    reserved = view_of(scheduler, [*rung1, *rung0], scores, configs=[*configs, config(7)])
    assert not scheduler.affordable(promote, reserved, configs_left=0, closing=True)  # 36 + 4 + 4 + 8 > 48
    assert scheduler.unstarted(reserved) == 4  # config 7's seed, to the first rung
    offered = [(w.config_id, w.stop_at) for w in scheduler.resumes(reserved)]
    assert offered[0] == (1, None) and (4, 8) not in offered  # the best goes on to full length; not config 4
    started = view_of(scheduler, [*rung1, *rung0, run(7, 7, "running", last=1)], scores, configs=[*configs, config(7)])
    assert scheduler.unstarted(started) == 0  # its run counts now, to its rung: the same 4 steps
    assert [(w.config_id, w.stop_at) for w in scheduler.resumes(started)] == offered


def test_the_seeds_with_no_run_are_read_once_per_view_however_many_decisions_count_them(monkeypatch):
    """Every budget decision on a view (what the budget buys, each promotion weighed, each config's
    target) counts the seeds with no run yet; the view reads them once (``SearchView.unstarted``) and
    every decision counts the same: config 7, reserved, promises its first rung."""
    scheduler = halving_on(LOAD, facts=TrainerFacts(stops_at_rung=True))
    runs = [*(run(i, i, "paused", pause=4, last=4) for i in (4, 5, 6)),
            *(run(i, i, "paused", pause=8, last=8, launches=2) for i in (1, 2, 3))]
    scores = {**{(i, 0): 0.1 * i for i in range(1, 7)}, **{(i, 1): 0.1 * i for i in (1, 2, 3)}}
    configs = [*(config(i, "paused", rung=1 if i <= 3 else 0) for i in range(1, 7)), config(7)]
    view = view_of(scheduler, runs, scores, configs=configs)
    looks: list[int] = []
    seed_runs = SearchView.seed_runs
    monkeypatch.setattr(SearchView, "seed_runs", lambda self, config_id: looks.append(config_id) or seed_runs(
        self, config_id))
    offered = [w.config_id for w in scheduler.resumes(view)]
    targets = {c.id: scheduler.target(c, view) for c in view.configs}
    assert offered[:1] == [1] and scheduler.bought(view)[0] == 7 and targets[7] == ([0], 4)
    assert scheduler.unstarted(view) == 4 and scheduler.promised(view) == 4 and scheduler.promised(view, but=7) == 0
    assert view.unstarted == {7: ((0,), 0)} and looks.count(7) == 1  # read once, by the view


def test_an_interrupted_runs_slot_counts_until_it_trains_again():
    """Config 2's only run was interrupted (its worker died before the pause): the slot trains again
    to the rung, so its steps are promised as the reserved config's are."""
    scheduler = halving_on(LOAD)
    runs = [run(1, 1, "paused", pause=4, last=4), run(2, 2, "interrupted", last=3)]
    view = view_of(scheduler, runs, configs=[config(1, "paused", rung=0), config(2)])
    assert scheduler.target(view.config(2), view) == ([0], 4) and scheduler.unstarted(view) == 4
