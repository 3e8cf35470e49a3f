"""What "Next unrated" and "Next pair" offer so the person's own judgement decides the answer
(issue 43: among the configs a person rated, the one they rated best is the pick unless their own
choices say otherwise). Through the real path: ``score_runs``, the standings, then
``rate_next`` / ``informative_pairs`` as Compare calls them.

Seen with the sparse simulated rater of ``bench/preset_steering.py``: the config with the best
loss of the session was never offered for a rating, so the pick among the rated configs missed
it; and two configs rated alike at the top were split by the loss while no blind choice between
the two was ever asked for.
"""

from __future__ import annotations

import random

from bracket.app.rating_queue import rate_next
from bracket.judge.informative import UNCONFIRMED, candidates_from_standings
from bracket.judge.pairs import informative_pairs, tied_at_the_top
from bracket.session.scoring import score_runs
from bracket.standings import build_standings

WEIGHTS = {"loss": 1.0, "human": 2.0}


def _session(floors: dict[int, float], params: dict[int, dict]) -> tuple[list[dict], list[dict]]:
    runs, configs = [], []
    for i, floor in floors.items():
        series = [(step, floor + (1.0 - floor) * 0.9 ** step) for step in range(1, 41)]
        runs.append({"id": i, "config_id": i, "status": "done", "kind": "search", "stage": "search", "loss": series,
                     "finished_at": None, "params": params[i], "seed": 1, "max_steps": 40})
        configs.append({"id": i, "name": f"c{i}", "stage": "search", "kind": "search", "trial_number": i,
                        "params": params[i]})
    return runs, configs


def _table(runs, configs, ratings, comparisons=()):
    scores = score_runs(runs, ratings, comparisons, WEIGHTS)
    return build_standings(runs, configs, scores, ratings, comparisons, human_weight=WEIGHTS["human"])


def _ratings(given: dict[int, float]) -> list[dict]:
    return [{"run_id": i, "prompt_index": None, "value": v} for i, v in given.items()]


def _adam(i: int) -> dict:
    return {"optimizer_type": "AdamW", "learning_rate": 1e-4 * 1.1 ** i, "network_dim": 16}


def test_the_best_measured_config_nobody_rated_is_offered_first():
    # six AdamW configs next to each other, rated; c7 (another optimizer, far from all of them) has
    # the best loss of the session and nobody rated it; c8 is a near twin of the best-rated c1
    params = {i: _adam(i) for i in range(1, 7)}
    params[7] = {"optimizer_type": "Lion", "learning_rate": 1e-5, "network_dim": 4}
    params[8] = _adam(1) | {"learning_rate": 1.12e-4}
    floors = {1: 0.20, 2: 0.22, 3: 0.25, 4: 0.30, 5: 0.35, 6: 0.40, 7: 0.12, 8: 0.21}
    runs, configs = _session(floors, params)
    given = {1: 9.0, 2: 8.0, 3: 6.0, 4: 5.0, 5: 4.0, 6: 3.0}
    table = _table(runs, configs, _ratings(given))
    ids, why = rate_next(table, {r["id"] for r in runs}, 2)
    assert ids[0] == 7, ids
    assert f"#7 {UNCONFIRMED}" in why
    # once it is rated, the rule has nothing to confirm: no run is offered for that reason
    table = _table(runs, configs, _ratings(given | {7: 4.0}))
    ids, why = rate_next(table, {r["id"] for r in runs}, 2)
    assert ids == [8] and UNCONFIRMED not in why


def test_only_the_stage_s_best_measured_config_is_put_first_and_only_while_unrated():
    rng = random.Random(7)
    for _ in range(30):
        n = rng.randint(4, 9)
        params = {i: {"optimizer_type": rng.choice(["AdamW", "Lion"]), "learning_rate": 10 ** rng.uniform(-5, -3),
                      "network_dim": rng.choice([4, 16])} for i in range(1, n + 1)}
        floors = {i: rng.uniform(0.05, 0.5) for i in params}
        runs, configs = _session(floors, params)
        given = {i: float(rng.randint(1, 10)) for i in rng.sample(sorted(params), rng.randint(1, n - 1))}
        ids, why = rate_next(_table(runs, configs, _ratings(given)), {r["id"] for r in runs}, 4)
        best = min(floors, key=floors.get)
        assert (ids[0] == best) == (best not in given), (ids, best, given)
        assert why.count(UNCONFIRMED) == (best not in given)


def test_a_tie_at_the_top_of_the_ratings_is_offered_as_a_blind_choice_until_the_person_decided_it():
    params = {i: _adam(3 * i) for i in range(1, 6)}
    params[5] = {"optimizer_type": "Lion", "learning_rate": 1e-5, "network_dim": 4}
    # c1 and c2 both rated 9 (c1 the better loss, so c1 leads); c3 rated 5; c4 and c5 unrated
    runs, configs = _session({1: 0.20, 2: 0.30, 3: 0.25, 4: 0.22, 5: 0.28}, params)
    ratings = _ratings({1: 9.0, 2: 9.0, 3: 5.0})
    table = _table(runs, configs, ratings)
    assert table.winner.config_name == "c1"
    pairs = informative_pairs(candidates_from_standings(table), [], 3, rng=random.Random(0))
    assert set(pairs[0]) == {1, 2} and len(pairs) == 3 and {1, 2} not in [set(p) for p in pairs[1:]], pairs
    # the person chose c2: the tie is decided (c2 leads on its blind choice), no longer offered first
    choices = [{"left_run_id": 2, "right_run_id": 1, "winner": "left"}]
    table = _table(runs, configs, ratings, choices)
    assert table.winner.config_name == "c2"
    pairs = informative_pairs(candidates_from_standings(table), choices, 1, rng=random.Random(0))
    assert pairs and set(pairs[0]) != {1, 2}


def test_no_tie_at_the_top_leaves_next_pair_to_the_least_certain_order():
    params = {i: _adam(3 * i) for i in range(1, 5)}
    runs, configs = _session({1: 0.20, 2: 0.30, 3: 0.25, 4: 0.22}, params)
    table = _table(runs, configs, _ratings({1: 9.0, 2: 8.0}))
    assert tied_at_the_top(candidates_from_standings(table)) is None


def test_an_unrated_config_placed_between_two_tied_ones_does_not_hide_the_tie():
    from bracket.judge.informative import Candidate
    pool = [Candidate(1, 1, 0.5, 0.0, True, place=0, rating=0.6), Candidate(2, 2, 0.4, 0.2, False, place=1),
            Candidate(3, 3, 0.55, 0.0, True, place=2, rating=0.6), Candidate(4, 4, 0.6, 0.0, True, place=3, rating=0.7)]
    assert tied_at_the_top(pool) == (1, 3)
    assert tied_at_the_top(pool, [{"left_run_id": 3, "right_run_id": 1}]) is None


def test_one_run_of_the_unconfirmed_config_comes_first_not_every_seed_of_it():
    """Seen in the demo's browser test: with two seeds per config, both runs of the best-measured
    unrated config led "Next unrated", so the grid showed one config twice (its headers named no
    knob, nothing differed) and the second rating said nothing new."""
    from bracket.judge.informative import Candidate, rank_unrated

    candidates = [Candidate(1, 1, 0.50, 0.0, rated=True, measured=0.50),
                  Candidate(2, 1, 0.52, 0.0, rated=True, measured=0.52),
                  Candidate(3, 2, 0.20, 0.3, measured=0.20), Candidate(4, 2, 0.22, 0.3, measured=0.22),
                  Candidate(5, 3, 0.30, 0.3, measured=0.30), Candidate(6, 3, 0.31, 0.3, measured=0.31)]
    order = [p.run_id for p in rank_unrated(candidates, leader_stage="search")]
    assert order[0] == 3, order  # config 2 (the best measured, unrated): its lower-scored run
    reasons = {p.run_id: p.reason for p in rank_unrated(candidates, leader_stage="search")}
    assert reasons[3] == UNCONFIRMED and reasons[4] != UNCONFIRMED
    assert sorted(order) == [3, 4, 5, 6]  # every unrated run is still offered, in turn
