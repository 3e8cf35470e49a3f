"""One answer everywhere: after a search with finals and a few ratings, the app, ``status --json``,
the report, ``export`` and ``promote`` name the same run and config (the fake trainer)."""

from __future__ import annotations

import json

import optuna
import pytest
from optuna.trial import TrialState

from bracket.app.manager import SessionManager
from bracket.cli import main
from bracket.report.document import build_report, render_markdown
from bracket.session import SearchSettings, Session
from bracket.standings import UNRATED_WINNER, standings
from bracket.standings.study_sync import LEFTOVER_NOTE, record_at_end, verdict_study_name
from bracket.trainer.demo.adapter import DemoLoRA


@pytest.mark.slow  # six fake-trainer runs, the report and a promote run: about 60 s on 2 busy cores
def test_the_app_status_report_export_and_promote_name_the_same_winner(demo_fields, runs_dir, monkeypatch, capsys):
    monkeypatch.setattr(DemoLoRA, "preflight_problems", lambda self: [])  # the torch probe is not the subject
    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=3, steps=10, seeds=1,
                                                                    sample_prompts="a red circle --d 3"),
                             out_dir=runs_dir, name="answer", on_finish=[record_at_end])
    assert session.run() == "finished"
    # the stored study tells the truth: leftover warm-start trials closed with a note, a verdict view written
    study = session.store.study(session.name)
    leftovers = [t for t in study.trials if t.user_attrs.get("bracket_note") == LEFTOVER_NOTE]
    assert leftovers and all(t.state == TrialState.FAIL for t in leftovers)
    assert not study.get_trials(states=(TrialState.WAITING,))
    folder = session.folder
    session.close()
    assert main(["finals", str(folder), "--top", "2", "--steps", "20", "--seeds", "1"]) == 0
    session = Session.open(folder)
    search_runs = [r for r in session.store.runs(session.name, with_series=False) if r["stage"] == "search"]
    session.add_rating(search_runs[0]["id"], 9)  # people rate some search runs, not the finals
    session.add_rating(search_runs[1]["id"], 2)
    table = standings(session)
    winner = table.winner
    assert winner.stage == "final" and winner.steps == 20 and not winner.rated
    assert table.warnings == [UNRATED_WINNER]
    session.close()
    capsys.readouterr()

    # the app: Results tab and Compare
    from ui import results_tab

    manager = SessionManager(runs_dir, snapshot_ttl=0.0)
    manager.open(folder)
    board, verdict, command, *_ = results_tab.refresh(manager)
    assert f"Winner: **{winner.config_name}** (final) — run #{winner.run_id}, 20 steps" in verdict
    assert UNRATED_WINNER in verdict and "--max_train_steps" in command
    assert command.split("--max_train_steps")[1].split()[0].strip("'") == "20"
    assert set(board["stage"]) == {"search", "final"}
    line = winner.headline.text  # one headline everywhere (issue 43 item 1)
    assert line and line in list(board["headline"]) and line in verdict
    assert manager.results.winner_export().run_id == winner.run_id
    assert manager.compare.next_unrated(4)[0] == winner.run_id, \
        "Compare's next unrated goes to the unrated winner first"
    labels = manager.compare.run_labels()
    assert "· final ·" in labels[winner.run_id] and "unrated" in labels[winner.run_id]
    manager.close()

    # status, text and JSON
    assert main(["status", str(folder)]) == 0
    text = capsys.readouterr().out
    assert f"winner: {winner.config_name} (final) run {winner.run_id}, 20 steps" in text
    assert f"warning: {UNRATED_WINNER}" in text and "raw figures" in text and "rating 9.0" in text
    assert line in text
    assert main(["status", str(folder), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert {k: answer["winner"][k] for k in ("run_id", "config", "stage", "steps", "rated")} == {
        "run_id": winner.run_id, "config": winner.config_name, "stage": "final", "steps": 20, "rated": False}
    assert answer["winner"]["params"] == winner.params and answer["winner"]["judges"]
    assert answer["warnings"] == [UNRATED_WINNER] and set(answer["stages"]) == {"search", "final"}
    assert answer["winner"]["headline"] == line

    # the report
    session = Session.open(folder, validate=False)
    report = build_report(session)
    assert (report.winner.run_id, report.winner.config_name) == (winner.run_id, winner.config_name)
    markdown = render_markdown(report)
    assert f"best run {winner.run_id}, 20 steps" in markdown and UNRATED_WINNER in markdown and line in markdown
    session.close()
    assert main(["report", str(folder)]) == 0
    assert verdict_study_name("answer") in capsys.readouterr().out
    session = Session.open(folder, validate=False)
    view = optuna.load_study(study_name=verdict_study_name("answer"), storage=session.store.storage)
    best_search = standings(session).boards["search"].rows[0]
    assert view.best_trial.user_attrs["config"] == best_search.name and view.best_value == best_search.mean
    session.close()

    # export and promote: the winner, at its own step count
    assert main(["export", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"exported run {winner.run_id} ({winner.config_name}, 20 steps) to " in out
    script = next(text for text in out.split() if text.endswith("train.sh"))
    assert line in open(script, encoding="utf-8").read()
    assert main(["promote", str(folder)]) == 0
    session = Session.open(folder, validate=False)
    promoted = [r for r in session.store.runs(session.name, with_series=False) if r["stage"] == "promote"]
    configs = {c["id"]: c for c in session.store.configs(session.name)}
    assert len(promoted) == 1 and promoted[0]["max_steps"] == 20
    assert configs[promoted[0]["config_id"]]["name"] == winner.config_name
    assert promoted[0]["params"] == configs[winner.config_id]["params"]
    assert standings(session).winner.run_id == winner.run_id, "a promote run is never a candidate"
    session.close()


def test_export_and_promote_refuse_a_session_without_a_winner(demo_fields, runs_dir, monkeypatch, capsys):
    monkeypatch.setattr(DemoLoRA, "preflight_problems", lambda self: [])
    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=2, steps=5), out_dir=runs_dir,
                             name="empty")
    folder = session.folder
    session.close()
    for command in (["export", str(folder)], ["promote", str(folder), "--steps", "30"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: No run of this session has a score yet") and len(err.strip().splitlines()) == 1


def test_export_and_promote_refuse_a_disqualified_winner(demo_fields, runs_dir, monkeypatch, capsys):
    monkeypatch.setattr(DemoLoRA, "preflight_problems", lambda self: [])
    monkeypatch.setenv("BRACKET_FAKE_MODE", "nan")  # every run's loss turns NaN: nothing usable
    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=1, steps=6, sample_prompts=""),
                             out_dir=runs_dir, name="broken")
    session.run()
    table = standings(session)
    assert table.winner is not None and table.winner.disqualified
    folder = session.folder
    session.close()
    for command in (["export", str(folder)], ["promote", str(folder)]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: The best config") and "disqualified" in err and len(err.strip().splitlines()) == 1
    assert main(["export", str(folder), "--run", str(table.winner.run_id)]) == 0, "a named run is still exported"
