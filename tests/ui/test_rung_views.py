"""The app shows a successive-halving search's rungs (rows written as the session loop writes
them, no loop run): the Search tab's trial table has each config's rung and opens the "why"
with the stored reason, its status says how many configs stand where, and Compare offers the
runs paused at a rung (marked so) with the rung steps named on its step slider and shows every
config that reached a rung at its step; the Results leaderboard has a "rung" column."""

from __future__ import annotations

import pytest

from bracket.app import rungs
from bracket.app.manager import SessionManager
from tests.fakes.halving_rows import halving_session
from ui import compare_rungs, compare_tab, results_tab, search_tab
from ui.render import runs_frame

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("no_torch_probe")]


@pytest.fixture
def opened(runs_dir, demo_fields):
    folder, ids = halving_session(runs_dir, demo_fields)
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    manager.open(folder)
    yield manager, ids
    manager.close()


def test_the_trial_table_shows_each_configs_rung_and_why(opened):
    manager, ids = opened
    status, _progress, _plot, _log, frame, *_rest = search_tab.poll(manager, {}, 0.6, 1)
    assert list(frame.columns[:5]) == ["run", "config", "status", "rung", "step"]
    rows = {row["config"]: row for row in frame.to_dict("records")}
    assert rows["search-0"]["rung"] == "full"
    assert rows["search-1"]["rung"] == "stopped at 1/9"  # short: its place is in the why
    assert (rows["search-2"]["rung"], rows["search-2"]["status"], rows["search-2"]["step"]) == (
        "paused at 1/9", "paused", "10/90")
    assert rows["search-3"]["rung"] == "running to 1/3"
    assert rows["search-3"]["why"].startswith("promoted: 1 of 7 at 1/9, top 2 go on to 1/3 · ")
    assert rows["search-1"]["why"].startswith("stopped at 1/9 (5 of 7, top 2 go on) · ")  # as `status` says it
    assert ("Rungs 1/9 → 1/3 → full, the top 1/3 at each go on: 1 full · 1 running to 1/3 · "
            "1 paused at 1/9 · 1 stopped at 1/9") in status


def test_a_search_without_rungs_keeps_its_table(opened):
    manager, _ids = opened
    snap = manager.snapshot()
    assert "rung" not in runs_frame(snap).columns  # no rung cells handed in: the table as before
    assert rungs.cells(manager.session.settings, [dict(c, rung_state=None) for c in snap.configs]) == {}


def test_compare_offers_paused_runs_and_names_the_rung_steps(opened):
    manager, ids = opened
    offered = [run_id for _label, run_id in compare_tab.run_choices(manager)]
    assert ids["search-2"] in offered and ids["search-0"] in offered  # the paused run's samples at its rung
    _html, slider, shown, _scope, _note = compare_tab.show_grid(manager, [ids["search-2"], ids["search-0"]])
    assert shown == [ids["search-2"], ids["search-0"]]
    assert slider.label == "Step (samples at 10, 30, 90; rungs: 1/9 at 10, 1/3 at 30)"
    html, _message = compare_tab.change_step(manager, shown, 10)  # both runs' samples at the 1/9 rung
    assert html.count("<img") >= 2
    assert compare_rungs.slider_label([10, 20]) == "Step (samples at 10, 20)"
    assert f"#{ids['search-2']} search-2 · seed 42 · paused at 1/9 (step 10) · unrated" in html  # its header


def test_compare_shows_every_config_that_reached_a_rung_at_its_step(opened):
    manager, ids = opened
    (_lists, _sort, _a, _b, rung_list) = compare_tab.refresh_runs(manager)
    assert rung_list.visible
    assert rung_list.choices == [("1/9 at step 10: 3 configs", 0), ("1/3 at step 30: 1 config", 1)]
    runs_list, html, slider, shown, _scope, note = compare_tab.show_rung(manager, 0)
    # search-3 is training on to 1/3: it has no sample at the rung to show yet
    assert sorted(shown) == sorted([ids["search-0"], ids["search-1"], ids["search-2"]]) and runs_list.value == shown
    assert slider.value == 10 and html.count("<img") == 2  # search-1's run (cut at its rung) saved no sample
    assert note == ("Step 10, the rung 1/9: the 3 configs that reached it, the best there first "
                    "(by its score at the rung).")
    *_grid, message = compare_tab.show_rung(manager, 2)
    assert "No run has reached that rung" in message


def test_a_search_without_rungs_has_no_rung_list(runs_dir, demo_fields):
    from bracket.session import SearchSettings, Session
    from tests.fakes.filled_store import fill_store

    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=2, steps=20, warm_start=False),
                             out_dir=runs_dir, name="plain")
    fill_store(session, 2, 20)
    folder = session.folder
    session.close()
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    manager.open(folder)
    try:
        assert not compare_tab.refresh_runs(manager)[4].visible
        assert "rung" not in results_tab.refresh(manager)[0].columns
        widths = results_tab.shown(manager)[0].column_widths
        assert widths == results_tab.BOARD_WIDTHS and len(widths) == len(results_tab.refresh(manager)[0].columns)
    finally:
        manager.close()


def test_the_results_leaderboard_ranks_the_lower_rungs_after_the_full_length_winner(opened):
    from ui.render import leaderboard_frame, winner_markdown

    manager, ids = opened
    table = manager.standings()
    frame = leaderboard_frame([table.board("search")])
    ranks = dict(zip(frame["config"], frame["rank"]))
    assert ranks["search-0"] == 1 and ranks["search-1"] == "2 (below full length)"
    shown = results_tab.refresh(manager)[0]  # the tab's board says where each config stands, and which runs wait
    assert list(shown.columns[:4]) == ["stage", "rank", "config", "rung"]
    # the tab gives it a width per column, the rung's too, that add up to the page (issue 43: a column
    # without one is 150 px, and the board scrolled sideways at 1280 px)
    board = results_tab.shown(manager)[0]
    widths = [float(w.rstrip("%")) for w in board.column_widths]
    assert len(widths) == len(shown.columns) and 99 <= sum(widths) <= 100 and min(widths) >= 4
    rows = {row["config"]: row for row in shown.to_dict("records")}
    assert rows["search-1"]["rung"] == "stopped at 1/9 (5 of 7, top 2 go on)" and rows["search-0"]["rung"] == "full"
    assert rows["search-2"]["rung"] == "paused at 1/9"
    assert rows["search-2"]["runs"] == f"#{ids['search-2']} (paused at step 10)"
    assert f"run #{ids['search-0']}, 90 steps" in winner_markdown(table.winner)
    assert "lower rung" not in winner_markdown(table.winner)
    # the Results tab names the winner's full-length run, as `status` and the report do
    assert f"full-length run #{ids['search-0']}, 90 steps" in results_tab.verdict_text(manager)


def test_compare_marks_the_rungs_where_the_loop_pauses_with_a_validation_loss(runs_dir, demo_fields):
    from bracket.session import HalvingSettings, SearchSettings, Session
    from tests.fakes.filled_store import fill_store

    # no sample interval given: samples and the validation loss every 90 // 5 = 18 steps, so the
    # rungs 1/9 and 1/3 (steps 10 and 30) are paused at 18 and 36
    settings = SearchSettings(budget=6, steps=90, sample_prompts="a red circle", warm_start=False,
                              halving=HalvingSettings(smallest_rung=1 / 9),
                              validation_split=0.2)
    session = Session.create("demo-cpu", demo_fields, settings, out_dir=runs_dir, name="validated")
    assert session.trainer.validation is not None
    paused_at = session.budget.rungs.steps
    fill_store(session, 2, 90)
    ids = [r["id"] for r in session.store.runs(session.name, with_series=False) if r["kind"] != "setup"]
    folder = session.folder
    session.close()
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    manager.open(folder)
    try:
        assert paused_at == (18, 36, 90)
        assert rungs.compare_rung_steps(manager, ids) == [(18, "1/9"), (36, "1/3")]
    finally:
        manager.close()


def test_a_run_paused_past_its_rung_reads_its_pause_step_as_status_does(runs_dir, demo_fields):
    """Seen in review (SDXL LoRA halving, a fast fake sd-scripts): a run stopped after it trained
    past its rung (its row: ``last_step`` 30, what it trained; ``pause_step`` 10, what it resumes
    from and is scored at) read ``30/30`` in the trial table and ``paused at step 30`` on Results
    and in Compare, while ``status`` said ``paused at step 10 of 30``."""
    from bracket.session import Session
    from bracket.status.text import answer_lines

    folder, ids = halving_session(runs_dir, demo_fields)
    store_session = Session.open(folder)
    store_session.store.update_run(ids["search-2"], last_step=14)  # trained on to 14 before the stop landed
    store_session.close()
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    manager.open(folder)
    frame = search_tab.poll(manager, {}, 0.6, 1)[4].set_index("config")
    assert frame.loc["search-2", "step"] == "10/90"
    board = results_tab.refresh(manager)[0].set_index("config")
    assert f"#{ids['search-2']} (paused at step 10)" in board.loc["search-2", "runs"]
    _html, _slider, shown, _scope, _note = compare_tab.show_grid(manager, [ids["search-2"], ids["search-0"]])
    html, _message = compare_tab.change_step(manager, shown, 10)
    assert f"#{ids['search-2']} search-2 · seed 42 · paused at 1/9 (step 10) · unrated" in html
    status = answer_lines(manager.session, manager.snapshot(), manager.standings())
    assert "paused at step 10 of 90" in "\n".join(status)  # what status says
    manager.close()
