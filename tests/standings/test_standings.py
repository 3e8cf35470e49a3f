"""The standings rules on plain records: stages apart, the winner, flags, raw figures, estimated parts."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from bracket.session.scoring import RunScore
from bracket.standings import UNRATED_WINNER, NoWinnerError, build_standings, require_winner


def _config(cid, name, stage="search", trial=None, kind="search"):
    return {"id": cid, "name": name, "stage": stage, "kind": kind, "trial_number": cid if trial is None else trial,
            "params": {"learning_rate": 1e-4 * cid}}


def _run(rid, cid, stage="search", seed=42, steps=10, status="done"):
    return {"id": rid, "config_id": cid, "stage": stage, "kind": "search", "seed": seed, "max_steps": steps,
            "status": status}


def _score(value, loss=0.5, rating=None, disqualified=False):
    details = {"loss": {"final_ema": loss}}
    judges = {"loss": value, "human": None}
    used, weights = ["loss"], {"loss": 1.0}
    if rating is not None:
        details["human"] = {"mean_rating": rating, "ratings": 1}
        judges["human"] = (10 - rating) / 9
        used, weights = ["loss", "human"], {"loss": 1 / 3, "human": 2 / 3}
    return RunScore(value=value, judges=judges, used=used, weights_used=weights, disqualified=disqualified,
                    details=details)


CONFIGS = [_config(1, "a"), _config(2, "b"), _config(3, "a", stage="final", trial=1),
           _config(4, "b", stage="final", trial=2)]
RUNS = [_run(1, 1), _run(2, 1, seed=43), _run(3, 2), _run(4, 2, seed=43),
        _run(5, 3, "final", 1042, 40), _run(6, 3, "final", 1043, 40), _run(7, 4, "final", 1042, 40)]
SCORES = {1: _score(0.1, 0.20), 2: _score(0.2, 0.25), 3: _score(0.5, 0.4), 4: _score(0.6, 0.45),
          5: _score(0.7, 0.31), 6: _score(0.9, 0.33), 7: _score(0.3, 0.29)}


def test_stages_are_ranked_apart_and_the_finals_decide_the_winner_at_their_own_steps():
    table = build_standings(RUNS, CONFIGS, SCORES)
    assert list(table.boards) == ["final", "search"]
    search, final = table.boards["search"], table.boards["final"]
    assert [r.name for r in search.rows] == ["a", "b"] and [r.rank for r in search.rows] == [1, 2]
    assert [r.name for r in final.rows] == ["b", "a"], "b wins the finals though it lost the search"
    assert {r.run_id for row in search.rows for r in row.runs} == {1, 2, 3, 4}
    assert abs(final.rows[1].mean - 0.8) < 1e-12  # the finals' own runs only, never mixed with search ones
    winner = table.winner
    assert (winner.stage, winner.config_name, winner.run_id, winner.steps, winner.seeds) == ("final", "b", 7, 40,
                                                                                          [1042])
    assert winner.judges == ["loss"] and winner.step is None and not winner.rated
    assert [r.name for r in table.top("search", 1)] == ["a"]
    # without finals the search decides, at the search's step count
    search_only = build_standings(RUNS[:4], CONFIGS[:2], SCORES)
    assert (search_only.winner.stage, search_only.winner.run_id, search_only.winner.steps) == ("search", 1, 10)
    assert search_only.winner.seeds == [42, 43]


def test_the_raw_figure_stands_beside_each_score():
    table = build_standings(RUNS, CONFIGS, SCORES)
    row = table.boards["search"].rows[0]
    assert row.figures == {"loss": pytest.approx(0.225)} and row.raw_text == "loss 0.225"
    rated = build_standings(RUNS[:4], CONFIGS[:2], {**SCORES, 1: _score(0.1, 0.2, rating=8)})
    run = rated.boards["search"].rows[0].runs[0]
    assert [p.judge for p in run.parts] == ["loss", "human"]
    assert run.parts[1].figures == {"rating": 8.0} and run.parts[1].raw == 8.0
    assert "rating 8.0" in rated.boards["search"].rows[0].raw_text


def test_a_validation_loss_score_shows_the_validation_loss_first():
    """Seen in review: finals ranked a run with training loss 0.1416 above one with 0.1246, because
    the score rests on the validation loss (0.0801 vs 0.0828) that no figure showed."""
    scores = {rid: RunScore(value=v, judges={"loss": v}, used=["loss"], weights_used={"loss": 1.0},
                            details={"loss": {"final_ema": ema, "final_validation": val, "basis": "validation"}})
              for rid, v, ema, val in ((5, 0.0, 0.1416, 0.0801), (6, 0.02, 0.1246, 0.0828))}
    table = build_standings(RUNS[4:6], CONFIGS[2:3], scores)
    runs = {r.run_id: r for r in table.boards["final"].rows[0].runs}
    assert runs[5].parts[0].figures == {"val loss": 0.0801, "loss": 0.1416} and runs[5].parts[0].raw == 0.0801
    assert table.boards["final"].rows[0].raw_text.startswith("val loss 0.08145 · loss 0.1331")


def test_an_unrated_winner_is_flagged_only_when_people_weigh_in():
    ratings = [{"run_id": 3, "value": 9}]
    flagged = build_standings(RUNS, CONFIGS, SCORES, ratings, human_weight=2.0)
    assert flagged.humans_weigh_in and flagged.unrated_winner and UNRATED_WINNER in flagged.warnings
    assert flagged.to_dict()["winner"]["rated"] is False
    assert not build_standings(RUNS, CONFIGS, SCORES, ratings, human_weight=0.0).warnings  # humans weigh nothing
    assert not build_standings(RUNS, CONFIGS, SCORES, (), human_weight=2.0).warnings  # nobody rated anything
    rated = build_standings(RUNS, CONFIGS, SCORES, [{"run_id": 7, "value": 9}], human_weight=2.0)
    assert rated.winner.rated and not rated.warnings


def test_estimated_parts_flow_through_to_rows_winner_and_json():
    estimated = SimpleNamespace(**vars(_score(0.3, 0.29)))
    estimated.used, estimated.weights_used = ["loss", "human"], {"loss": 0.5, "human": 0.5}
    estimated.parts = {"loss": {"value": 0.2, "raw": 0.29, "estimated": False},
                       "human": {"value": 0.4, "raw": None, "estimated": True, "uncertainty": 0.15}}
    table = build_standings(RUNS, CONFIGS, {**SCORES, 7: estimated})
    row = table.boards["final"].rows[0]
    # the estimate itself, on the rating scale (score 0.4 = rating 10 - 0.4 × 9)
    assert row.estimated == ["human"] and "human ≈ rating 6.4 (est.)" in row.raw_text
    assert table.winner.judges == ["loss"] and table.winner.estimated == ["human"]
    part = json.loads(json.dumps(table.to_dict()))["stages"]["final"]["rows"][0]["runs"][0]["parts"][1]
    assert part == {"judge": "human", "value": 0.4, "weight": 0.5, "raw": None, "figures": {}, "estimated": True,
                    "uncertainty": 0.15, "evidence": 1.0}


def test_a_missing_or_disqualified_winner_is_refused():
    nothing = build_standings([_run(1, 1, status="failed")], CONFIGS[:1], {})
    assert nothing.winner is None
    with pytest.raises(NoWinnerError, match="no winner"):
        require_winner(None, nothing)
    broken = build_standings([_run(1, 1, status="disqualified")], CONFIGS[:1],
                             {1: _score(1.0, disqualified=True)})
    assert broken.winner.disqualified and broken.warnings
    with pytest.raises(NoWinnerError, match="disqualified"):
        require_winner(None, broken)


def test_parts_given_as_a_list_of_objects_are_read_too():
    from bracket.standings import score_parts

    score = SimpleNamespace(judges={"loss": 0.2}, details={"loss": {"final_ema": 0.3}}, weights_used={"loss": 0.4,
                            "human": 0.6}, parts=[SimpleNamespace(judge="loss", value=0.2, raw=0.3, estimated=False),
                                                  SimpleNamespace(judge="human", value=0.5, raw=None, estimated=True,
                                                                  uncertainty=0.2)])
    parts = score_parts(score)
    assert [(p.judge, p.value, p.estimated, p.uncertainty) for p in parts] == [("loss", 0.2, False, None),
                                                                             ("human", 0.5, True, 0.2)]
    assert parts[0].figures == {"loss": 0.3} and parts[1].weight == 0.6


def test_a_rated_search_never_declares_an_unrated_winner_silently():
    """Random sessions scored by the real judges: whenever people rated something, the winner is
    either rated or flagged, in the standings and in their JSON."""
    import random

    from bracket.session.scoring import score_runs

    rng = random.Random(17)
    for _ in range(25):
        n = rng.randint(2, 6)
        configs = [_config(i, f"c{i}") for i in range(1, n + 1)]
        runs = [dict(_run(i, i), loss=[(s, rng.uniform(0.2, 1.0) * (1 - s / 40)) for s in range(1, 21)],
                     finished_at=1.0) for i in range(1, n + 1)]
        ratings = [{"run_id": i, "value": rng.randint(1, 10), "prompt_index": None}
                   for i in rng.sample(range(1, n + 1), rng.randint(0, n))]
        scores = score_runs(runs, ratings, (), {"loss": 1.0, "human": 2.0})
        table = build_standings(runs, configs, scores, ratings, human_weight=2.0)
        rated = {r["run_id"] for r in ratings}
        assert table.winner.rated == (table.winner.run_id in rated)
        if ratings and table.winner.run_id not in rated:
            assert UNRATED_WINNER in table.to_dict()["warnings"]
        else:
            assert UNRATED_WINNER not in table.warnings


def test_the_verdict_sentence_names_the_step_as_the_winner_line_does():
    """Seen in review: the verdict read "Best config is 'b' (score 0.300, 1 seed)" and only the
    Winner line below it said at which step; the answer is the config *at* a step count."""
    from bracket.session.scoring import StepCurve

    table = build_standings(RUNS, CONFIGS, SCORES)
    # the verdict says each config by its headline (bracket.standings.headline), as every screen
    assert table.verdict.startswith("Best config is 'b' at 40 steps (training loss 0.29; 1 seed)")
    assert table.boards["search"].verdict.startswith("Best config is 'a' at 10 steps (training loss 0.225; 2 seeds")
    early = {"search": {1: StepCurve(1, [5, 10], [0.05, 0.1], 5, 10, "validation")}}
    search_only = build_standings(RUNS[:4], CONFIGS[:2], SCORES, curves=early)
    assert search_only.winner.step == 5
    assert search_only.verdict.startswith("Best config is 'a' at step 5 of 10 (training loss 0.225")
    assert search_only.to_dict()["verdict"] == search_only.verdict
