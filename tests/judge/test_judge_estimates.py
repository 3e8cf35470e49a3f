"""Scores stay comparable whatever judges have seen a run (issue 17, item 2).

A run nobody rated gets an estimated human part (the shrunk mean of the rated runs) instead of
dropping the judge. The properties below are checked on seeded random sessions through the
real scoring path (``score_runs``): loss series -> loss judge, ratings -> human judge,
estimates, combination.
"""

from __future__ import annotations

import random

import pytest

from bracket.judge.combine import PRIOR_MEAN, estimate_missing
from bracket.judge.divergence import ema
from bracket.session.scoring import score_runs

CASES = 60


def _runs(rng: random.Random, count: int) -> list[dict]:
    runs = []
    for run_id in range(1, count + 1):
        floor = rng.uniform(0.05, 0.5)
        series = [(step, floor + (1.0 - floor) * 0.9 ** step) for step in range(1, 41)]
        runs.append({"id": run_id, "config_id": run_id, "status": "done", "kind": "search", "loss": series,
                     "finished_at": None})
    return runs


def _case(seed: int) -> tuple[list[dict], list[tuple[int, None, float]], dict[str, float]]:
    rng = random.Random(seed)
    runs = _runs(rng, rng.randint(3, 12))
    rated = rng.sample([r["id"] for r in runs], rng.randint(0, len(runs) - 1))
    ratings = [(run_id, None, float(rng.randint(1, 10))) for run_id in rated for _ in range(rng.randint(1, 2))]
    weights = {"loss": rng.choice([0.5, 1.0, 2.0]), "human": rng.choice([0.5, 1.0, 2.0, 4.0])}
    return runs, ratings, weights


def _values(runs, ratings, weights) -> dict[int, float]:
    return {run_id: s.value for run_id, s in score_runs(runs, ratings, (), weights).items()}


def _unrated(runs, ratings, *, but: int | None = None) -> list[int]:
    rated = {run_id for run_id, _, _ in ratings}
    return [r["id"] for r in runs if r["id"] not in rated and r["id"] != but]


@pytest.mark.parametrize("value", [10, 1])
def test_a_rating_of_10_never_lowers_a_run_among_unrated_runs_and_1_never_raises_it(value):
    for seed in range(CASES):
        runs, ratings, weights = _case(seed)
        target = random.Random(seed).choice([r["id"] for r in runs])  # rated already or not
        before = _values(runs, ratings, weights)
        after = _values(runs, ratings + [(target, None, float(value))], weights)
        others = _unrated(runs, ratings, but=target)
        ahead_before = {o for o in others if before[o] < before[target]}
        ahead_after = {o for o in others if after[o] < after[target]}
        if value == 10:
            assert ahead_after <= ahead_before, f"seed {seed}: a 10 let unrated runs overtake run {target}"
        else:
            assert ahead_before <= ahead_after, f"seed {seed}: a 1 lifted run {target} over unrated runs"


def test_a_rating_never_reorders_two_other_unrated_runs_beyond_their_uncertainty():
    for seed in range(CASES):
        runs, ratings, weights = _case(seed)
        rng = random.Random(seed + 1)
        target = rng.choice([r["id"] for r in runs])
        before = score_runs(runs, ratings, (), weights)
        after = score_runs(runs, ratings + [(target, None, float(rng.randint(1, 10)))], (), weights)
        others = _unrated(runs, ratings, but=target)
        for a in others:
            for b in others:
                gap = before[a].value - before[b].value
                if gap < 0 and abs(gap) > before[a].uncertainty + before[b].uncertainty:
                    assert after[a].value < after[b].value, f"seed {seed}: runs {a} and {b} swapped"
                if gap < 0:  # the estimator moves every unrated run alike: no swap at all
                    assert after[a].value <= after[b].value + 1e-12


def test_no_human_term_while_nobody_rated_and_an_estimate_once_someone_did():
    runs = _runs(random.Random(3), 5)
    unrated = score_runs(runs, (), (), {"loss": 1.0, "human": 2.0})
    assert all("human" not in s.parts and s.estimated == [] and s.uncertainty == 0.0 for s in unrated.values())
    assert {i: s.value for i, s in unrated.items()} == {i: s.parts["loss"].value for i, s in unrated.items()}
    rated = score_runs(runs, [(1, None, 10.0)], (), {"loss": 1.0, "human": 2.0})
    human = rated[1].parts["human"]
    assert not human.estimated and human.raw == 10.0 and human.value == 0.0 and human.uncertainty == 0.0
    guess = rated[2].parts["human"]
    assert guess.estimated and guess.raw is None and guess.uncertainty > 0 and "1 run" in guess.note
    # runs without params are alike: the estimate is the one 10, with the evidence of one run (½),
    # so it weighs human 2 × ½ = the loss's 1, never more
    assert guess.value == 0.0 < PRIOR_MEAN and rated[2].parts["loss"].weight == pytest.approx(guess.weight)
    assert rated[2].estimated == ["human"] and rated[2].uncertainty > 0
    assert rated[1].parts["loss"].raw == pytest.approx(ema([v for _, v in runs[0]["loss"]])[-1])
    assert sum(p.weight for p in rated[2].parts.values()) == pytest.approx(1.0)


def test_a_10_on_the_worse_loss_beats_an_unrated_equal_and_a_1_loses_to_it():
    runs = _runs(random.Random(5), 4)
    runs[1]["loss"] = list(runs[0]["loss"])  # runs 1 and 2: identical loss
    for value, better in ((10.0, True), (9.0, True), (1.0, False)):
        scores = score_runs(runs, [(1, None, value), (3, None, 6.0)], (), {"loss": 1.0, "human": 2.0})
        assert (scores[1].value < scores[2].value) is better, value


def test_estimate_shrinks_toward_the_middle_with_few_scores_and_follows_many():
    one = estimate_missing([0.0])
    assert one.value == pytest.approx((0.0 + 2 * PRIOR_MEAN) / 3) and one.count == 1
    many = estimate_missing([0.1] * 40)
    assert many.value == pytest.approx(0.1, abs=0.02)
    assert many.uncertainty < one.uncertainty
    assert estimate_missing([]) is None


def test_the_rating_message_says_whether_the_config_now_guides_tpe():
    from bracket.app.rating_effect import describe_rating_effect

    before = {i: 0.1 * i for i in range(1, 13)}  # 12 configs, rated: TPE's good set is the best 3 (25 %)
    after = {**before, 7: 0.05}
    text = describe_rating_effect(before, after, 7, run_id=31, value=9)
    assert text.startswith("Run #31 rated 9: its config moved from 7th to 1st of 12, and is now among")
    assert "now among the 3 best configs TPE builds its next proposals on" in text
    worse = describe_rating_effect(before, {**before, 1: 0.95}, 1, run_id=4, value=2)
    assert "from 1st to 9th" in worse and "has left the 3 best" in worse
    same = describe_rating_effect(before, {**before, 9: 0.85}, 9, run_id=5, value=4)
    assert "still outside the 3 best" in same
    assert "not a scored search run" in describe_rating_effect(before, before, None, run_id=8, value=5)
    # an unchanged rank says so; a good set of one is "the best config", not "among the 1 best"
    four = {1: 0.1, 2: 0.2, 3: 0.3, 4: 0.4}
    last = describe_rating_effect(four, {**four, 4: 0.45}, 4, run_id=9, value=2)
    assert "its config stayed 4th of 4, still outside" in last and "moved from" not in last
    assert "still outside the best config TPE builds" in last and "among the 1" not in last
    top = describe_rating_effect(four, {**four, 1: 0.05}, 1, run_id=10, value=9)
    assert "and stays the best config TPE builds its next proposals on" in top
    # issue 43: no relative 1–10 quality ("quality 6.29 -> 8.07" moved when a rating re-scaled the others,
    # up to 1st while the config's own number fell): the rank moves, and the config reads as its headline
    line = "12 % lower validation loss than your baseline, ± 3 %; rated 9/10 by you"
    rescaled = describe_rating_effect({1: 0.0, 2: 0.04, 3: 0.108}, {1: 0.175, 2: 0.226, 3: 0.110}, 3,
                                      run_id=6, value=9, headline=line)
    assert rescaled.startswith("Run #6 rated 9: its config moved from 3rd to 1st of 3")
    assert f"it reads: {line}" in rescaled
    assert not any("quality" in said for said in (text, worse, same, last, top, rescaled))
