""""Next unrated" reads the search as the sampler does once a run is judged (issue 43, item 9).

Seen on main: "Next unrated" ranked the unrated runs by the combined score, so after the person
rated against the loss it still offered the loss favourites first — runs whose predicted verdict
is far from anything they rated well — and left unrated a config next to the one they rated 10.
Now TPE's good set is cut on what the sampler sees (the person's verdicts and the predictions of
them with their spread, ``sampler_values.taste_readings``): an unrated run near its edge, and
unsure, is worth a rating; the pick's part stays on the standings' scores.
Through the real scoring and standings on plain rows.
"""

from __future__ import annotations

import math
import random

from bracket.app.rating_queue import rate_next
from bracket.judge.informative import Candidate, with_readings
from bracket.session.scoring import score_runs
from bracket.session.scoring.sampler_values import ONE_POINT, Reading, taste_readings
from bracket.standings import build_standings

WEIGHTS = {"loss": 1.0, "human": 2.0}


def _session(params: dict[int, dict], floors: dict[int, float]) -> tuple[list[dict], list[dict]]:
    configs = [{"id": cid, "name": f"search-{cid}", "stage": "search", "kind": "search", "trial_number": cid - 1,
                "status": "done", "params": p} for cid, p in params.items()]
    runs = [{"id": cid, "config_id": cid, "stage": "search", "kind": "search", "status": "done", "seed": 1,
             "max_steps": 40, "params": params[cid], "finished_at": None,
             "loss": [(s, floors[cid] + (1.0 - floors[cid]) * 0.9 ** s) for s in range(1, 41)]} for cid in params]
    return configs, runs


def _offer(params, floors, ratings, *, readings: bool = True) -> list[int]:
    configs, runs = _session(params, floors)
    scores = score_runs(runs, ratings, (), WEIGHTS)
    table = build_standings(runs, configs, scores, ratings, (), human_weight=WEIGHTS["human"])
    seen = taste_readings(runs, scores, params) if readings else None
    return rate_next(table, {r["id"] for r in runs}, 4, seen)[0]


PARAMS = {1: {"optimizer_type": "AdamW", "learning_rate": 1e-4, "network_dim": 8},
          2: {"optimizer_type": "AdamW", "learning_rate": 1e-5, "network_dim": 8},
          3: {"optimizer_type": "AdamW", "learning_rate": 1.1e-5, "network_dim": 8},
          4: {"optimizer_type": "Lion", "learning_rate": 1e-3, "network_dim": 16},
          5: {"optimizer_type": "Adam", "learning_rate": 3e-3, "network_dim": 4}}
FLOORS = {1: 0.10, 2: 0.40, 3: 0.42, 4: 0.11, 5: 0.12}


WIDER = {**PARAMS, 6: {"optimizer_type": "AdamW", "learning_rate": 2e-5, "network_dim": 16},
         7: {"optimizer_type": "Lion", "learning_rate": 3e-4, "network_dim": 4},
         8: {"optimizer_type": "Adam", "learning_rate": 1e-4, "network_dim": 16}}
WIDER_FLOORS = {**FLOORS, 6: 0.35, 7: 0.20, 8: 0.30}


def test_after_ratings_against_the_loss_the_run_next_to_the_best_rated_moves_up():
    """Table: eight configs, the person rated against the loss (the lowest loss 2, the highest 10,
    a high one 9, a middling one 3). Config 3 sits next to the 10: the sampler predicts it close to
    the edge of the configs TPE builds on, unsure — its rating decides what TPE builds on, where
    the combined score (a high loss) put it last; it now comes before config 8, which the loss
    alone placed above it."""
    ratings = [{"run_id": cid, "prompt_index": None, "value": value}
               for cid, value in ((1, 2.0), (2, 10.0), (6, 9.0), (7, 3.0))]
    before = _offer(WIDER, WIDER_FLOORS, ratings, readings=False)  # what "Next unrated" offered before
    after = _offer(WIDER, WIDER_FLOORS, ratings)
    assert before[-1] == 3 and after.index(3) < after.index(8)


def test_where_the_ratings_follow_the_loss_the_loss_favourite_is_offered():
    """The same five configs with the ratings turned round (the lowest loss rated 10): the unrated
    configs with a loss as low as the 10's come first; the one next to the 2 comes last."""
    ratings = [{"run_id": 1, "prompt_index": None, "value": 10.0}, {"run_id": 2, "prompt_index": None, "value": 2.0}]
    offered = _offer(PARAMS, FLOORS, ratings)
    assert set(offered[:2]) == {4, 5} and offered[-1] == 3


def test_readings_apply_only_once_judged_and_to_every_search_candidate():
    plain = [Candidate(1, 1, 0.2, 0.1), Candidate(2, 2, 0.3, 0.1, rated=True), Candidate(3, 3, 0.5, 0.1, stage="final")]
    unjudged = {1: Reading(0.2), 2: Reading(0.3)}
    assert with_readings(plain, unjudged) == plain  # nobody judged: the combined score stays
    partial = {2: Reading(0.0, ONE_POINT, True)}
    assert with_readings(plain, partial) == plain  # config 1 has no reading (paused at a rung): one scale or none
    judged = {1: Reading(0.4, 0.2), 2: Reading(0.0, ONE_POINT, True)}
    read = {c.run_id: c for c in with_readings(plain, judged)}
    assert (read[1].score, read[1].uncertainty) == (0.4, 0.2) and read[2].score == 0.0
    assert read[3] == plain[2]  # a final run is not the sampler's


def test_a_prediction_is_never_surer_than_a_rating():
    """Property, on seeded random sessions: a rated config's spread is one rating point; an
    unrated config's lies between one point and half the scale (the fit misses the verdicts by
    no more than their own spread)."""
    rng = random.Random(5)
    for _ in range(40):
        params = {cid: {"optimizer_type": rng.choice(("AdamW", "Lion")), "learning_rate": 10 ** rng.uniform(-5, -3),
                        "network_dim": rng.choice((4, 8, 16))} for cid in range(1, rng.randint(4, 10))}
        configs, runs = _session(params, {cid: rng.uniform(0.05, 0.5) for cid in params})
        rated = rng.sample(sorted(params), rng.randint(1, len(params) - 1))
        ratings = [{"run_id": cid, "prompt_index": None, "value": float(rng.randint(1, 10))} for cid in rated]
        readings = taste_readings(runs, score_runs(runs, ratings, (), WEIGHTS), params)
        for cid, reading in readings.items():
            if cid in rated:
                assert reading.judged and math.isclose(reading.spread, ONE_POINT)
            else:
                assert not reading.judged and ONE_POINT - 1e-9 <= reading.spread <= 0.5
