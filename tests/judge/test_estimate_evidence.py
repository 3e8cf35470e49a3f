"""An estimated part carries weight in proportion to the evidence behind it (issue 34, item 7).

Seen in a real session: one rating of 3 moved three unrated runs from 0.000/0.044/0.119 to
0.395/0.410/0.435, and after two ratings the run with the best validation loss ranked 5th of
9 on a human part it never received. The properties below are checked on seeded random
sessions (hypothesis is not installed) through the real scoring path (``score_runs``).
"""

from __future__ import annotations

import random

import numpy as np

from bracket.judge.human import rating_score
from bracket.judge.neighbours import distance_matrix, varying_keys
from bracket.session.scoring import score_runs

CASES = 80
#: "far": two of four searched knobs differ (a rated run there weighs exp(-½ (0.5/0.15)²) = 0.004)
FAR = 0.5
#: how much one rating may move an unrated run whose nearest rated config is that far
BOUND = 0.01
OPTIMIZERS = ("AdamW", "Adam", "SGD", "Lion")
SCHEDULERS = ("cosine", "constant", "linear")


def _run(run_id: int, params: dict, floor: float) -> dict:
    series = [(step, floor + (1.0 - floor) * 0.9 ** step) for step in range(1, 41)]
    return {"id": run_id, "config_id": run_id, "status": "done", "kind": "search", "loss": series,
            "finished_at": None, "params": params}


def _session(rng: random.Random) -> list[dict]:
    runs = []
    for run_id in range(1, rng.randint(4, 12)):
        params = {"optimizer_type": rng.choice(OPTIMIZERS), "learning_rate": 10 ** rng.uniform(-5, -2),
                  "lr_scheduler": rng.choice(SCHEDULERS), "batch_size": rng.choice([1, 2, 4])}
        runs.append(_run(run_id, params, rng.uniform(0.05, 0.5)))
    return runs


def _distances(runs: list[dict]) -> dict[tuple[int, int], float]:
    params = [r["params"] for r in runs]
    matrix = distance_matrix(params, params, varying_keys(params))
    return {(a["id"], b["id"]): float(matrix[i, j]) for i, a in enumerate(runs) for j, b in enumerate(runs)}


def _weights(rng: random.Random) -> dict[str, float]:
    return {"loss": rng.choice([0.5, 1.0, 2.0]), "human": rng.choice([1.0, 2.0, 4.0])}


def test_the_reported_case_one_rating_of_3_leaves_unlike_unrated_runs_where_they_were():
    runs = [_run(1, {"optimizer_type": "AdamW", "learning_rate": 1e-4, "lr_scheduler": "cosine"}, 0.10),
            _run(2, {"optimizer_type": "Adam", "learning_rate": 3e-4, "lr_scheduler": "constant"}, 0.12),
            _run(3, {"optimizer_type": "Lion", "learning_rate": 3e-5, "lr_scheduler": "linear"}, 0.15),
            _run(4, {"optimizer_type": "SGD", "learning_rate": 3e-3, "lr_scheduler": "cosine"}, 0.30)]
    weights = {"loss": 1.0, "human": 2.0}
    before = {i: s.value for i, s in score_runs(runs, (), (), weights).items()}
    after = score_runs(runs, [(4, None, 3.0)], (), weights)
    for run_id in (1, 2, 3):
        assert abs(after[run_id].value - before[run_id]) < BOUND, (run_id, before[run_id], after[run_id].value)
        human = after[run_id].parts["human"]
        assert human.estimated and human.weight < 0.01 and human.full_weight > 0.6  # little evidence, little say
        assert after[run_id].uncertainty > 0.1  # … while a rating could still move it by much
    rated = after[4].parts["human"]
    assert not rated.estimated and np.isclose(rated.weight, 2 / 3)  # the rated run itself carries its 3 fully


def test_one_rating_never_moves_an_unrated_run_far_from_every_rated_config():
    checked = 0
    for seed in range(CASES):
        rng = random.Random(seed)
        runs = _session(rng)
        ids = [r["id"] for r in runs]
        distance = _distances(runs)
        rated = rng.sample(ids, rng.randint(0, len(ids) - 2))
        ratings = [(i, None, float(rng.randint(1, 10))) for i in rated]
        target = rng.choice(ids)
        weights = _weights(rng)
        before = score_runs(runs, ratings, (), weights)
        after = score_runs(runs, ratings + [(target, None, float(rng.randint(1, 10)))], (), weights)
        now_rated = set(rated) | {target}
        for run_id in ids:
            if run_id in now_rated or min(distance[run_id, r] for r in now_rated) < FAR:
                continue
            checked += 1
            moved = abs(after[run_id].value - before[run_id].value)
            assert moved <= BOUND, f"seed {seed}: run {run_id} moved {moved:.3f} on a rating far from it"
    assert checked > 50  # the property was exercised


def test_an_estimate_never_outweighs_the_measured_loss():
    for seed in range(CASES):
        rng = random.Random(seed)
        runs = _session(rng)
        ids = [r["id"] for r in runs]
        ratings = [(i, None, float(rng.randint(1, 10))) for i in rng.sample(ids, rng.randint(1, len(ids) - 1))]
        for score in score_runs(runs, ratings, (), _weights(rng)).values():
            human = score.parts["human"]
            if human.estimated:
                assert human.weight <= score.parts["loss"].weight + 1e-12, f"seed {seed}"


def test_an_unrated_run_with_the_best_loss_is_not_pushed_below_rated_runs_by_an_estimate():
    """Its estimate is a mix of the ratings it rests on (never worse than the worst of them) and
    weighs no more than a rating would: so a rated run that is worse on every measured count — a
    loss part no better, the worst rating given, and that rating no better than the unrated run's
    loss part — never ranks above it. (Before: the estimate was pulled toward a 5.5 nobody gave,
    so with ratings of 8 and 9 the best-loss run fell below the run rated 8.)"""
    checked = 0
    for seed in range(CASES * 2):
        rng = random.Random(seed)
        runs = _session(rng)
        ids = [r["id"] for r in runs]
        rated = rng.sample(ids, rng.randint(1, len(ids) - 1))
        low = rng.choice([1, 6])  # sessions whose ratings are all good, and mixed ones
        ratings = [(i, None, float(rng.randint(low, 10))) for i in rated]
        scores = score_runs(runs, ratings, (), _weights(rng))
        unrated = [i for i in ids if i not in rated]
        best = min(unrated, key=lambda i: scores[i].parts["loss"].value)
        if any(scores[i].parts["loss"].value < scores[best].parts["loss"].value for i in ids):
            continue  # a rated run has the best loss
        worst = max(rating_score(v) for _, _, v in ratings)
        for run_id, _, value in ratings:
            human, loss = rating_score(value), scores[run_id].parts["loss"].value
            if human >= worst and human >= scores[best].parts["loss"].value:
                checked += 1
                assert scores[best].value <= scores[run_id].value + 1e-12, \
                    f"seed {seed}: best-loss run {best} fell below run {run_id} rated {value} (loss {loss:.3f})"
    assert checked > 20


def test_many_close_ratings_give_an_estimate_its_say_and_its_value_is_theirs():
    base = {"optimizer_type": "AdamW", "lr_scheduler": "cosine"}
    near = [_run(i, {**base, "learning_rate": 1e-4 * (1 + 0.03 * i)}, 0.2) for i in range(1, 7)]
    target = _run(20, {**base, "learning_rate": 1.1e-4}, 0.2)
    far = _run(21, {"optimizer_type": "SGD", "lr_scheduler": "constant", "learning_rate": 1e-2}, 0.2)
    runs = [*near, target, far]
    scores = score_runs(runs, [(r["id"], None, 9.0) for r in near], (), {"loss": 1.0, "human": 2.0})
    human = scores[20].parts["human"]
    assert np.isclose(human.value, rating_score(9.0))  # no pull toward a 5.5 nobody gave
    assert np.isclose(human.weight, scores[20].parts["loss"].weight)  # capped at the loss's weight
    assert scores[21].parts["human"].weight < 1e-3
