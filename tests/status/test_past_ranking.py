"""``--warm-start-from`` carries an earlier session's configs in the order of its current
leaderboard (``bracket.status.ranking.past_ranking``), not the value each trial ended with: a
rating given after the runs moves them (issue 30)."""

from __future__ import annotations

from bracket.app.forms import plan_text
from bracket.search.types import PAST_PREFIX
from bracket.session import SearchSettings, Session
from bracket.session.loop.plan import plan_text as plan_phases
from bracket.session.past import PastSession, past_configs, past_sessions, short_name
from bracket.standings import standings
from bracket.status.ranking import past_ranking
from tests.fakes.view_helpers import kept_row


def _settings(**values) -> SearchSettings:
    return SearchSettings(**{"budget": 3, "steps": 6, "seeds": 1, "sample_prompts": "a red circle --d 7", **values})


def test_a_later_rating_reorders_what_warm_start_from_carries(demo_fields, runs_dir):
    first = Session.create("demo-cpu", demo_fields, _settings(weights={"loss": 1.0, "human": 3.0}),
                           out_dir=runs_dir, name="first")
    assert first.run() == "finished"
    by_value = [c["name"] for c in sorted(first.store.configs("first", stage="search"), key=lambda c: c["value"])]
    runs = {r["config_name"]: r for r in first.snapshot().runs if r["status"] == "done"}
    first.add_rating(runs[by_value[-1]]["id"], 10)  # the trial-time worst is liked, the best is not
    first.add_rating(runs[by_value[0]]["id"], 1)
    board = [r.name for r in standings(first).board("search").top(3)]
    first.close()
    # the rating changed the leaderboard: the 10 now ranks above the 1 (the unrated config, unlike both,
    # keeps its place by its loss: an estimate with no similar rating has little say)
    assert board.index(by_value[-1]) < board.index(by_value[0]) and board[:2] != by_value[:2]
    assert [name for name, _ in past_ranking(first.folder)] == board

    carried = past_configs([first.folder], "demo-cpu", rank=past_ranking)
    again = Session.open(first.folder, validate=False)
    stored = {c["name"]: c["params"] for c in again.store.configs("first")}
    again.close()
    assert [c.knobs for c in carried] == [stored[board[0]], stored[board[1]]]
    assert [c.name for c in carried] == [f"{PAST_PREFIX}1-first", f"{PAST_PREFIX}2-first"]
    assert board[0] in carried[0].source
    # the session created from it queues them in that order (what the CLI and the app pass)
    second = Session.create("demo-cpu", demo_fields, _settings(warm_start_from=[str(first.folder)]),
                            out_dir=runs_dir, name="second", rank_past=past_ranking)
    queued = second.store.study("second").get_trials(deepcopy=False)
    assert [t.system_attrs["fixed_params"] for t in queued[1:3]] == [
        second.space.searched_params(stored[name]) for name in board[:2]]
    second.close()

    # the plan counts them the same way, in the Setup preview and in the session: a bound that
    # drops the leaderboard's #1 (its scheduler) leaves one past config, though the two best by
    # stored value would both fit
    others = sorted({stored[name]["lr_scheduler"] for name in stored if name != board[0]})
    assert stored[board[0]]["lr_scheduler"] not in others and len(others) == 2
    bounds = {"lr_scheduler": others}
    preview = plan_text(8, 1, None, "demo-cpu", True, "tpe", bounds, demo_fields, 6, [str(first.folder)])
    assert "baseline, 1 past, " in preview, preview
    third = Session.create("demo-cpu", demo_fields, _settings(budget=8, bounds=bounds,
                                                              warm_start_from=[str(first.folder)]),
                           out_dir=runs_dir, name="third", rank_past=past_ranking)
    assert dict(third.search_plan)["past"] == 1 and preview.endswith(plan_phases(third.search_plan))
    third.close()
    again = Session.open(third.folder, validate=False, rank_past=past_ranking)  # the app and `resume` open it so
    assert dict(again.search_plan)["past"] == 1
    again.close()

    # the Setup list names the leaderboard's winner with its raw figure, runs and date
    info, = [s for s in past_sessions(runs_dir, "demo-cpu", past_ranking) if s.name == "first"]
    assert info.winner == board[0] and "loss" in info.figure
    assert f"winner {board[0]}" in info.label and "3 runs" in info.label and "best score" not in info.label


def test_past_config_names_stay_apart_in_the_cli_tables():
    """Two sessions of one preset made the same day: the run table's 18 characters tell their
    past configs apart (the end of the session's name, its time, is kept)."""
    names = [f"{PAST_PREFIX}1-{short_name(s)}" for s in ("demo-cpu-20261130-101500", "demo-cpu-20261130-121501")]
    assert names[0][:18] != names[1][:18] and all(len(n) <= 18 for n in names)
    assert short_name("first") == "first"


def test_a_past_session_of_one_run_says_run_and_config_in_the_singular(tmp_path):
    one = PastSession(tmp_path, "w2", "demo-cpu", 0.0, 0.5, 1, "baseline", "val loss 0.7", runs=1)
    assert "1 run, 1 config, winner baseline" in one.label  # it said "1 runs, 1 configs"
    two = PastSession(tmp_path, "w3", "demo-cpu", 0.0, 0.5, 2, "sgd", "", runs=4)
    assert "4 runs, 2 configs, winner sgd" in two.label


def test_the_past_ranking_reads_the_kept_status_view_while_it_is_current(demo_fields, runs_dir, monkeypatch):
    """The Setup list of many past sessions: a session whose ``status`` view is current is
    ranked from that file, with only its store opened; a change makes it work them out again."""
    from bracket import cli

    first = Session.create("demo-cpu", demo_fields, _settings(weights={"loss": 1.0, "human": 3.0}),
                           out_dir=runs_dir, name="kept")
    assert first.run() == "finished"
    first.close()
    worked_out = past_ranking(first.folder)
    assert cli.main(["status", str(first.folder)]) == 0 and kept_row(first.folder) is not None
    opened: list[object] = []
    real_open = Session.open
    monkeypatch.setattr(Session, "open", classmethod(lambda cls, *a, **k: opened.append(a) or real_open(*a, **k)))
    assert past_ranking(first.folder) == worked_out and opened == []  # from the kept view
    info, = past_sessions(runs_dir, "demo-cpu", past_ranking)
    assert info.winner == worked_out[0][0] and opened == []

    again = real_open(first.folder, validate=False)
    done = sorted((r for r in again.snapshot().runs if r["status"] == "done"), key=lambda r: r["score"])
    worst = done[-1]
    again.add_rating(worst["id"], 10)  # the view is stale now: the ranking is worked out, and it moved
    again.add_rating(done[0]["id"], 1)
    again.close()
    moved = past_ranking(first.folder)
    names = [name for name, _ in moved]
    assert len(opened) == 1 and moved != worked_out
    assert names.index(worst["config_name"]) < names.index(done[0]["config_name"])  # the 10 above the 1
