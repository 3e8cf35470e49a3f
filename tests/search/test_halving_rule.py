"""The successive-halving rule (bracket.search.halving): rungs, who goes on, and why."""

import pytest

from bracket.search.halving import (
    Parked,
    Rungs,
    cost,
    promotions,
    search_values,
    share_label,
    stopped_reason,
    top_count,
)


def test_rungs_are_powers_of_eta_ending_at_full_length():
    assert Rungs(eta=3, smallest=1 / 9).fractions() == pytest.approx((1 / 9, 1 / 3, 1.0))
    assert Rungs(eta=2, smallest=0.25).fractions() == pytest.approx((0.25, 0.5, 1.0))


def test_rung_steps_round_up_to_saved_steps_and_merge_when_they_meet():
    assert Rungs(3, 1 / 9).steps(900, every=50) == (100, 300, 900)
    assert Rungs(3, 1 / 9).steps(100, every=25) == (25, 50, 100)
    # 1/9 and 1/3 of 30 steps saved every 20 both round to 20: one rung, then full
    assert Rungs(3, 1 / 9).steps(30, every=20) == (20, 30)


@pytest.mark.parametrize("eta, smallest", [(1, 0.5), (2.5, 0.5), (3, 0), (3, 1.0), (3, 1.5)])
def test_bad_rungs_are_refused(eta, smallest):
    with pytest.raises(ValueError):
        Rungs(eta=eta, smallest=smallest)


def test_top_third_of_those_that_reached_a_rung_goes_on():
    rungs = Rungs(eta=3, smallest=1 / 9)
    parked = [Parked(i, reached=0) for i in range(6)]
    scores = {(i, 0): value for i, value in enumerate([0.5, 0.1, 0.9, 0.3, 0.7, 0.2])}
    chosen = promotions(parked, scores, rungs)
    assert [(p.config_id, p.to_rung) for p in chosen] == [(1, 1), (5, 1)]
    assert chosen[0].reason == "promoted: 1 of 6 at 1/9, top 2 go on to 1/3"


def test_running_finished_and_already_promoted_configs_are_not_promoted_again():
    rungs = Rungs(eta=3, smallest=1 / 9)
    parked = [Parked(0, reached=1), Parked(1, reached=0, running=True), Parked(2, reached=0, finished=True)]
    parked += [Parked(i, reached=0) for i in range(3, 9)]
    scores = {(i, 0): float(i) for i in range(9)} | {(0, 1): 0.0}
    # top 3 at rung 0 are 0 (gone on), 1 (running) and 2 (diverged): nobody new goes on
    assert promotions(parked, scores, rungs) == []


def test_a_later_rating_that_lifts_a_paused_config_promotes_it():
    rungs = Rungs(eta=3, smallest=1 / 3)
    parked = [Parked(0, reached=1), Parked(1, reached=0), Parked(2, reached=0)]
    scores = {(0, 0): 0.1, (1, 0): 0.5, (2, 0): 0.9, (0, 1): 0.2}
    assert promotions(parked, scores, rungs) == []
    scores[(2, 0)] = 0.05  # a person liked config 2's samples at 1/3
    assert [p.config_id for p in promotions(parked, scores, rungs)] == [2]


def test_closing_promotes_the_best_even_below_a_full_cohort():
    rungs = Rungs(eta=3, smallest=1 / 9)
    parked = [Parked(0, reached=0), Parked(1, reached=0)]
    scores = {(0, 0): 0.4, (1, 0): 0.3}
    assert promotions(parked, scores, rungs) == []
    assert [p.config_id for p in promotions(parked, scores, rungs, closing=True)] == [1]
    assert top_count(0, 3, closing=True) == 0


def test_the_most_advanced_rung_is_promoted_first():
    rungs = Rungs(eta=2, smallest=0.25)
    parked = [Parked(0, reached=1), Parked(1, reached=0), Parked(2, reached=0), Parked(3, reached=1)]
    scores = {(0, 0): 0.1, (3, 0): 0.2, (1, 0): 0.3, (2, 0): 0.4, (0, 1): 0.1, (3, 1): 0.5}
    # rung 0: 4 reached, top 2 are 0 and 3 (both gone on); rung 1: 2 reached, top 1 is 0
    assert [(p.config_id, p.to_rung) for p in promotions(parked, scores, rungs)] == [(0, 2)]


def test_stopped_reason_and_labels():
    rungs = Rungs(3, 1 / 9)
    scores = {(i, 0): float(i) for i in range(7)}
    assert stopped_reason(5, 0, scores, rungs) == "stopped at 1/9: 6 of 7, top 2 go on"
    assert stopped_reason(9, 0, scores, rungs) == "stopped at 1/9: no score there"
    # below a cohort nobody goes on yet: said so, not "top 0 go on"
    assert stopped_reason(0, 0, {(0, 0): 0.5}, rungs) == "stopped at 1/9: 1 of 1, none go on before 3 reach it"
    assert [share_label(s) for s in (1 / 9, 1 / 3, 0.25, 0.4, 1.0)] == ["1/9", "1/3", "1/4", "40%", "full"]


def test_cost_counts_steps_and_launches_in_full_runs():
    assert cost(1000, 1, 1000) == 1.0
    # three launches of a third each, 50 steps of start-up per launch: more than one full run
    assert cost(999, 3, 999, launch_steps=50) == pytest.approx((999 + 150) / 1049)


def test_the_leader_at_a_rung_goes_on_before_a_full_cohort_when_asked():
    rungs = Rungs(eta=3, smallest=1 / 9)
    scores = {(0, 0): 0.4}
    assert promotions([Parked(0, reached=0)], scores, rungs) == []
    assert [(p.config_id, p.to_rung)
            for p in promotions([Parked(0, reached=0)], scores, rungs, leader=True)] == [(0, 1)]
    # a second config that is not the best waits; a new best goes on
    parked = [Parked(0, reached=1), Parked(1, reached=0)]
    assert [p.config_id for p in promotions(parked, {**scores, (1, 0): 0.5, (0, 1): 0.3}, rungs, leader=True)] == [0]
    assert [p.config_id for p in promotions(parked, {**scores, (1, 0): 0.2, (0, 1): 0.3}, rungs, leader=True)] == [0, 1]


def test_the_default_smallest_rung_is_a_third_and_two_rungs_follow():
    assert Rungs().fractions() == pytest.approx((1 / 3, 1.0))
    assert Rungs().steps(900, every=50) == (300, 900)


def test_search_values_rank_by_the_rung_reached_then_by_the_score_there():
    # 0 and 1 reached full length, 2 only 1/3, 3 and 4 only 1/9 (2 rungs above it: top = 2)
    scores = {(0, 0): 0.5, (0, 1): 0.4, (0, 2): 0.30, (1, 0): 0.1, (1, 1): 0.2, (1, 2): 0.35,
              (2, 0): 0.2, (2, 1): 0.1, (3, 0): 0.05, (4, 0): 0.9, (5, 0): float("nan")}
    values = search_values(scores, top=2)
    assert sorted(values, key=values.get) == [0, 1, 2, 3, 4]  # full before 1/3 before 1/9, whatever the loss
    assert values[0] == 0.0 and values[1] == 0.5 and values[2] == 1.0 and values[3] == 2.0 and values[4] == 2.5
    assert 5 not in values  # no finite score: not ranked
