"""The rating ceiling on hand-built sessions whose answer follows from their construction."""

from __future__ import annotations

import json
import math
import random

from bench import rater_ceiling
from bench.rater_ceiling import pick_ceiling, trials_needed


def record(ratios, *, taste="hand", mode="rated", repetition=0, picked=0, fixed=0, budget=None):
    """A session that trained configs at these taste ratios (the first ``fixed`` from the warm start)."""
    trials = [{"kind": "curated" if i < fixed else "search", "params": {"learning_rate": 1e-4 * (i + 1)},
               "taste": r, "picked": i == picked} for i, r in enumerate(ratios)]
    return {"taste": taste, "mode": mode, "repetition": repetition, "budget": budget or len(ratios),
            "trials": trials}


def test_a_clear_best_is_always_picked_and_nothing_beats_what_was_trained():
    cell = pick_ceiling([record([1.5, 1.0], picked=0)], draws=50, noise=0.0)["hand"]["rated"]
    assert cell["oracle"] == 1.0 and cell["ships"] == 0.0
    assert all(cell[rule] == 1.0 for rule in rater_ceiling.rules(0.0))
    missed = pick_ceiling([record([1.3, 1.2, 1.06])], draws=50)["hand"]["rated"]
    assert missed["oracle"] == 0.0 and all(missed[rule] == 0.0 for rule in rater_ceiling.rules())


def test_a_rounding_tie_is_a_coin_flip_that_a_pairwise_choice_tilts_by_its_logistic_odds():
    # 1.04 is within 5 %, 1.07 is not; noise-free both round to a 9 (9.28 and 8.74)
    cell = pick_ceiling([record([1.04, 1.07, 1.6])], draws=4000, noise=0.0)["hand"]["rated"]
    assert cell["oracle"] == 1.0
    assert abs(cell["one_rating"] - 0.5) < 0.04
    assert abs(cell["two_ratings"] - 0.5) < 0.04  # without noise a second rating repeats the first
    assert cell["tied_leaders"] == 2.0
    # one blind choice picks the better of the two with 1 / (1 + exp(-0.03 / 0.1))
    assert abs(cell["pairwise_for_leaders"] - 1 / (1 + math.exp(-0.3))) < 0.04
    assert cell["pairwise_best_of_3"] > cell["pairwise_for_leaders"] + 0.02


def test_noise_lets_repeated_ratings_beat_one():
    sessions = [record([1.045, 1.075, 1.3], repetition=i) for i in range(4)]
    cell = pick_ceiling(sessions, draws=1500, noise=0.6)["hand"]["rated"]
    assert cell["two_ratings"] > cell["one_rating"] + 0.03


def test_the_speed_goal_needs_a_hit_by_half_the_controls_trials():
    control = [record([1.3] * 9 + [1.0], mode="control", fixed=3, repetition=i) for i in range(3)]
    rated = [record([1.3] * 3 + [1.0] + [1.3] * 6, fixed=3, repetition=0),
             record([1.3] * 7 + [1.0] + [1.3] * 2, fixed=3, repetition=1),
             record([1.3] * 10, fixed=3, repetition=2)]
    got = trials_needed(control + rated)["hand"]
    assert got["control_median"] == 10 and got["needed_trial"] == 5
    assert got["first_free_trial"] == 4 and got["best_possible_ratio"] == 0.4
    assert got["rated_reached"] == 2 / 3 and got["rated_by_needed"] == 1 / 3
    assert got["hit_in_warm_start"] == 0.0


def test_the_command_reads_records_and_refuses_a_missing_file(tmp_path, capsys):
    path = tmp_path / "steering.records.jsonl"
    sessions = (record([1.0, 1.5], mode="control"), record([1.0, 1.5]))
    path.write_text("\n".join(json.dumps(r) for r in sessions))
    assert rater_ceiling.main([str(path), "--draws", "20", "--json", str(tmp_path / "c.json")]) == 0
    assert "| hand | rated | 1 | 100% |" in capsys.readouterr().out
    assert json.loads((tmp_path / "c.json").read_text())["picks"]["hand"]["rated"]["oracle"] == 1.0
    assert rater_ceiling.main([str(tmp_path / "nope.jsonl")]) == 2
    assert capsys.readouterr().err.startswith("error:")


def test_the_ratings_given_pick_the_best_mean_with_ties_at_random_or_by_the_loss():
    tied = record([1.04, 1.07, 1.6])
    for trial, given in zip(tied["trials"], ([9.0], [9.0], [3.0])):
        trial["ratings"] = given
    cell = pick_ceiling([tied], draws=4000)["hand"]["rated"]
    assert abs(cell["given_ratings"] - 0.5) < 0.04
    assert rater_ceiling.pick_given([[9.0], [9.0, 10.0], []], random.Random(0)) == 1
    assert rater_ceiling.pick_given([[9.0], [9.0], [3.0]], random.Random(0), losses=[2.0, 1.0, 0.5]) == 1
    assert rater_ceiling.pick_given([[], []], random.Random(0)) is None
    assert "given_ratings" not in pick_ceiling([record([1.0, 1.5])], draws=10)["hand"]["rated"]
