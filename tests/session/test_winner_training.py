"""Promotion: the winner trained for the full length with saves, resumable from its newest state."""

from __future__ import annotations

import json
from pathlib import Path

import optuna

from bracket.cli import main
from bracket.session import SearchSettings, Session
from bracket.standings import standings
from bracket.standings.study_sync import record_at_end, verdict_study_name


def test_promote_trains_the_winner_with_saves_and_resumes_from_state(demo_fields, runs_dir, monkeypatch, capsys):
    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=3, steps=8, sample_prompts=""),
                             out_dir=runs_dir, name="promo", on_finish=[record_at_end])
    session.run()
    winner = min((r for r in session.snapshot().runs if r["score"] is not None), key=lambda r: r["score"])
    folder = session.folder
    session.close()

    monkeypatch.setenv("BRACKET_FAKE_MODE", "exit1")  # the long run dies half way
    assert main(["promote", str(folder), "--steps", "40", "--save-every", "5"]) == 1
    assert "resume from the last saved state" in capsys.readouterr().out
    monkeypatch.delenv("BRACKET_FAKE_MODE")
    assert main(["promote", str(folder), "--steps", "40", "--save-every", "5"]) == 0

    reopened = Session.open(folder)
    promoted = [r for r in reopened.store.runs(reopened.name) if r["stage"] == "promote"]
    # the interrupted run goes on in its own row and folder (one run, two launches), not as a new run
    assert [(r["status"], r["launches"]) for r in promoted] == [("done", 2)]
    assert promoted[0]["params"] == winner["params"]
    second_args = json.loads((Path(promoted[0]["output_dir"]) / "fake_args.json").read_text())
    flat = json.dumps(second_args)
    assert '"save_every_n_steps": 5' in flat and '"save_state": true' in flat and '"max_train_steps": 40' in flat
    assert second_args["args"]["resume"].endswith("-state")
    assert Path(second_args["args"]["resume"]).parent == Path(promoted[0]["output_dir"])
    assert [step for step, _ in promoted[0]["loss"]] == list(range(1, 41))  # this fake counts from 1 again
    # promotion never enters the search's statistics or its Optuna study; warm-start configs the
    # budget left untried were closed with a note when the search finished
    trials = reopened.store.study(reopened.name).trials
    assert len([t for t in trials if "bracket_note" not in t.user_attrs]) == 3
    assert all(t.state.name == "FAIL" for t in trials if "bracket_note" in t.user_attrs)
    # ... and a companion study holds the current scores, so optuna-dashboard can show the verdict's ranking
    view = optuna.load_study(study_name=verdict_study_name(reopened.name), storage=reopened.store.storage)
    best = standings(reopened).boards["search"].rows[0]
    assert len(view.trials) == 3 and view.best_value == best.mean and view.best_trial.user_attrs["config"] == best.name
    reopened.close()
