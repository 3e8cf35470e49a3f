"""The front of fidelity against flexibility, the person's pick on it, and how far each judge
agrees with the person — pure functions on planted records (the image judges' record shape of
``bracket.session.scoring.image_judges``)."""

from __future__ import annotations

import pytest

from bracket.session.scoring import RunScore
from bracket.session.scoring.image_judges import image_scores, scores_at, step_scores
from bracket.standings import build_standings
from bracket.standings.front import beaten_by, build_front, pareto_front
from bracket.standings.trust import (
    Agreement,
    choice_agreement,
    judge_trust,
    rating_agreement,
    wilson,
)


def test_pareto_front_of_a_planted_set():
    # a, b, c trade one axis for the other; d is beaten by b on both; e ties a on x and loses on y
    points = {"a": (0.9, 0.1), "b": (0.6, 0.6), "c": (0.2, 0.95), "d": (0.5, 0.5), "e": (0.9, 0.05),
              "f": (0.6, 0.6)}
    assert pareto_front(points) == ["a", "b", "c", "f"]  # b and f are the same point: neither beats the other
    assert sorted(beaten_by(points, "d")) == ["b", "f"] and beaten_by(points, "e") == ["a"]
    assert pareto_front({}) == [] and pareto_front({"x": (0.0, 0.0)}) == ["x"]


def image_record(per_step: dict[int, tuple[float, float, float]], images: dict | None = None) -> dict:
    return {"image": {"steps": {str(s): {"likeness": v[0], "prompt_following": v[1], "image_quality": v[2],
                                         "n_images": 2} for s, v in per_step.items()},
                      "images": images or {}, "scales": {}}}


def test_the_reader_takes_the_contract_shape():
    run = {"id": 1, "run_dir": "/runs/s/run-1",
           "judges": image_record({10: (0.2, 0.9, 5.0), 20: (0.7, 0.4, 6.0)},
                                  {"output/sample/a_000020_00.png": {"likeness": 0.8, "prompt_following": None,
                                                                     "image_quality": 6.5, "step": 20,
                                                                     "prompt_kind": "in"}})}
    assert step_scores(run) == {10: {"likeness": 0.2, "prompt_following": 0.9, "image_quality": 5.0},
                                20: {"likeness": 0.7, "prompt_following": 0.4, "image_quality": 6.0}}
    assert scores_at(run) == (20, step_scores(run)[20])
    assert scores_at(run, 15)[0] == 10 and scores_at(run, 5)[0] == 10 and scores_at(run, 10)[0] == 10
    assert image_scores(run, "/runs/s/run-1/output/sample/a_000020_00.png") == {"likeness": 0.8,
                                                                               "image_quality": 6.5}
    assert image_scores(run, "/elsewhere/run-1/output/sample/a_000020_00.png")["likeness"] == 0.8
    assert image_scores(run, "/runs/s/run-1/output/sample/b.png") == {}
    assert step_scores({"judges": {"image": {"steps": {"x": {}, "3": {"likeness": float("nan")}}}}}) == {}


def _score(value):
    return RunScore(value=value, judges={"loss": value}, used=["loss"], weights_used={"loss": 1.0},
                    details={"loss": {"final_ema": value}})


#: five configs, one run each; the combined score ranks them c1 < c2 < ... (c1 best); the planted
#: front on (likeness, prompt_following) at step 20 is c2, c3, c4 — c1 (the winner) is beaten by c3
PLANTED = {1: (0.50, 0.50), 2: (0.95, 0.20), 3: (0.70, 0.60), 4: (0.30, 0.90), 5: (0.25, 0.25)}


def planted():
    configs = [{"id": c, "name": f"c{c}", "stage": "search", "kind": "search", "trial_number": c, "params": {}}
               for c in PLANTED]
    runs = [{"id": c, "config_id": c, "stage": "search", "kind": "search", "seed": 42, "max_steps": 20,
             "status": "done", "judges": image_record({20: (*xy, 5.0), 10: (0.0, 0.0, 1.0)})}
            for c, xy in PLANTED.items()]
    table = build_standings(runs, configs, {c: _score(0.1 * c) for c in PLANTED})
    return table, runs


def test_the_front_is_the_planted_one_and_the_winner_is_named_with_why():
    table, runs = planted()
    front = build_front(table.board("search"), {r["id"]: r for r in runs})
    assert [p.name for p in front.on_front] == ["c2", "c3", "c4"]
    assert front.best_id == 1 and front.pick_id is None and front.point(1).beaten_by == ("c3",)
    assert front.point(3).step is None or front.point(3).step == 20
    assert "'c1'" in front.why and "not on the front" in front.why and "c3" in front.why
    data = front.to_dict()
    assert data["front"] == ["c2", "c3", "c4"] and data["winner"] == "c1" and data["answer"] == "c1"


def test_a_pick_on_the_front_becomes_the_winner_and_one_off_it_is_set_aside():
    from bracket.standings import with_judges

    table, runs = planted()
    with_judges(table, runs, [], [], {"loss": 1.0}, pick=4)
    assert table.winner.config_name == "c4" and table.front.pick_id == 4
    assert any("your pick 'c4'" in w for w in table.warnings)
    assert table.to_dict()["front"]["answer"] == "c4" and table.to_dict()["winner"]["config"] == "c4"
    table, runs = planted()
    table.humans_weigh_in, table.warnings = True, []  # people rate: an unrated pick is flagged as the winner was
    with_judges(table, runs, [], [], {"loss": 1.0}, pick=2)
    assert table.winner.config_name == "c2" and table.warnings[0].startswith("the winner has no rating")
    table, runs = planted()
    with_judges(table, runs, [], [], {"loss": 1.0}, pick=5)  # c5 is beaten on both: not an answer
    assert table.winner.config_name == "c1" and table.front.pick_id is None
    assert any("no longer on the front" in w for w in table.warnings)


@pytest.mark.parametrize("references, said", [
    ({"count": 4, "source": "held-out images", "note": "x"}, "against 4 held-out dataset images (never trained on)"),
    ({"count": 5, "source": "training images", "note": "the dataset has 5 images, fewer than 12"},
     "against 5 training images (the dataset has 5 images, fewer than 12)")])
def test_the_front_says_what_likeness_was_measured_against(references, said):
    table, runs = planted()
    assert build_front(table.board("search"), {r["id"]: r for r in runs}).references == ""  # no record says
    for run in runs:
        run["judges"]["image"]["references"] = references
    front = build_front(table.board("search"), {r["id"]: r for r in runs})
    assert said in front.references and front.why.endswith(front.references)
    assert front.to_dict()["references"] == front.references


def test_no_image_scores_no_front():
    from bracket.standings import with_judges

    table, runs = planted()
    for run in runs:
        run["judges"] = {}
    with_judges(table, runs, [], [], {"loss": 1.0}, pick=None)
    assert table.front is None and table.to_dict()["front"] is None


def test_wilson_interval_is_scipys():
    low, high = wilson(7, 10)
    assert low == pytest.approx(0.3968, abs=1e-3) and high == pytest.approx(0.8922, abs=1e-3)


@pytest.mark.parametrize(("winners", "expected"), [
    (["left"] * 10, (10, 10)),            # the judge (left better) agrees with every choice
    (["right"] * 10, (0, 10)),            # and with none
    (["left"] * 5 + ["right"] * 5, (5, 10)),
    (["tie"] * 4 + ["left"], (1, 1)),     # ties are not choices
])
def test_choice_agreement_table(winners, expected):
    goodness = {1: 0.9, 2: 0.1}
    result = choice_agreement(goodness, [{"left_run_id": 1, "right_run_id": 2, "winner": w} for w in winners])
    assert (result.agree, result.n) == expected
    assert result.low <= result.share <= result.high


def test_choice_agreement_skips_unscored_tied_and_cross_stage_pairs():
    comparisons = [{"left_run_id": 1, "right_run_id": 2, "winner": "left"},
                   {"left_run_id": 1, "right_run_id": 3, "winner": "left"},   # 3 unscored
                   {"left_run_id": 2, "right_run_id": 4, "winner": "left"},   # judged alike
                   {"left_run_id": 1, "right_run_id": 5, "winner": "right"}]  # another stage
    goodness = {1: 0.9, 2: 0.1, 4: 0.1, 5: 0.95}
    assert choice_agreement(goodness, comparisons, {1: "search", 2: "search", 4: "search", 5: "final"}).n == 1
    assert choice_agreement(goodness, comparisons).n == 2
    assert choice_agreement({}, comparisons) == Agreement()


def test_rating_agreement_orders_pairs_and_bootstraps_over_runs():
    rating = {1: 9, 2: 7, 3: 5, 4: 3, 5: 1}
    same = rating_agreement({r: float(v) for r, v in rating.items()}, rating)
    assert (same.agree, same.n, same.method) == (10, 10, "bootstrap over rated runs and Wilson")
    assert same.low == pytest.approx(wilson(10, 10)[0]) and same.high == 1.0  # never 100 %–100 %
    reverse = rating_agreement({r: -float(v) for r, v in rating.items()}, rating)
    assert (reverse.agree, reverse.n) == (0, 10) and reverse.high < 0.5
    again = rating_agreement({r: float(v) for r, v in rating.items()}, rating)
    assert (again.low, again.high) == (same.low, same.high)  # a fixed seed: the same every time
    two = rating_agreement({1: 1.0, 2: 0.0}, {1: 8, 2: 3})
    assert (two.agree, two.n, two.method) == (1, 1, "wilson")
    assert rating_agreement({1: 1.0, 2: 0.0}, {1: 5, 2: 5}).n == 0  # equal ratings order nothing


def test_judge_trust_flags_chance_and_says_when_nothing_is_known():
    goodness = {"loss": {r: float(r) for r in range(1, 9)},           # agrees with every rating pair
                "vlm": {r: float((r * 5) % 8) for r in range(1, 9)},  # scrambled
                "likeness": {r: 0.5 for r in range(1, 9)}}           # rates everything alike
    ratings = [{"run_id": r, "value": r} for r in range(1, 9)]
    trust = {t.judge: t for t in judge_trust(goodness, ratings, [], {"loss": 1.0, "vlm": 1.0})}
    assert not trust["loss"].chance and trust["loss"].ratings.agree == 28
    assert trust["vlm"].chance and trust["vlm"].verdict == "no better than chance"
    assert not trust["likeness"].known and not trust["likeness"].chance and trust["likeness"].weight is None
    nobody = judge_trust(goodness, [], [])
    assert nobody and not any(t.known for t in nobody)
