"""A rating moves the estimate of similar unrated configs (issue 25), and one blind choice
moves a run a bounded amount (the Bradley-Terry prior).

Checked through the real scoring path (``score_runs``: loss series -> loss judge, ratings ->
human judge, per-run estimates from similar params, combination) and, for "the sampler sees
the same estimate", through a real session's standings and sampler history.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from bracket.judge.combine import estimate_missing
from bracket.judge.human import rating_score, score_human
from bracket.judge.informative import param_distance
from bracket.judge.neighbours import distance_matrix, neighbour_estimates
from bracket.session.scoring import score_runs

WEIGHTS = {"loss": 1.0, "human": 2.0}


def _run(run_id: int, lr: float, optimizer: str = "AdamW", floor: float = 0.2, **extra) -> dict:
    series = [(step, floor + (1.0 - floor) * 0.9 ** step) for step in range(1, 41)]
    return {"id": run_id, "config_id": run_id, "status": "done", "kind": "search", "loss": series,
            "finished_at": None, "params": {"optimizer_type": optimizer, "learning_rate": lr,
                                             "lr_scheduler": "cosine", "batch_size": 16, **extra}}


def _human(scores, run_id):
    return scores[run_id].parts["human"]


def test_a_rating_lifts_a_similar_unrated_config_more_than_a_dissimilar_one():
    runs = [_run(1, 1e-4), _run(2, 1.3e-4), _run(3, 3e-3, "SGD"), _run(4, 1e-3, "Adam", floor=0.3)]
    scores = score_runs(runs, [(4, None, 5.0)], (), WEIGHTS)  # someone rated a run far from both
    before = {i: _human(scores, i).value for i in (2, 3)}
    assert before[2] == pytest.approx(before[3], abs=0.02)  # nothing near either of them is rated yet
    after = score_runs(runs, [(4, None, 5.0), (1, None, 10.0)], (), WEIGHTS)
    lift = {i: before[i] - _human(after, i).value for i in (2, 3)}
    assert lift[2] > 0.1 and lift[2] > 2 * lift[3]  # the far one moves only with the shared mean
    assert "similar configs" in _human(after, 2).note and _human(after, 2).estimated
    # and the combined score the sampler ranks by moves the same way
    assert after[2].value < scores[2].value and after[2].value - scores[2].value < after[3].value - scores[3].value
    # a 1 pushes the neighbour down instead
    low = score_runs(runs, [(4, None, 5.0), (1, None, 1.0)], (), WEIGHTS)
    assert _human(low, 2).value > before[2] + 0.1


def test_no_ratings_no_human_term_and_runs_without_params_count_as_alike():
    runs = [_run(i, 10 ** (-5 + i / 2)) for i in range(1, 7)]
    plain = score_runs(runs, (), (), WEIGHTS)
    assert all("human" not in s.parts for s in plain.values())
    assert {i: s.value for i, s in plain.items()} == {i: s.parts["loss"].value for i, s in plain.items()}
    for run in runs:
        run.pop("params")
    shared = score_runs(runs, [(1, None, 10.0)], (), WEIGHTS)
    guesses = {(_human(shared, i).value, round(_human(shared, i).weight, 9)) for i in range(2, 7)}
    assert guesses == {(0.0, 0.5)}  # the one 10, at the evidence of one run: the loss's weight


def test_many_nearby_ratings_win_over_the_shared_mean():
    # six configs near lr 1e-4 rated 9, six far away (SGD, 1e-2) rated 2: the shared mean is ~5.5,
    # but an unrated config at 1.1e-4 is estimated close to a 9 and one at 9e-3 SGD close to a 2
    near = [_run(i, 1e-4 * (1 + 0.05 * i)) for i in range(1, 7)]
    far = [_run(10 + i, 1e-2 * (1 - 0.03 * i), "SGD") for i in range(1, 7)]
    runs = near + far + [_run(30, 1.1e-4), _run(31, 9e-3, "SGD")]
    ratings = [(r["id"], None, 9.0) for r in near] + [(r["id"], None, 2.0) for r in far]
    scores = score_runs(runs, ratings, (), WEIGHTS)
    shared = estimate_missing([rating_score(9.0)] * 6 + [rating_score(2.0)] * 6).value
    # (six neighbours against one pseudo-run at the shared estimate: within a seventh of the way)
    assert _human(scores, 30).value == pytest.approx(rating_score(9.0), abs=0.07)
    assert _human(scores, 31).value == pytest.approx(rating_score(2.0), abs=0.07)
    assert abs(_human(scores, 30).value - shared) > 0.3


def test_a_10_never_lowers_a_run_among_unrated_runs_with_params():
    """The estimate now differs per run, yet a 10 still never lets an unrated run overtake the rated
    one (and a 1 never lifts it): a rating moves its own run fully, a neighbour at most halfway."""
    optimizers = ["AdamW", "Adam", "SGD"]
    for seed in range(60):
        rng = random.Random(seed)
        runs = [_run(i, 10 ** rng.uniform(-5, -2), rng.choice(optimizers), rng.uniform(0.05, 0.5))
                for i in range(1, rng.randint(4, 12))]
        ids = [r["id"] for r in runs]
        rated = rng.sample(ids, rng.randint(0, len(ids) - 2))
        ratings = [(i, None, float(rng.randint(1, 10))) for i in rated]
        target = rng.choice([i for i in ids if i not in rated])
        before = {i: s.value for i, s in score_runs(runs, ratings, (), WEIGHTS).items()}
        others = [i for i in ids if i not in rated and i != target]
        for value in (10.0, 1.0):
            after = {i: s.value for i, s in score_runs(runs, ratings + [(target, None, value)], (), WEIGHTS).items()}
            ahead_before = {o for o in others if before[o] < before[target]}
            ahead_after = {o for o in others if after[o] < after[target]}
            if value == 10.0:
                assert ahead_after <= ahead_before, f"seed {seed}: a 10 let unrated runs overtake run {target}"
            else:
                assert ahead_before <= ahead_after, f"seed {seed}: a 1 lifted run {target} over unrated runs"


def test_the_vectorised_distance_is_param_distance():
    rng = random.Random(4)

    def config() -> dict:
        c = {"optimizer_type": rng.choice(["AdamW", "SGD", "Lion"]), "learning_rate": 10 ** rng.uniform(-5, -2),
             "lr_warmup_steps": rng.choice([0, 5, 10]), "shift": rng.choice([-1.0, 0.0, 2.5]),
             "flag": rng.random() < .5}
        if rng.random() < 0.3:
            del c["lr_warmup_steps"]
        return c

    rows, columns = [config() for _ in range(25)], [config() for _ in range(15)]
    keys = sorted({k for c in rows + columns for k in c})
    expected = np.array([[param_distance(r, c) for c in columns] for r in rows])
    assert np.allclose(distance_matrix(rows, columns, keys), expected)


def test_neighbour_estimate_with_no_similarity_scale_is_the_shared_one():
    shared = estimate_missing([0.0, 0.2])
    params = {1: {"lr": 1e-4}, 2: {"lr": 1.1e-4}, 3: {"lr": 1e-2}}
    assert neighbour_estimates(shared, {1: 0.0}, params, [2, 3], scale=0.0) == {2: shared, 3: shared}
    guess = neighbour_estimates(shared, {1: 0.0}, params, [2, 3])
    assert guess[2].value == guess[3].value == 0.0  # a mix of the scores there are: the one 0.0
    assert guess[2].near > 0.5 > guess[3].near and guess[2].evidence > 0.3 > 1e-6 > guess[3].evidence


def test_one_blind_choice_moves_a_run_a_bounded_amount_and_more_choices_move_it_further():
    one = score_human([1, 2], (), [(1, 2, "left")])
    winner, loser = one[1].score, one[2].score
    # the prior (strength sd 1): one choice says "probably better" (P = 0.66), not "much better"
    assert 0.3 < winner < 0.37 and loser == pytest.approx(1 - winner)
    assert 0.1 < 0.5 - winner < 2.0 / 9.0  # under two rating points from "no opinion"
    moved = [0.5 - score_human([1, 2], (), [(1, 2, "left")] * n)[1].score for n in (1, 2, 5, 20)]
    assert moved == sorted(moved) and moved[-1] > 0.4  # consistent choices still pull far apart
    # in a session with more runs, a first choice between two of them moves neither past a rating of 7 / 4
    many = score_human(range(1, 7), (), [(3, 4, "left"), (5, 6, "left"), (1, 2, "left")])
    assert all(rating_score(7.2) < many[i].score < rating_score(3.8) for i in range(1, 7))


def test_the_sampler_and_the_standings_put_the_rated_config_first(demo_fields, runs_dir):
    from bracket.session import SearchSettings, Session
    from bracket.standings import standings

    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=5, steps=10, seeds=1, sample_prompts=""),
                             out_dir=runs_dir)
    try:
        assert session.run() == "finished"
        runs = [r for r in session.store.runs(session.name, with_series=False) if r["status"] == "done"]
        session.add_rating(runs[0]["id"], 10)
        board = standings(session).board("search")
        shown = {tuple(sorted(row.params.items())): row.mean for row in board.rows}
        seen = {tuple(sorted(c.params.items())): c.value for c in session.scored_configs() if c.value is not None}
        rated = tuple(sorted(next(row for row in board.rows if runs[0]["id"] in row.run_ids).params.items()))
        # the standings show the combined score; the sampler sees the person's verdict (a 10: 0.0) and
        # predictions of it (bracket.session.scoring.sampler_values); both put the rated config first
        assert seen.keys() == shown.keys() and seen[rated] == pytest.approx(0.0, abs=0.02)
        assert min(seen, key=seen.get) == rated == tuple(sorted(board.rows[0].params.items()))
        estimated = [part for row in board.rows for run in row.runs for part in run.parts
                     if part.judge == "human" and part.estimated]
        assert len({round(p.weight, 9) for p in estimated}) > 1, "unrated configs get their own estimates"
    finally:
        session.close()


def test_the_rating_message_names_the_similar_configs_that_moved_with_it():
    from bracket.app.rating_effect import describe_rating_effect, moved_with

    before = {i: 0.1 * i for i in range(1, 13)}  # 12 configs: TPE's good set is the best 3 (25 %)
    # config 7 rated 9; its neighbour 8 follows (0.8 -> 0.15), everyone else shifts by -0.01 (the shared mean)
    after = {**{i: v - 0.01 for i, v in before.items()}, 7: 0.05, 8: 0.15}
    assert moved_with(before, after, 7) == [8]
    text = describe_rating_effect(before, after, 7, run_id=31, value=9, names={8: "search-8"})
    assert text.endswith("; 1 similar config moved with it (search-8: 8th -> 3rd, now among them).")
    # nothing moved beyond the shared shift: no clause
    plain = describe_rating_effect(before, {**{i: v - 0.01 for i, v in before.items()}, 7: 0.05}, 7, run_id=31, value=9)
    assert "moved with it" not in plain and plain.endswith("TPE builds its next proposals on.")
    # a neighbour whose rank did not change says its score change instead of "3rd -> 3rd"
    still = describe_rating_effect(before, {**{i: v - 0.01 for i, v in before.items()}, 1: 0.05, 3: 0.2}, 1,
                                   run_id=31, value=9, names={3: "search-3"})
    assert still.endswith("(search-3: still 3rd).") and "3rd -> 3rd" not in still, still
    # ... and is not said to have "moved" (seen in review): its score changed with it, its rank did not
    assert still.endswith("; the score of 1 similar config changed with it (search-3: still 3rd).")
    # a mix: both carried, only one changed rank; the one shown is the one that moved
    mixed = describe_rating_effect(before, {**{i: v - 0.01 for i, v in before.items()}, 1: 0.05, 3: 0.2, 5: 0.25}, 1,
                                   run_id=31, value=9, names={3: "search-3", 5: "search-5"})
    assert mixed.endswith("; the scores of 2 similar configs changed with it and 1 of them moved "
                          "(search-5: 5th -> 4th)."), mixed
    # a low rating drags its neighbours down with it
    low = {**before, 2: 0.9, 3: 0.5}
    assert moved_with(before, low, 2) == [3]


def test_a_choice_moves_a_run_from_where_it_stands_on_the_rating_scale():
    """Ratings are absolute, choices relative: a run that won a coin flip between two runs like
    those the person rates 1 must not outrank a run rated 7 (it scored 0.34, a 7, before)."""
    runs = [_run(1, 1e-2), _run(2, 1.2e-2), _run(3, 1.1e-2), _run(4, 0.9e-2), _run(5, 1e-4, "SGD")]
    ratings = [(1, None, 1.0), (2, None, 1.0), (5, None, 7.0)]
    scores = score_runs(runs, ratings, [(3, 4, "left")], WEIGHTS)
    winner, loser = _human(scores, 3), _human(scores, 4)
    assert not winner.estimated and winner.raw is not None  # measured: its Bradley-Terry strength
    assert winner.value > _human(scores, 5).value + 0.2 and loser.value > winner.value
    unrated = score_runs(runs, ratings, (), WEIGHTS)
    one_win = 0.5 - score_human([3, 4], (), [(3, 4, "left")])[3].score
    assert winner.value == pytest.approx(_human(unrated, 3).value - one_win)
    # a rated run that also won a choice: its rating moved by the choice, not averaged with 0.34
    both = score_runs(runs, ratings, [(5, 1, "left")], WEIGHTS)
    assert _human(both, 5).value == pytest.approx(rating_score(7.0) - (0.5 - 0.337), abs=0.01)
    # nobody rated anything: the plain pairwise scores, as before, and unrated runs estimated from them
    plain = score_runs(runs, (), [(3, 4, "left")], WEIGHTS)
    assert _human(plain, 3).value == pytest.approx(score_human([3, 4], (), [(3, 4, "left")])[3].score)
    assert _human(plain, 1).estimated
