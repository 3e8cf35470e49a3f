"""The experiment of bench.tied_leaders (variant ``@again``, not in the app): tied rated leaders
get one more rating, ordered with the unrated runs by the same value (rate_next_again)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bench.tied_leaders import (
    RERATE_CAP, RERATE_CHANCE, Judged, rank_tied_leaders, rate_next_again, why_line_again)
from bracket.app import rating_queue
from bracket.judge.informative import ONE_POINT

HUMAN = 2 / 3  # the default human weight share (loss 1, human 2)


def rated(run_id: int, rating: float, times: int = 1, *, loss: float = 0.3, config: int | None = None) -> Judged:
    """A rated run as the standings score it: loss part plus the human part (10 -> 0, 1 -> 1)."""
    score = (1 - HUMAN) * loss + HUMAN * (10 - rating) / 9
    return Judged(run_id, run_id if config is None else config, score, HUMAN * ONE_POINT / times ** 0.5,
                  True, ratings=times, rating=rating)


def unrated(run_id: int, score: float, uncertainty: float) -> Judged:
    return Judged(run_id, run_id, score, uncertainty)


def test_tied_rated_leaders_are_offered_again_with_one_clause():
    got = rank_tied_leaders([rated(12, 8), rated(15, 8, loss=0.31), rated(3, 4)])
    assert sorted(p.run_id for p in got) == [12, 15], "the far-behind #3 is not part of the tie"
    assert all(0 < p.value <= 0.5 for p in got)
    line = why_line_again(got)
    assert line == "Why these runs: #12 and #15 are tied at 8/10: a second rating separates them.", line


def test_one_point_apart_is_close_two_points_is_not():
    close = rank_tied_leaders([rated(1, 8), rated(2, 7)])
    assert {p.run_id for p in close} == {1, 2}
    assert close[0].reason == "#1 (8/10) and #2 (7/10) are too close to call: a second rating separates them"
    assert rank_tied_leaders([rated(1, 8), rated(2, 6)]) == [], "a clear rated leader is not offered again"
    assert rank_tied_leaders([rated(1, 8, times=2), rated(2, 7, times=2)]) == [], \
        "one point with two ratings each: the order is known well enough"


def test_the_cap_stops_offering_a_tie_that_stays_a_tie():
    assert {p.run_id for p in rank_tied_leaders([rated(1, 8, 2), rated(2, 8, 2)])} == {1, 2}
    third = rank_tied_leaders([rated(1, 8, 2), rated(2, 8, 2)])[0].reason
    assert "a third rating" in third
    assert rank_tied_leaders([rated(1, 8, RERATE_CAP), rated(2, 8, RERATE_CAP)]) == []
    one_left = rank_tied_leaders([rated(1, 8, RERATE_CAP), rated(2, 8, 1)])
    assert [p.run_id for p in one_left] == [2]
    assert rank_tied_leaders([rated(1, 8), rated(2, 8)], cap=1) == [], "cap 1: never a rated run"


def test_a_second_rating_is_worth_more_than_a_third():
    first, = [p.value for p in rank_tied_leaders([rated(1, 8, 1), rated(2, 8, 3)]) if p.run_id == 1]
    second, = [p.value for p in rank_tied_leaders([rated(1, 8, 2), rated(2, 8, 3)]) if p.run_id == 1]
    assert first > second > 0


def test_an_unrated_leader_or_rival_is_left_to_the_unrated_ranking():
    assert rank_tied_leaders([unrated(1, 0.1, 0.2), rated(2, 8)]) == []
    assert rank_tied_leaders([rated(1, 8), unrated(2, 0.12, 0.2)]) == []
    assert rank_tied_leaders([rated(1, 8)]) == []


def test_the_chance_threshold_follows_the_flip_model():
    # level ratings but the rival's loss is much worse: its chance falls below the threshold
    far = rank_tied_leaders([rated(1, 8, loss=0.1), rated(2, 8, loss=0.6)])
    near = rank_tied_leaders([rated(1, 8, loss=0.1), rated(2, 8, loss=0.15)])
    assert far == [] and {p.run_id for p in near} == {1, 2}
    assert RERATE_CHANCE < 0.24 < 0.5, "one point apart with one rating each counts; level always did"


def _table(runs: list[Judged], winner_stage: str = "search") -> SimpleNamespace:
    def standing(c: Judged) -> SimpleNamespace:
        parts = [{"judge": "loss", "weight": 1 - HUMAN, "estimated": False}]
        if c.rated:
            parts.append({"judge": "human", "weight": HUMAN, "estimated": False, "figures": {"rating": c.rating}})
        else:
            parts.append({"judge": "human", "weight": HUMAN, "estimated": True, "uncertainty": c.uncertainty / HUMAN})
        return SimpleNamespace(run_id=c.run_id, config_id=c.config_id, stage="search", score=c.score,
                               rated=c.rated, ratings=c.ratings, comparisons=0, parts=parts)
    rows = [SimpleNamespace(params={"lr": 10.0 ** -c.run_id}, runs=[standing(c)]) for c in runs]
    return SimpleNamespace(boards={"search": SimpleNamespace(rows=rows)}, winner=SimpleNamespace(stage=winner_stage))


def test_rate_next_orders_ties_and_unrated_runs_by_one_value():
    tie = [rated(12, 8), rated(15, 8, loss=0.31)]
    leader = min(c.score for c in tie)
    # an unrated contender right at the lead, anything could happen: worth more than a tie
    contender = unrated(20, leader + 0.001, 0.3)
    # an unrated run far behind, pinned down: worth less than a tie
    loser = unrated(21, leader + 0.5, 0.02)
    runs = [*tie, contender, loser]
    ids, why = rate_next_again(_table(runs), {c.run_id for c in runs}, k=4)
    assert ids[0] == 20, "an unrated run with a bigger value comes first"
    assert set(ids[1:3]) == {12, 15} and ids[3] == 21, ids
    assert why.startswith("Why these runs: #20 ") and "#12 and #15 are tied at 8/10" in why, why
    # once the tie is rated to the cap, only the unrated runs remain, never a rated one
    capped = [rated(12, 8, RERATE_CAP), rated(15, 8, RERATE_CAP, loss=0.31), contender, loser]
    assert rate_next_again(_table(capped), {c.run_id for c in capped}, k=4)[0] == [20, 21]


def test_rate_next_offers_the_tie_when_everything_is_rated_and_the_best_again_otherwise():
    tie = [rated(1, 8), rated(2, 8, loss=0.31), rated(3, 3)]
    ids, why = rate_next_again(_table(tie), {1, 2, 3}, k=4)
    assert sorted(ids) == [1, 2] and "tied at 8/10" in why
    clear = [rated(1, 9), rated(2, 6), rated(3, 3)]
    assert rate_next_again(_table(clear), {1, 2, 3}, k=4) == ([1, 2, 3], ""), "no tie: the best rated again, no why"


@pytest.mark.parametrize("k", [0, 1])
def test_rate_next_respects_k(k):
    tie = [rated(1, 8), rated(2, 8, loss=0.31)]
    assert len(rate_next_again(_table(tie), {1, 2}, k=k)[0]) == k


def test_the_app_itself_never_offers_the_tie_while_unrated_runs_remain():
    runs = [rated(12, 8), rated(15, 8, loss=0.31), unrated(20, 0.3, 0.3), unrated(21, 0.9, 0.02)]
    scorable = {c.run_id for c in runs}
    assert set(rate_next_again(_table(runs), scorable, k=4)[0]) == {12, 15, 20, 21}
    ids, why = rating_queue.rate_next(_table(runs), scorable, k=4)
    assert ids == [20, 21] and "tied" not in why, (ids, why)
