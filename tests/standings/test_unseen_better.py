"""A pick resting on the person's rating does not read as settled while configs they have not
rated measured clearly better (issue 43, review of the pick rule).

Seen in review: a finished SDXL-LoRA session's answer was the baseline, rated 4/10, "ahead of"
shape-8, unrated and measured at 49 % lower loss ± 12 % (seven more unrated configs 48–49 %
lower), with no word about them. The order stays (what nobody has seen could be rated 1); the
answer — the verdict the Results tab, ``status`` and the report print — now says what was
measured and what to do. Real scoring (``score_runs``: loss series, ratings, estimates) and
the real standings.
"""

from __future__ import annotations

from bracket.session.scoring import score_runs
from bracket.standings import build_standings
from bracket.status import winner_lines

WEIGHTS = {"loss": 1.0, "human": 2.0}
ADVICE = "rate them (Compare's \"Next unrated\" offers the best measured first) before trusting this answer"


def _config(cid: int, kind: str = "search") -> dict:
    return {"id": cid, "name": "baseline" if kind == "baseline" else f"shape-{cid}", "stage": "search",
            "kind": kind, "trial_number": cid, "params": {"network_dim": 4 * cid, "learning_rate": 1e-4}}


def _run(rid: int, cid: int, floor: float, seed: int = 1, kind: str = "search") -> dict:
    series = [(step, floor + (1.0 - floor) * 0.9 ** step) for step in range(1, 41)]
    return {"id": rid, "config_id": cid, "status": "done", "kind": kind, "stage": "search", "loss": series,
            "finished_at": None, "params": _config(cid)["params"], "seed": seed, "max_steps": 40}


def _table(floors: dict[int, float], rated: dict[int, float], seeds: int = 1, baseline: int = 1):
    """``floors``: config id -> its loss floor (config ``baseline`` is the baseline); ``rated``:
    config id -> the rating of each of its runs."""
    configs = [_config(cid, "baseline" if cid == baseline else "search") for cid in floors]
    runs, rid = [], 0
    for cid, floor in floors.items():
        for seed in range(seeds):
            rid += 1
            runs.append(_run(rid, cid, floor * (1 + 0.004 * seed), seed, "baseline" if cid == baseline else "search"))
    ratings = [{"run_id": r["id"], "prompt_index": None, "value": rated[r["config_id"]]}
               for r in runs if r["config_id"] in rated]
    scores = score_runs(runs, ratings, [], WEIGHTS)
    return build_standings(runs, configs, scores, ratings, [], human_weight=WEIGHTS["human"])


def _reviewed(seeds: int = 1):
    """The reviewer's session: the baseline alone rated, eight unrated configs far lower in loss."""
    return _table({1: 0.2, **{cid: 0.1 + 0.001 * cid for cid in range(2, 10)}}, {1: 6.0}, seeds)


def test_a_rated_pick_behind_clearly_better_unrated_configs_says_so_wherever_the_answer_is_read():
    table = _reviewed()
    board = table.board("search")
    assert table.winner.config_name == "baseline" and table.winner.rated  # the order rule itself is unchanged
    # one seed each: no spread was measured, so "clearly lower" is beyond the noise floor, as each headline says
    line = ("You rated it 6/10; 8 configs you have not rated measured 34–37 % lower training loss than your "
            f"baseline, beyond the noise floor: {ADVICE}")
    assert line in board.verdict
    # the same sentence for the Results tab and the report (the board's verdict), status and status --json
    assert table.verdict == board.verdict and table.to_dict()["verdict"] == board.verdict
    assert f"verdict: {board.verdict}" in winner_lines(table)
    # every unrated config it names is 34–37 % lower on its own headline, the scale the app shows
    for row in board.rows[1:]:
        assert "lower training loss than your baseline" in row.headline.text and "not rated" in row.headline.text
        assert "(noise floor: one seed each)" in row.headline.text


def test_with_seeds_the_answer_does_not_claim_a_significance_it_rests_on_a_rating_for():
    verdict = _reviewed(seeds=2).board("search").verdict
    assert ("8 configs you have not rated measured 35–37 % lower training loss than your baseline, beyond seed "
            f"noise: {ADVICE}") in verdict
    assert "significant" not in verdict and "beats" not in verdict


def test_a_rated_pick_that_is_also_best_measured_gets_no_such_line():
    table = _table({1: 0.2, 2: 0.1, 3: 0.15, 4: 0.16}, {2: 8.0})
    assert table.winner.config_name == "shape-2"
    assert "you have not rated" not in table.verdict and "before trusting" not in table.verdict


def test_unrated_configs_inside_seed_noise_of_the_pick_are_a_tie_and_get_no_line():
    # one seed each: the training loss's noise floor (5 % a run) makes 2 % lower a tie
    table = _table({1: 0.2, 2: 0.1, 3: 0.098, 4: 0.099}, {2: 6.0})
    rows = {row.name: row for row in table.board("search").rows}
    assert table.winner.config_name == "shape-2"
    assert rows["shape-3"].headline.loss.change < rows["shape-2"].headline.loss.change  # lower, but in the noise
    assert "you have not rated" not in table.verdict


def test_only_the_configs_clearly_better_than_a_non_baseline_pick_are_counted_against_the_baseline():
    # the pick (shape-2) is rated; shape-3 and shape-4 measured clearly lower, shape-5 level with it
    table = _table({1: 0.3, 2: 0.2, 3: 0.1, 4: 0.11, 5: 0.199}, {2: 6.0, 1: 3.0})
    assert table.winner.config_name == "shape-2"
    assert ("You rated it 6/10; 2 configs you have not rated measured 52–55 % lower training loss than your "
            "baseline, beyond the noise floor") in table.verdict


def test_next_unrated_is_named_only_while_it_offers_one_of_them_first():
    # shape-3, rated 3/10, has the best measured loss: "Next unrated" does not start with shape-4
    table = _table({1: 0.3, 2: 0.2, 3: 0.08, 4: 0.1}, {2: 8.0, 3: 3.0})
    assert table.winner.config_name == "shape-2"
    assert "You rated it 8/10; 1 config you have not rated measured" in table.verdict
    assert table.verdict.endswith("beyond the noise floor: rate it (in Compare) before trusting this answer.")
