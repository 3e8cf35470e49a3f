"""``status`` of a successive-halving search (rows written as the session loop writes them):
each config's rung, a paused run shown as paused with its saved step, and the winner named as
its full-length run — the same from the kept view and from a cold computation."""

from __future__ import annotations

import json

import pytest

from tests.fakes.halving_rows import halving_session
from tests.fakes.view_helpers import cold_status, status_outputs

pytestmark = pytest.mark.timeout(240)


def test_status_shows_every_rung_a_paused_run_and_the_full_length_winner(runs_dir, demo_fields, capsys, tmp_path):
    folder, ids = halving_session(runs_dir, demo_fields)
    text, as_json = status_outputs(folder, capsys)
    assert (text, as_json) == cold_status(folder, capsys, tmp_path)
    lines = text.splitlines()
    start = lines.index("rungs 1/9 → 1/3 → full, the top 1/3 at each go on:")
    rungs = lines[start + 1:start + 5]
    assert [line.split()[0] for line in rungs] == ["search-0", "search-3", "search-2", "search-1"]
    assert "full — promoted: 1 of 2 at 1/3" in rungs[0] and f"run {ids['search-0']}, 90 steps" in rungs[0]
    assert "running to 1/3 — promoted: 1 of 7 at 1/9, top 2 go on to 1/3" in rungs[1]
    assert "stopped at 1/9 (5 of 7, top 2 go on)" in rungs[3]
    assert f"run {ids['search-2']} paused at step 10 of 90, state saved" in rungs[2]
    assert "paused at 1/9 — waiting at 1/9" in rungs[2]
    paused_row = next(line for line in lines if line.startswith(f"{ids['search-2']:>4}  search"))
    assert " paused " in paused_row and "interrupted" not in text and "failed" not in paused_row
    assert "(paused at step 10 of 90, state saved)" in text
    winner = next(line for line in lines if line.startswith("winner:"))
    # search-1's 10-step run has the lowest loss; the answer is the full-length one
    assert winner.startswith(f"winner: search-0 (search) full-length run {ids['search-0']}, 90 steps")
    answer = json.loads(as_json)
    assert answer["winner"]["run_id"] == ids["search-0"] and answer["winner"]["full_length"] is True
    rows = {r["name"]: r for r in answer["stages"]["search"]["rows"]}
    assert rows["search-0"]["rank"] == 1 and rows["search-1"]["full_length"] is False


def test_a_paused_run_is_not_taken_for_an_interrupted_one(runs_dir, demo_fields, capsys):
    from bracket.session.recovery import recover_interrupted_runs
    from bracket.session.store import open_session_store

    folder, ids = halving_session(runs_dir, demo_fields)
    store, name = open_session_store(folder)
    try:  # no worker is alive: the running run is recovered as interrupted, the paused one stays paused
        notes = recover_interrupted_runs(store, name, self_worker="another", grace_s=0.0)
        assert store.get_run(ids["search-2"])["status"] == "paused"
        assert store.get_run(ids["search-2"])["pause_step"] == 10
        assert not any(f"run {ids['search-2']} " in note for note in notes)
    finally:
        store.close()
    text, _ = status_outputs(folder, capsys)
    assert f"run {ids['search-2']} paused at step 10 of 90, state saved" in text


def test_the_verdict_of_a_lone_full_length_config_says_the_others_stand_at_lower_rungs(runs_dir, demo_fields, capsys):
    """Seen in a walk of a demo search with halving: the verdict said the winner "was compared
    with nothing" while twelve configs had been ranked against it at the rungs."""
    folder, _ = halving_session(runs_dir, demo_fields)
    text, _ = status_outputs(folder, capsys)
    verdict = next(line for line in text.splitlines() if line.startswith("verdict:"))
    assert "compared with nothing" not in verdict
    assert verdict.endswith("it is the only full-length config; the 3 others stand at a lower rung, "
                            "ranked there (see the rungs).")


def test_a_run_paused_at_a_rung_counts_as_spent(runs_dir, demo_fields, capsys):
    """Seen in a walk: a finished demo search with halving said "1/13 runs spent" — its twelve
    runs paused at a rung were not counted (two runs ended, one paused at 1/9, one running).
    A halving search's budget is GPU time: the steps every run trained, the paused ones too."""
    from bracket.session import Session
    from bracket.session.loop.rung_scores import full_runs_spent

    folder, _ = halving_session(runs_dir, demo_fields)
    text, _ = status_outputs(folder, capsys)
    session = Session.open(folder)
    runs = [r for r in session.store.runs(session.name) if r["stage"] == "search"]
    full_steps = session.settings.steps
    session.close()
    spent = full_runs_spent(runs, full_steps)
    assert spent > full_runs_spent([r for r in runs if r["status"] != "paused"], full_steps)
    assert text.splitlines()[0].endswith(f"; 4 configs, {spent:.1f}/6 full runs spent")


def test_status_json_gives_each_config_its_rung_and_each_run_the_steps_it_trained(runs_dir, demo_fields, capsys,
                                                                                  tmp_path):
    """A script reading ``--json`` could not tell a config stopped at 1/9 from a full-length one,
    and the paused run said ``"steps": 90`` when it had trained 10."""
    from bracket.session import Session
    from bracket.session.loop.rung_scores import full_runs_spent

    folder, ids = halving_session(runs_dir, demo_fields)
    text, as_json = status_outputs(folder, capsys)
    answer = json.loads(as_json)
    assert answer == json.loads(cold_status(folder, capsys, tmp_path)[1])  # kept view and cold computation agree
    rows = {r["name"]: r for r in answer["stages"]["search"]["rows"]}
    assert {name: (r["rung"], r["rung_index"], r["rung_state"]) for name, r in rows.items()} == {
        "search-0": ("full", 2, "full"), "search-1": ("1/9", 0, "stopped"),
        "search-2": ("1/9", 0, "paused"), "search-3": ("1/9", 0, "running")}
    for name, row in rows.items():  # the very words of the config's line under "rungs …:"
        assert any(line.startswith(f"  {name:<24} {row['rung_note']} [run ") for line in text.splitlines()), name
    assert rows["search-1"]["rung_note"] == "stopped at 1/9 (5 of 7, top 2 go on)"
    runs = {name: r["runs"][0] for name, r in rows.items()}
    assert {name: (r["steps"], r["trained_steps"], r["paused"]) for name, r in runs.items()} == {
        "search-0": (90, 90, False), "search-1": (90, 10, False), "search-2": (90, 10, True),
        "search-3": (90, None, False)}  # a running run's step is live progress, not the kept view's
    assert runs["search-2"]["run_id"] == ids["search-2"] and answer["winner"]["trained_steps"] == 90
    session = Session.open(folder)
    search = [r for r in session.store.runs(session.name) if r["stage"] == "search"]
    spent = full_runs_spent(search, session.settings.steps)
    session.close()
    assert answer["halving"] is True and answer["budget"] == 6
    assert answer["full_runs_spent"] == pytest.approx(spent)
    assert answer["spent"] == f"4 configs, {spent:.1f}/6 full runs" and f"; {answer['spent']} spent" in text


def test_status_json_without_halving_has_no_rung_fields(filled_demo_session, capsys):
    folder = filled_demo_session(3, name="plain", budget=5)
    answer = json.loads(status_outputs(folder, capsys)[1])
    assert answer["halving"] is False and answer["full_runs_spent"] is None
    assert answer["budget"] == 5 and answer["spent"] == "3/5 runs"
    row = answer["stages"]["search"]["rows"][0]
    assert not {"rung", "rung_index", "rung_state", "rung_note"} & set(row)
    assert row["runs"][0]["trained_steps"] == 20 and row["runs"][0]["paused"] is False
