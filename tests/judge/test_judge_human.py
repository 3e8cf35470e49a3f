"""Human judge: ratings, Bradley-Terry on pairwise choices, and choosing the next pairs."""

from __future__ import annotations

import random

import pytest
from scipy import stats as scipy_stats

from bracket.judge.human import Comparison, Rating, bradley_terry, mean_ratings, next_pairs, score_human


def synthetic_comparisons(strengths: dict[int, float], n: int, seed: int) -> list[Comparison]:
    rng = random.Random(seed)
    ids = list(strengths)
    out = []
    for _ in range(n):
        a, b = rng.sample(ids, 2)
        p_left = 1.0 / (1.0 + pow(2.718281828, strengths[b] - strengths[a]))
        out.append(Comparison(a, b, "left" if rng.random() < p_left else "right"))
    return out


def test_bradley_terry_recovers_the_true_order():
    truth = {10 + i: s for i, s in enumerate([-2.0, -1.2, -0.5, 0.0, 0.6, 1.3, 2.1])}
    fitted = bradley_terry(synthetic_comparisons(truth, 300, seed=3))
    ids = sorted(truth)
    tau = scipy_stats.kendalltau([truth[i] for i in ids], [fitted[i].strength for i in ids]).statistic
    assert tau > 0.8
    assert all(s.std_error > 0 for s in fitted.values())
    results = score_human(ids, comparisons=synthetic_comparisons(truth, 300, seed=3))
    best = min(results, key=lambda r: results[r].score)
    assert best == 16  # the strongest run gets the lowest (best) human score


def test_ties_count_half_each_way():
    ties_only = bradley_terry([Comparison(1, 2, "tie")] * 4)
    assert ties_only[1].strength == pytest.approx(ties_only[2].strength, abs=1e-6)
    assert ties_only[1].ties == 4 and ties_only[1].wins == 0
    mixed = bradley_terry([Comparison(1, 2, "left"), Comparison(1, 2, "tie"), Comparison(2, 1, "tie")])
    assert mixed[1].strength > mixed[2].strength
    assert 0.5 < mixed[1].win_probability < 1.0
    # a tie is weaker evidence than a win: one win + one tie < two wins
    two_wins = bradley_terry([Comparison(1, 2, "left"), Comparison(1, 2, "left")])
    win_and_tie = bradley_terry([Comparison(1, 2, "left"), Comparison(1, 2, "tie")])
    assert two_wins[1].strength > win_and_tie[1].strength


def test_more_comparisons_shrink_uncertainty():
    few = bradley_terry([Comparison(1, 2, "left"), Comparison(2, 1, "left")])
    many = bradley_terry([Comparison(1, 2, "left"), Comparison(2, 1, "left")] * 20)
    assert many[1].std_error < few[1].std_error


def test_ratings_average_per_prompt_then_per_run_and_map_to_scores():
    ratings = [Rating(1, 10), Rating(1, 4, prompt_index=0), Rating(1, 6, prompt_index=0),
               Rating(1, 8, prompt_index=1),
               (2, None, 1), {"run_id": 3, "prompt_index": None, "value": 42}]
    means = mean_ratings(ratings)
    assert means[1] == (pytest.approx((10 + 5 + 8) / 3), 4)
    assert 3 not in means  # out of range: ignored
    results = score_human([1, 2, 3], ratings)
    assert results[2].score == pytest.approx(1.0)
    assert results[1].score == pytest.approx((10 - 23 / 3) / 9)
    assert results[3].score is None and not results[3].disqualified and "no human" in results[3].reason


def test_ratings_and_pairwise_merge():
    comparisons = [Comparison(1, 2, "left")] * 3
    results = score_human([1, 2], [Rating(1, 10), Rating(2, 10)], comparisons)
    assert results[1].details["rating_score"] == 0.0
    assert results[1].score < results[2].score
    assert results[1].score == pytest.approx(results[1].details["pairwise_score"] / 2)
    only_ratings = score_human([1, 2], [Rating(1, 10), Rating(2, 10)], comparisons, pairwise_weight=0.0)
    assert only_ratings[1].score == only_ratings[2].score == 0.0


def test_next_pairs_prefers_close_and_under_compared_pairs():
    scores = {1: 0.10, 2: 0.12, 3: 0.50, 4: 0.90}
    assert set(next_pairs([1, 2, 3, 4], scores, [], rng=random.Random(0))[0]) == {1, 2}
    # 1-2 compared many times already: another close pair wins
    history = [Comparison(1, 2, "left"), Comparison(2, 1, "tie")] * 3 + [Comparison(3, 4, "left")]
    pairs = next_pairs([1, 2, 3, 4], {1: 0.1, 2: 0.12, 3: 0.2, 4: 0.9}, history, k=2, rng=random.Random(0))
    assert len(pairs) == 2 and {1, 2} not in [set(p) for p in pairs]
    assert set(pairs[0]) in ({1, 3}, {2, 3})


def test_next_pairs_never_repeats_the_last_pair():
    scores = {1: 0.5, 2: 0.5, 3: 0.95}
    history = [Comparison(1, 3, "left"), Comparison(1, 2, "left")]
    for seed in range(5):
        pair = next_pairs([1, 2, 3], scores, history, rng=random.Random(seed))[0]
        assert set(pair) != {1, 2}
    assert next_pairs([1, 2], scores, [Comparison(2, 1, "tie")]) == []
    sides = {next_pairs([1, 2], scores, [], rng=random.Random(s))[0] for s in range(20)}
    assert sides == {(1, 2), (2, 1)}


def test_store_rows_as_dicts_are_accepted():
    rows = [{"id": 1, "left_run_id": 5, "right_run_id": 6, "winner": "right"},
            {"id": 2, "left_run_id": 5, "right_run_id": 6, "winner": "bogus"}]
    ratings = [{"id": 1, "run_id": 5, "prompt_index": 0, "value": 7.0}]
    results = score_human([5, 6, 7], ratings, rows)
    assert results[6].details["wins"] == 1 and results[6].details["comparisons"] == 1  # bogus row ignored
    assert results[5].details["mean_rating"] == 7.0 and results[7].score is None
    assert set(next_pairs([5, 6, 7], {5: 0.5, 6: 0.5}, rows)[0]) != {5, 6}
