"""A halving search keeps in reserve the way to full length for its best config (issue 44's load
test): a seed whose run a kill cut short trains again, as a new config is bought, only while every
step already spent (the killed launches' too), its own rung and the best config's way on to full
length fit the budget. Kills make the search try fewer configs, not end without a full-length one.

The load test's search (3 full runs of 16 steps: 7 configs to 4 → 3 to 8 → 1 to 16), its trainer
one that stops itself at its rung (as the demo's does)."""

from __future__ import annotations

import pytest

from bracket.session import Session
from bracket.session.loop.search_loop import SearchLoop, session_scheduler
from bracket.session.loop.trainer_facts import TrainerFacts
from bracket.standings import NoWinnerError, require_winner, standings
from tests.fakes.plain_views import halving_on, view_of
from tests.session.test_scheduler_tables import LOAD, config, run


def _view(scheduler, wasted: int, *, at_half: bool = False):
    """Configs 1-6 paused at the first rung (config 1 at 1/2 with ``at_half``), config 7's only run
    killed at step 4 before its pause was recorded, and ``wasted`` more steps of config 2's killed
    earlier launches: config 7's slot must train again to step 4."""
    runs = [run(1, 1, "paused", pause=8 if at_half else 4, last=8 if at_half else 4, launches=2 if at_half else 1),
            *(run(i, i, "paused", pause=4, last=4) for i in range(2, 7)),
            run(7, 7, "interrupted", last=4), run(8, 2, "interrupted", last=wasted)]
    scores = {**{(i, 0): 0.1 * i for i in range(1, 7)}, **({(1, 1): 0.1} if at_half else {})}
    configs = [config(1, "paused", rung=1 if at_half else 0), *(config(i, "paused", rung=0) for i in range(2, 7)),
               config(7)]
    return view_of(scheduler, runs, scores, configs=configs)


@pytest.mark.parametrize(("wasted", "at_half", "trains_again"), [
    (4, False, True),  # 24 + 4 + 4 steps spent, its 4, the best's 12 from 1/4 to full: 48 of 48
    (5, False, False),  # 49: it would leave the best config short of full length
    (6, False, False),  # the budget itself still pays for the launch (42 of 48), the reserve does not
    (4, True, True),  # the best at 1/2 (its 4 more steps spent): 28 + 4 + 4 + 4 spent, its 4, 8 to full: 48
    (5, True, False),
])
def test_a_killed_seed_trains_again_only_while_the_best_configs_way_to_full_length_stays_paid(
        wasted, at_half, trains_again):
    scheduler = halving_on(LOAD, facts=TrainerFacts(stops_at_rung=True))
    view = _view(scheduler, wasted, at_half=at_half)
    assert scheduler.budget.pays(view, 1, scheduler.reach(0, view), promised=scheduler.promised(view, but=7))
    assert scheduler.target(view.config(7), view) == (([0], 4) if trains_again else None)
    assert scheduler.unpaid(view.config(7), view) is not trains_again  # not paid: settled as stopped


def test_a_new_config_is_bought_only_while_the_reserve_stays_paid():
    """What the budget buys and what trains again follow the one rule (``Halving.keeps_reserve``):
    with config 7's slot promised, an eighth config is never bought where the slot could not train."""
    scheduler = halving_on(LOAD, facts=TrainerFacts(stops_at_rung=True))
    assert scheduler.bought(_view(scheduler, 0))[0] == len(_view(scheduler, 0).configs)  # 7 of 7 planned
    for wasted in (4, 6):
        view = _view(scheduler, wasted)
        assert scheduler.keeps_reserve(view, 4, 0, but=7) is (scheduler.target(view.config(7), view) is not None)


def test_a_search_whose_budget_cannot_pay_for_a_full_run_ends_with_an_answer(tmp_path, runs_dir, capsys):
    """Six killed launches spent 24 of a budget of 32 steps (2 full runs of 16): the best config can go on
    to 1/2 (4 + 24 + 4 = 32) but never to full length. The search ends as an answer, not an error:
    ``resume`` exits 0 and, as ``status`` does, says no config reached full length within the budget,
    names the best at its highest rung with its figures, and the command that finishes it — which
    does (``promote --run``: a run of the full 16 steps)."""
    from bracket.cli import main
    from tests.distributed.halving_checks import ended_short
    from tests.session.test_paused_runs import SETTINGS, _first_paused

    session, first = _first_paused(tmp_path, runs_dir, "short")  # config 1 paused at 1/4 (step 4)
    for wasted in (4, 4, 4, 4, 4, 4):  # six launches killed at the rung before their pause was recorded: spent
        lost = session.store.add_run(session.name, config_id=first["config_id"], kind=first["kind"], stage="search",
                                     label=first["label"], seed=first["seed"], seed_index=0, params=first["params"],
                                     max_steps=16)
        session.store.update_run(lost, status="interrupted", last_step=wasted, launches=1)
    folder = session.folder
    session.close()

    assert main(["resume", str(folder), "--quiet"]) == 0
    said = capsys.readouterr().out
    again = Session.open(folder)
    configs = again.store.configs(again.name, stage="search")
    assert [(c["status"], c["rung"]) for c in configs] == [("stopped", 1)]  # no new config: the reserve
    assert configs[0]["rung_note"] == "stopped at 1/2: 1 of 1, none go on before 2 reach it, but the budget is spent"
    assert again.budget.spent(again.view()) == pytest.approx(2.0)  # 4 + 24 + 4 of 32 steps: kept
    ended_short(configs, 32, SETTINGS, (4, 8, 16))  # the load test's check of such an end holds on it
    table = standings(again)  # what the app's Results shows among its warnings, and promote without --run says
    assert table.winner is None and table.budget_short in table.warnings
    with pytest.raises(NoWinnerError, match=r"^No config reached full length within the budget: .* --run ID\.$"):
        require_winner(again, table)
    again.close()
    line = next(line for line in said.splitlines() if line.startswith("warning: no config reached full length"))
    assert line.startswith(f"warning: no config reached full length within the budget: the best, baseline (run "
                           f"{first['id']}), stopped at 1/2 (step 8 of 16; loss "), line
    assert line.endswith(f", 1 of 1 there); to finish it, train it to full length with "
                         f"`python -m bracket promote PATH --run {first['id']}`"), line
    assert "winner: none at full length (the budget paid for no full-length run)" in said
    assert "session short: finished" in said

    assert main(["status", str(folder)]) == 0
    assert line in capsys.readouterr().out
    assert main(["promote", str(folder), "--run", str(first["id"])]) == 0  # the way the answer names
    capsys.readouterr()
    done = Session.open(folder)
    promoted = [r for r in done.store.runs(done.name) if r["stage"] == "promote"]
    assert [(r["status"], r["last_step"]) for r in promoted] == [("done", 16)]
    done.close()


def test_the_reserve_starts_at_the_highest_rung_a_standing_run_reached():
    """A killed launch's steps (config 3, killed at step 14 of a promotion's retraining) and a failed run
    (config 2, at step 12) are spent, but take no config to a rung: the best config's way to full length
    is still the 12 steps from 1/4, and config 3's killed seed does not get them."""
    scheduler = halving_on(LOAD, facts=TrainerFacts(stops_at_rung=True))
    runs = [run(1, 1, "paused", pause=4, last=4), run(2, 2, "failed", last=12), run(3, 3, "interrupted", last=14)]
    view = view_of(scheduler, runs, {(1, 0): 0.1}, configs=[config(1, "paused", rung=0), config(2, "failed"),
                                                            config(3)])
    assert scheduler.highest(view) == 0
    assert scheduler.keeps_reserve(view, 4, 0, but=3)  # 30 spent + 4 + 12 = 46 of 48
    assert not scheduler.keeps_reserve(view, 8, 0, but=3)  # 50


def test_kills_that_waste_first_rung_launches_make_the_search_try_fewer_configs_not_end_short(tmp_path, runs_dir):
    """Budget 2 full runs (32 steps). Config 1 waits at 1/4; config 2's run was killed at step 4 before
    its pause was recorded, after three earlier launches of its seed were killed too (10 steps): 18
    steps spent. Training config 2 again (4 more) would leave 10, less than config 1's 12 to full
    length — before, it trained all the same and the search ended with no config at full length.
    Now config 2 is stopped, with that reason, and config 1 trains on to full length: the winner."""
    from tests.session.test_paused_runs import _first_paused

    session, first = _first_paused(tmp_path, runs_dir, "fewer")  # config 1 paused at 1/4
    loop = SearchLoop(session, session_scheduler(session), wait_s=0.1)
    taken = loop.next_work()  # a new config: the budget buys it
    assert taken is not None and taken[0].config_id != first["config_id"]
    loop.train(*taken)
    second = next(r for r in session.store.runs(session.name) if r["config_id"] == taken[0].config_id)
    session.store.update_run(second["id"], status="interrupted", pause_step=None)  # killed at its rung
    for wasted in (4, 4, 2):
        lost = session.store.add_run(session.name, config_id=second["config_id"], kind=second["kind"],
                                     stage="search", label=second["label"], seed=second["seed"], seed_index=0,
                                     params=second["params"], max_steps=16)
        session.store.update_run(lost, status="interrupted", last_step=wasted, launches=1)
    assert session.budget.spent(session.view()) == pytest.approx(18 / 16)

    SearchLoop(session, session_scheduler(session), wait_s=0.1).run()
    configs = {c["id"]: c for c in session.store.configs(session.name, stage="search")}
    assert configs[second["config_id"]]["status"] == "stopped"
    assert "still take the best config to full length" in configs[second["config_id"]]["rung_note"]
    assert configs[first["config_id"]]["rung_state"] == "full"
    assert [r["id"] for r in session.store.runs(session.name) if r["status"] == "done"] == [first["id"]]
    assert session.budget.spent(session.view()) <= 2 + 1e-9  # 18 + 4 + 8 = 30 of 32
    session.close()
