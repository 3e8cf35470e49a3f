"""What the sampler sees once a person judged runs: their verdict, and predictions of it (issue 43, item 9).

Seen on main: the sampler was fed the combined score, in which a rated config kept its loss part
and an unrated config's estimated rating weighed like a real one, so a rater whose taste differs
from the loss did not steer the search (rated ÷ unrated trials 0.78–1.04). The rules below are
checked through the real scoring (``score_runs``: loss judge, human judge, estimates from similar
configs) on seeded random sessions (hypothesis is not installed), and once through a real demo
session's scoreboard (what the controller reads).
"""

from __future__ import annotations

import random

import pytest

from bracket.judge.human import rating_score
from bracket.search.rated_focus import FocusRule, ratings_disagree
from bracket.session.scoring import score_runs
from bracket.session.scoring.run_scores import config_values
from bracket.session.scoring.sampler_values import config_measured, sampler_values

CASES = 120
OPTIMIZERS = ("AdamW", "Adam", "Lion")
WEIGHTS = {"loss": 1.0, "human": 2.0}


def _run(run_id: int, config_id: int, params: dict, floor: float, *, diverged: bool = False) -> dict:
    series = ([(step, floor * (1.0 + 0.3 * step)) for step in range(1, 41)] if diverged
              else [(step, floor + (1.0 - floor) * 0.9 ** step) for step in range(1, 41)])
    return {"id": run_id, "config_id": config_id, "status": "done", "kind": "search", "stage": "search",
            "loss": series, "finished_at": None, "params": params, "seed": 1, "max_steps": 40}


def _config(rng: random.Random) -> dict:
    return {"optimizer_type": rng.choice(OPTIMIZERS), "learning_rate": 10 ** rng.uniform(-5, -3),
            "network_dim": rng.choice([4, 8, 16])}


def _session(rng: random.Random) -> tuple[list[dict], dict[int, dict]]:
    params = {cid: _config(rng) for cid in range(1, rng.randint(4, 12))}
    runs = [_run(cid, cid, p, rng.uniform(0.05, 0.5)) for cid, p in params.items()]
    return runs, params


def _rate(rng: random.Random, runs: list[dict]) -> list[dict]:
    chosen = rng.sample(runs, rng.randint(1, len(runs) - 1))
    return [{"run_id": r["id"], "prompt_index": None, "value": float(rng.randint(1, 10))} for r in chosen]


def test_without_a_rating_the_sampler_sees_the_combined_score():
    rng = random.Random(1)
    for _ in range(30):
        runs, params = _session(rng)
        scores = score_runs(runs, (), (), WEIGHTS)
        assert sampler_values(runs, scores, params) == config_values(runs, scores)


def test_the_measured_score_a_rule_compares_the_verdicts_with_does_not_move_with_a_rating():
    rng = random.Random(3)
    for _ in range(30):
        runs, params = _session(rng)
        unrated = config_measured(runs, score_runs(runs, (), (), WEIGHTS))
        assert unrated == pytest.approx(config_values(runs, score_runs(runs, (), (), WEIGHTS)))
        assert config_measured(runs, score_runs(runs, _rate(rng, runs), (), WEIGHTS)) == pytest.approx(unrated)


def test_a_rated_config_is_seen_at_its_verdict_and_an_estimate_never_beats_the_best_verdict():
    """Property: a rated config's value is its rating's score alone (whatever its loss); an unrated
    config's value lies within the verdicts the person gave (it never looks better than the best
    rated config, nor worse than the worst), however its loss compares."""
    rng = random.Random(7)
    for _ in range(CASES):
        runs, params = _session(rng)
        ratings = _rate(rng, runs)
        values = sampler_values(runs, score_runs(runs, ratings, (), WEIGHTS), params)
        verdicts = {r["run_id"]: rating_score(r["value"]) for r in ratings}
        for cid, value in values.items():
            if cid in verdicts:
                assert value == pytest.approx(verdicts[cid])
            else:
                assert min(verdicts.values()) - 1e-9 <= value <= max(verdicts.values()) + 1e-9


def _two_rated_and_a_stranger(best_rated_on_loss: int) -> tuple[list[dict], dict[int, dict], list[dict]]:
    """Configs 1 (lowest loss) and 2 (highest loss) rated, 1 given ``best_rated_on_loss`` and 2 the
    other end; config 3, unlike both (another optimizer, far rate), has a loss near config 1's."""
    params = {1: {"optimizer_type": "AdamW", "learning_rate": 1e-4, "network_dim": 8},
              2: {"optimizer_type": "AdamW", "learning_rate": 1e-5, "network_dim": 8},
              3: {"optimizer_type": "Lion", "learning_rate": 1e-3, "network_dim": 16},
              4: {"optimizer_type": "Adam", "learning_rate": 3e-3, "network_dim": 4}}
    runs = [_run(1, 1, params[1], 0.10), _run(2, 2, params[2], 0.40), _run(3, 3, params[3], 0.11),
            _run(4, 4, params[4], 0.30)]
    low, high = (10.0, 2.0) if best_rated_on_loss else (2.0, 10.0)
    ratings = [{"run_id": 1, "prompt_index": None, "value": low}, {"run_id": 2, "prompt_index": None, "value": high}]
    return runs, params, ratings


def test_where_the_ratings_go_against_the_loss_a_good_loss_does_not_lift_an_unrated_config():
    """Table: the person rated the lowest-loss config 2 and the highest-loss one 10. The combined
    score still puts the unrated config with a loss as low as the 2's at the top; the sampler sees
    the 10 first and the stranger no better than the mean of what was rated."""
    runs, params, ratings = _two_rated_and_a_stranger(best_rated_on_loss=False)
    scores = score_runs(runs, ratings, (), WEIGHTS)
    combined = config_values(runs, scores)
    assert min(combined, key=combined.get) == 3  # what the sampler saw before
    values = sampler_values(runs, scores, params)
    assert min(values, key=values.get) == 2
    assert values[3] >= (rating_score(2.0) + rating_score(10.0)) / 2 - 1e-9


def test_where_the_ratings_follow_the_loss_a_good_loss_predicts_a_good_rating():
    runs, params, ratings = _two_rated_and_a_stranger(best_rated_on_loss=True)
    values = sampler_values(runs, score_runs(runs, ratings, (), WEIGHTS), params)
    assert values[1] == pytest.approx(0.0) and values[2] == pytest.approx(rating_score(2.0))
    mean = (values[1] + values[2]) / 2
    assert values[3] < mean < values[4] <= values[2]  # the low-loss stranger predicted well, the other badly


def test_an_unrated_config_next_to_a_rated_one_takes_its_verdict():
    params = {1: {"optimizer_type": "AdamW", "learning_rate": 1e-4, "network_dim": 8},
              2: {"optimizer_type": "Lion", "learning_rate": 1e-3, "network_dim": 16},
              3: {"optimizer_type": "AdamW", "learning_rate": 1.05e-4, "network_dim": 8}}
    runs = [_run(1, 1, params[1], 0.40), _run(2, 2, params[2], 0.10), _run(3, 3, params[3], 0.05)]
    ratings = [{"run_id": 1, "prompt_index": None, "value": 10.0}, {"run_id": 2, "prompt_index": None, "value": 3.0}]
    values = sampler_values(runs, score_runs(runs, ratings, (), WEIGHTS), params)
    assert values[3] < rating_score(3.0) / 3  # the mean verdict is 0.39: the 10 next to it pulls it down
    far = {**params, 3: {"optimizer_type": "Adam", "learning_rate": 3e-3, "network_dim": 4}}
    runs[2] = _run(3, 3, far[3], 0.05)
    assert sampler_values(runs, score_runs(runs, ratings, (), WEIGHTS), far)[3] > values[3] + 0.1


def test_a_disqualified_config_stays_the_worst():
    params = {1: {"optimizer_type": "AdamW", "learning_rate": 1e-4}, 2: {"optimizer_type": "AdamW",
                                                                          "learning_rate": 1e-2}}
    runs = [_run(1, 1, params[1], 0.2), _run(2, 2, params[2], 0.2, diverged=True)]
    scores = score_runs(runs, [{"run_id": 1, "prompt_index": None, "value": 1.0}], (), WEIGHTS)
    values = sampler_values(runs, scores, params)
    assert scores[2].disqualified and values[2] == 1.0 and values[1] == pytest.approx(1.0)


def test_the_scoreboard_feeds_the_sampler_the_verdicts(demo_fields, runs_dir):
    """Through a real demo session: what the controller reads (``Session.scored_configs``) is the
    verdict for the rated configs, the person's order among them, and not the combined score."""
    from bracket.session import SearchSettings, Session

    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=4, steps=10, seeds=1, sample_prompts=""),
                             out_dir=runs_dir)
    try:
        assert session.run() == "finished"
        runs = sorted((r for r in session.snapshot().runs if r["status"] == "done"), key=lambda r: r["score"])
        best, worst = runs[0], runs[-1]
        session.add_rating(best["id"], 2)
        session.add_rating(worst["id"], 9)
        seen = {c.params["learning_rate"]: c for c in session.scored_configs()}
        assert seen[worst["params"]["learning_rate"]].value == pytest.approx(rating_score(9))
        assert seen[best["params"]["learning_rate"]].value == pytest.approx(rating_score(2))
        assert all(c.value >= rating_score(9) - 1e-9 for c in seen.values() if c.value is not None)
        # the measured score beside the verdict keeps the loss's order: the ratings disagree with it
        assert seen[best["params"]["learning_rate"]].measured < seen[worst["params"]["learning_rate"]].measured
        assert ratings_disagree(session.scored_configs(), FocusRule(min_rated=2))
    finally:
        session.close()
