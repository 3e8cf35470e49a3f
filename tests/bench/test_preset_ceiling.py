"""What the simulated rater's judgements allow at best over the sdxl-lora steering sessions
(``bench/preset_ceiling.py``), and the tie at the top settled by blind choices after the last
trial (``bench/preset_steering.py``'s ``settled`` picks)."""

from __future__ import annotations

import random

from bench.preset_ceiling import PERCEIVED, ceiling, consistent_choice, session_ceiling
from bench.preset_closing import CHOICES
from bench.preset_steering import run_session, summarise
from bench.raters import chooses_left


def _record(tastes: list[float], given: dict[int, float], pick: float | None, optimum: float = 1.0) -> dict:
    return {"mode": "rated", "tastes": tastes, "taste_optimum": optimum, "given": {str(k): v for k, v in given.items()},
            "pick": pick}


def test_a_tie_at_the_top_is_laid_on_the_ratings_and_a_perfect_tie_break_finds_the_best():
    # configs 1 and 2 rated 9 alike; only config 2 is within 5 % of the best tried (config 4, never rated)
    tastes = [1.10, 1.03, 1.20, 1.00]
    found = session_ceiling(_record(tastes, {1: 9, 2: 9, 3: 7}, pick=1.10), draws=200)
    assert found["ships"] == 0.0 and found["best_rated"] == 1.0 and found["tied_at_top"] == 2.0
    assert found["given_ties_perfect"] == 1.0 and found["given_ties_random"] == 0.5
    # a choice as reliable as the rating's perception beats the bench's logistic choice on a 7 % gap
    assert found["given_ties_pairs_consistent"] > found["given_ties_pairs"] > 0.5


def test_a_best_config_never_rated_caps_every_rule_on_the_given_ratings():
    tastes = [1.20, 1.15, 1.00]
    found = session_ceiling(_record(tastes, {1: 8, 2: 8}, pick=1.15), draws=50)
    assert found["best_rated"] == 0.0
    assert max(found[k] for k in found if k.startswith("given_")) == 0.0
    assert found["all_rated_once"] > 0.0  # rating all three would have found it at times


def test_the_consistent_choice_is_as_reliable_as_the_perception_behind_a_rating():
    rng = random.Random(3)
    n = 20000
    consistent = sum(consistent_choice(1.00, 1.05, rng) for _ in range(n)) / n
    bench = sum(chooses_left(1.00, 1.05, rng) for _ in range(n)) / n
    assert abs(PERCEIVED - 0.6 * 0.5 / 9) < 1e-12
    assert 0.84 < consistent < 0.88 and 0.60 < bench < 0.64


def test_counts_over_sessions():
    records = [_record([1.0, 1.2], {1: 10}, pick=1.0), _record([1.0, 1.2], {2: 9}, pick=1.2),
               {"mode": "control", "tastes": [1.0], "taste_optimum": 1.0, "given": {}, "pick": 1.0}]
    found = ceiling(records, draws=20)
    assert found["sessions"] == 2 and found["ships"] == 1 and found["best_rated"] == 1


def test_a_rated_session_records_its_pick_after_the_tie_at_the_top_is_settled():
    record = run_session("bolder", "rated", 0, 8)
    assert set(record["settled"]) == set(CHOICES)
    for kind in CHOICES:
        settled = record["settled"][kind]
        assert settled["pick"] is None or settled["pick"] >= 1.0
        assert 0 <= settled["choices"] <= 5
        # no choice made: the pick is the session's own
        if settled["choices"] == 0:
            assert settled["pick"] == record["pick"]
    # one more look at "Next unrated" after the last trial: the pick then, on the same scale
    assert record["closing"] is None or record["closing"] >= 1.0
    summary = summarise([record])
    wanted = {f"settled_{kind}_within_5pct" for kind in CHOICES} | {"closing_within_5pct"}
    assert wanted <= set(summary["bolder"]["rated"])


def test_blind_choices_as_reliable_as_a_rating_are_a_rater_option_and_leave_the_control_alone():
    bench = run_session("bolder", "rated", 0, 8)
    consistent = run_session("bolder", "rated", 0, 8, choice="consistent")
    assert consistent["choice"] == "consistent" and bench["choice"] == "bench"
    control = [run_session("bolder", "control", 0, 8, choice=c) for c in CHOICES]
    assert control[0]["tastes"] == control[1]["tastes"] and control[0]["pairs"] == 0


def test_settling_asks_the_tie_at_the_top_and_the_choice_decides_the_answer():
    from bench.preset_closing import settle
    from bracket.session.scoring import score_runs
    from bracket.standings import build_standings

    weights = {"loss": 1.0, "human": 2.0}
    floors = {1: 0.20, 2: 0.30, 3: 0.25}
    params = {i: {"optimizer_type": "AdamW", "learning_rate": 1e-4 * 3 ** i, "network_dim": 16} for i in floors}
    runs = [{"id": i, "config_id": i, "status": "done", "kind": "search", "stage": "search", "finished_at": None,
             "loss": [(s, f + (1 - f) * 0.9 ** s) for s in range(1, 41)], "params": params[i], "seed": 1,
             "max_steps": 40} for i, f in floors.items()]
    configs = [{"id": i, "name": f"c{i}", "stage": "search", "kind": "search", "trial_number": i,
                "params": params[i]} for i in floors]
    ratings = [{"run_id": i, "prompt_index": None, "value": v} for i, v in {1: 9.0, 2: 9.0, 3: 5.0}.items()]
    table = build_standings(runs, configs, score_runs(runs, ratings, [], weights), ratings, [], human_weight=2.0)
    assert table.winner.config_id == 1  # the tie goes to the loss while no choice decided it
    liked = {1: 1.4, 2: 1.0, 3: 1.5}.__getitem__  # the rater likes c2 far better
    winner, made = settle(table, runs, configs, ratings, [], liked, weights, "consistent", random.Random(0))
    assert (winner, made) == (2, 1)
    # a tie already decided by a choice between the two is not asked again
    decided = [{"left_run_id": 1, "right_run_id": 2, "winner": "left"}]
    table = build_standings(runs, configs, score_runs(runs, ratings, decided, weights), ratings, decided,
                            human_weight=2.0)
    assert settle(table, runs, configs, ratings, decided, liked, weights, "consistent", random.Random(0)) == (1, 0)
