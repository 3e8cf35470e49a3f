"""Successive-halving rungs in the standings: the answer is a full-length config, and every
screen words a config's rung the same way (``bracket.standings.rungs``), from plain rows."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bracket.search.halving import Rungs
from bracket.session.scoring import RunScore
from bracket.session.search_settings import HalvingSettings, SearchSettings
from bracket.standings import NoWinnerError, build_standings, require_winner
from bracket.standings.rungs import plan_text, reached_full, rung_lines, rung_rows, rung_text, session_rungs, uses_rungs

RUNGS = Rungs(3, 1 / 9)


def _config(cid, name, state=None, rung=None, note=None):
    return {"id": cid, "name": name, "stage": "search", "kind": "search", "trial_number": cid,
            "params": {"learning_rate": 1e-4 * cid}, "rung": rung, "rung_state": state, "rung_note": note}


def _run(rid, cid, status="done", last=900, pause=None):
    return {"id": rid, "config_id": cid, "stage": "search", "kind": "search", "seed": 42, "max_steps": 900,
            "last_step": last, "status": status, "pause_step": pause}


def _score(value):
    return RunScore(value=value, judges={"loss": value}, used=["loss"], weights_used={"loss": 1.0},
                    disqualified=False, details={"loss": {"final_ema": value}})


def test_a_config_stopped_at_a_lower_rung_is_never_crowned_over_a_full_length_one():
    configs = [_config(1, "full-one", "full", 2),
               _config(2, "short-best", "stopped", 0, "stopped at 1/9: 1 of 7, top 2 go on"),
               _config(3, "to-a-third", "paused", 1), _config(4, "full-two", "full", 2)]
    # the short runs scored better (e.g. a rating at the rung): their scores are not full-length ones
    runs = [_run(1, 1), _run(2, 2, "paused", 100, 100), _run(3, 3, "paused", 300, 300), _run(4, 4)]
    scores = {1: _score(0.4), 2: _score(0.1), 3: _score(0.2), 4: _score(0.3)}
    table = build_standings(runs, configs, scores)
    board = table.board("search")
    assert [r.name for r in board.rows] == ["full-two", "full-one", "to-a-third", "short-best"]
    assert [r.rank for r in board.rows] == [1, 2, 3, 4]
    assert [r.full_length for r in board.rows] == [True, True, False, False]
    winner = table.winner
    assert (winner.config_name, winner.run_id, winner.steps, winner.full_length) == ("full-two", 4, 900, True)
    assert "full-two" in table.verdict and "short-best" not in table.verdict
    assert table.to_dict()["winner"]["full_length"] is True and not table.warnings
    assert require_winner(SimpleNamespace(), table).run_id == 4


def test_without_a_full_length_config_the_best_is_named_with_a_warning_and_not_exported():
    configs = [_config(1, "a", "paused", 0), _config(2, "b", "promoted", 0)]
    runs = [_run(1, 1, "paused", 100, 100), _run(2, 2, "paused", 100, 100)]
    table = build_standings(runs, configs, {1: _score(0.3), 2: _score(0.2)})
    assert table.winner.config_name == "b" and table.winner.full_length is False
    assert any("no config has trained to full length yet" in w for w in table.warnings)
    assert not any("disqualified" in w for w in table.warnings)
    with pytest.raises(NoWinnerError, match="full length"):
        require_winner(SimpleNamespace(), table)


def test_when_every_run_was_disqualified_before_its_first_rung_the_answer_says_so_not_resume():
    configs = [_config(1, "a", "running", note="running to 1/9"), _config(2, "b", "running", note="running to 1/9")]
    runs = [_run(1, 1, "disqualified", None), _run(2, 2, "disqualified", None)]
    worst = RunScore(value=1.0, judges={}, used=[], weights_used={}, disqualified=True, details={})
    table = build_standings(runs, configs, {1: worst, 2: worst})
    assert table.warnings == [
        "the best config's run 1 was disqualified or did not finish; no config has a usable score"]
    assert table.winner.failed and not table.winner.full_length
    with pytest.raises(NoWinnerError, match="has no usable run"):
        require_winner(SimpleNamespace(), table)


def test_a_search_without_halving_ranks_as_before():
    configs = [_config(1, "a"), _config(2, "b")]
    table = build_standings([_run(1, 1), _run(2, 2)], configs, {1: _score(0.3), 2: _score(0.2)})
    assert [r.name for r in table.board("search").rows] == ["b", "a"] and table.winner.full_length
    assert all(reached_full(c) for c in configs) and not uses_rungs(SearchSettings(), configs)


def test_each_rung_state_reads_the_same_words():
    assert rung_text(_config(1, "x", "running"), RUNGS) == "running to 1/9"
    assert rung_text(_config(1, "x", "running", 0), RUNGS) == "running to 1/3"
    assert rung_text(_config(1, "x", "paused", 0), RUNGS) == "paused at 1/9"
    assert rung_text(_config(1, "x", "promoted", 0), RUNGS) == "promoted to 1/3"
    assert rung_text(_config(1, "x", "promoted", 1), RUNGS) == "promoted to full"
    assert rung_text(_config(1, "x", "stopped", 0, "stopped at 1/9: 5 of 7, top 2 go on"),
                     RUNGS) == "stopped at 1/9 (5 of 7, top 2 go on)"
    assert rung_text(_config(1, "x", "full", 2), RUNGS) == "full"
    assert rung_text(_config(1, "x"), RUNGS) == ""
    assert plan_text(RUNGS) == "rungs 1/9 → 1/3 → full, the top 1/3 at each go on"
    settings = SearchSettings(halving=HalvingSettings(eta=2, smallest_rung=0.25))
    assert session_rungs(settings).fractions() == (0.25, 0.5, 1.0) and uses_rungs(settings)
    assert session_rungs(SearchSettings()).fractions() == Rungs().fractions()  # a session from before halving


def test_status_lines_and_report_rows_list_every_config_on_the_rungs_furthest_first():
    configs = [_config(1, "low", "stopped", 0, "stopped at 1/9: 5 of 7, top 2 go on"),
               _config(2, "top", "full", 2, "promoted: 1 of 3 at 1/3, top 1 goes on to full"),
               _config(3, "mid", "running", 1, "promoted: 1 of 6 at 1/9, top 2 go on to 1/3"),
               _config(4, "plain")]
    runs = [_run(1, 1, "paused", 100, 100), _run(2, 2), _run(3, 3, "running", 120)]
    lines = rung_lines(configs, runs, RUNGS)
    assert lines[0] == "rungs 1/9 → 1/3 → full, the top 1/3 at each go on:"
    assert [line.split()[0] for line in lines[1:]] == ["top", "mid", "low"]
    assert "full — promoted: 1 of 3 at 1/3" in lines[1] and "[run 2, 900 steps]" in lines[1]
    assert "running to full — promoted: 1 of 6 at 1/9" in lines[2] and "run 3 running" in lines[2]
    assert "stopped at 1/9 (5 of 7, top 2 go on)" in lines[3]
    assert "run 1 paused at step 100 of 900, state saved" in lines[3]
    rows = rung_rows(configs, runs, RUNGS)
    assert [r[:3] for r in rows] == [["top", "full", "full"], ["mid", "1/3", "running to full"],
                                     ["low", "1/9", "stopped at 1/9 (5 of 7, top 2 go on)"]]
    assert rung_lines([_config(4, "plain")], runs, RUNGS) == []
    waiting = _config(5, "wait", "paused", 0, "paused at 1/9: 3 of 7, top 2 go on")  # as the loop words it
    assert rung_lines([waiting], [_run(5, 5, "paused", 100, 100)], RUNGS)[1].split(None, 1)[1] == (
        "paused at 1/9 (3 of 7, top 2 go on) [run 5 paused at step 100 of 900, state saved]")
