"""Finals: the top configs re-run longer with fresh seeds, scored apart from the short runs."""

from __future__ import annotations

from bracket.app.stages import run_finals
from bracket.cli import main
from bracket.session import SearchSettings, Session


def test_finals_rerun_the_best_configs_as_a_separate_stage(demo_fields, runs_dir, capsys):
    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=4, steps=10, seeds=1,
                                                                    sample_prompts="a red circle --d 3"),
                             out_dir=runs_dir, name="finals")
    session.run()
    search_scores = {r["id"]: r["score"] for r in session.snapshot().runs}
    ranked = sorted((r["score"], r["config_id"]) for r in session.snapshot().runs)
    folder = session.folder
    session.close()

    assert main(["finals", str(folder), "--top", "2", "--steps", "20", "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 configs, 4 runs" in out

    reopened = Session.open(folder)
    runs = reopened.snapshot().runs
    finals = [r for r in runs if r["stage"] == "final"]
    assert len(finals) == 4
    # the budget counts the search's runs: `status` said "8/4 runs spent" after finals
    assert reopened.snapshot().runs_spent == 4 and reopened.snapshot().total_runs == 4
    assert {r["seed"] for r in finals} == {1042, 1043}, "fresh seeds the search never used"
    assert all(r["max_steps"] == 20 for r in finals)
    finalist_names = {r["config_name"] for r in finals}
    best_two = {c["name"] for c in reopened.store.configs(reopened.name, stage="search")
                if c["id"] in {cid for _, cid in ranked[:2]}}
    assert finalist_names == best_two
    # the short runs' scores are untouched by the finals (normalised per stage)
    assert {r["id"]: r["score"] for r in runs if r["stage"] == "search"} == search_scores
    # the Optuna study only holds the search configs
    assert len(reopened.store.study(reopened.name).trials) == 4
    # running finals again does not train them twice
    run_finals(reopened, top_k=2, steps=20, seeds=2)
    assert len([r for r in reopened.store.runs(reopened.name) if r["stage"] == "final"]) == 4
    reopened.close()


def test_finals_shorter_than_the_search_runs_are_refused(demo_fields, runs_dir, capsys):
    """Finals check that a lead survives *longer* runs: fewer steps than the search's is a mistake."""
    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=2, steps=10, seeds=1,
                                                                    sample_prompts="a red circle --d 3"),
                             out_dir=runs_dir, name="short-finals")
    folder = session.folder
    session.close()
    capsys.readouterr()
    assert main(["finals", str(folder), "--steps", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "10 steps" in err[0] and "5 is shorter" in err[0]
    reopened = Session.open(folder)
    assert [r for r in reopened.store.runs(reopened.name) if r["stage"] == "final"] == []
    reopened.close()


def test_status_shows_the_worker_running_finals_as_alive(demo_fields, runs_dir, capsys, monkeypatch):
    """Seen in review: during the app's finals ``status`` said the worker was "gone" — the search had
    signed off and finals did not beat. Finals and promotion now beat as "running finals" / "promoting"."""
    import time

    from bracket.app import stages

    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=2, steps=5, seeds=1,
                                                                    sample_prompts="a red circle --d 3"),
                             out_dir=runs_dir, name="finals-status")
    assert session.run() == "finished"
    [row] = session.store.workers(session.name)
    assert row["status"] == "stopped"  # the search signed off
    seen = {}

    def train_finals(pipeline, chosen, **_kw):  # what status says while the finals train
        [row] = session.store.workers(session.name)
        seen["row"] = row
        assert main(["status", str(session.folder)]) == 0
        seen["out"] = capsys.readouterr().out
        return []

    monkeypatch.setattr(stages, "train_finals", train_finals)
    capsys.readouterr()
    run_finals(session, top_k=1, steps=5, seeds=1)
    assert seen["row"]["status"] == "running finals" and time.time() - seen["row"]["heartbeat_at"] < 5
    assert f"worker {session.worker_id} gpu=-: alive, running finals" in seen["out"], seen["out"]
    assert ": gone" not in seen["out"]
    [row] = session.store.workers(session.name)
    assert row["status"] == "stopped"  # signed off again when the finals ended
    session.close()
