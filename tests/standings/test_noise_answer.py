"""Issue 18: validation loss, the confirmation rung and the best step, through real sessions
with the fake trainer (and the pure rules they rest on)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from bracket.dataset.demo_data import make_demo_dataset
from bracket.report import export_run
from bracket.session import SearchSettings, Session
from bracket.session.loop.confirm import first_width, next_step
from bracket.session.scoring.best_step import step_curve
from bracket.session.store import Store, sqlite_url
from bracket.trainer.heldout import automatic_split, decide
from tests.fakes import FAKE_TRAINER, make_fake_python


@pytest.fixture(autouse=True)
def _no_torch_probe(monkeypatch):
    monkeypatch.setattr("bracket.trainer.demo.adapter.trainer_python_problems", lambda *a, **k: [])


def _fields(tmp_path: Path, images: int) -> dict[str, str]:
    toml = make_demo_dataset(tmp_path / f"data{images}", count=images)
    return {"dataset": str(toml), "trainer_python": str(make_fake_python(tmp_path / "bin")),
            "train_script": str(FAKE_TRAINER)}


def _settings(**overrides) -> SearchSettings:
    values = dict(budget=3, steps=20, seeds=1, sample_prompts="a red circle --d 7")
    values.update(overrides)
    return SearchSettings(**values)


# -- validation --------------------------------------------------------------------------
def test_validation_threshold_and_note():
    assert automatic_split(19) == 0.0 and automatic_split(20) == 0.1 and automatic_split(120) == 0.05
    assert decide(None, supported=False, images=100, seed=1)[0] == 0.0
    split, note = decide(None, supported=True, images=12, seed=1)
    assert split == 0.0 and "fewer than 20" in note
    assert decide(0, supported=True, images=100, seed=1)[0] == 0.0


def test_validation_on_for_a_large_dataset_and_the_loss_judge_uses_it(tmp_path, runs_dir):
    session = Session.create("demo-cpu", _fields(tmp_path, 30), _settings(), out_dir=runs_dir)
    assert session.settings.validation_split == pytest.approx(0.1)
    assert any(n.startswith("Validation loss: on") for n in session.parts.notes)
    assert session.run() == "finished"
    runs = session.store.runs(session.name)
    args = [json.loads((Path(r["output_dir"]) / "fake_args.json").read_text())["args"] for r in runs]
    assert {a["validation_split"] for a in args} == {0.1}  # the same split for every run
    assert all(r["eval_loss"] for r in runs)
    # no --sample-every given: samples at every validation step (20 steps: every 4), so whichever
    # step the validation loss names best has samples to look at (issue 34)
    assert {(a["sample_every_n_steps"], a["validate_every_n_steps"]) for a in args} == {(4, 4)}
    assert all({s for s, _ in r["eval_loss"]} <= {int(x["step"]) for x in r["samples"]} for r in runs)
    scores = session.scores()
    assert {s.details["loss"]["basis"] for s in scores.values()} == {"validation"}
    # a resumed session keeps the decision
    reopened = Session.open(session.folder)
    assert reopened.trainer.validation is not None and reopened.trainer.validation.split == pytest.approx(0.1)
    reopened.close()
    session.close()


def test_small_dataset_keeps_training_loss_and_says_so(tmp_path, runs_dir):
    session = Session.create("demo-cpu", _fields(tmp_path, 6), _settings(budget=2), out_dir=runs_dir)
    assert session.settings.validation_split == 0.0 and session.trainer.validation is None
    assert any("fewer than 20" in n for n in session.parts.notes)
    assert session.run() == "finished"
    assert {s.details["loss"]["basis"] for s in session.scores().values()} == {"training"}
    session.close()


# -- the confirmation rung ---------------------------------------------------------------
def test_plan_and_automatic_share():
    assert SearchSettings(budget=24).plan() == "budget 24 = search 18 (18 configs × 1 seed) + confirm 6"
    assert SearchSettings(budget=4).plan() == "budget 4 = 4 configs × 1 seed"  # too small for a rung
    assert SearchSettings(budget=1).plan() == "budget 1 = 1 config × 1 seed"  # it said "1 configs"
    assert SearchSettings(budget=3, seeds=2).plan() == "budget 3 = 1 config × 2 seeds (1 run left over)"
    assert SearchSettings(budget=24, confirm=0).confirm_runs == 0
    assert SearchSettings(budget=17, seeds=2, confirm=4).plan() == \
        "budget 17 = search 12 (6 configs × 2 seeds) + confirm 5"


def test_rung_rules():
    assert first_width(6, 18) == 4 and first_width(2, 18) == 2 and first_width(3, 18) == 2
    ranking = [10, 11, 12, 13]
    counts = {c: 1 for c in ranking}
    # rung 1: the top 2 each get a second seed, best first
    assert next_step(ranking, counts, {}, seeds=1, runs_left=3, width=2).config_id == 10
    counts[10] = 2
    assert next_step(ranking, counts, {10: 1}, seeds=1, runs_left=2, width=2).config_id == 11
    counts[11] = 2
    # rung 1 handed out, a run still training: rung 2 waits for its result
    assert next_step(ranking, counts, {11: 1}, seeds=1, runs_left=1, width=2).action == "wait"
    # rung 2 ranks on the new means: 11 now leads and gets the third seed
    assert next_step([11, 10, 12, 13], counts, {}, seeds=1, runs_left=1, width=2).config_id == 11
    # a config that enters the top late still gets its runs
    assert next_step([12, 11, 10], {12: 1, 11: 3, 10: 2}, {}, seeds=1, runs_left=1, width=2).config_id == 12
    assert next_step(ranking, counts, {}, seeds=1, runs_left=0, width=2).action == "done"


def test_confirmation_rung_runs_the_leaders_again_inside_the_budget(tmp_path, runs_dir):
    session = Session.create("demo-cpu", _fields(tmp_path, 6), _settings(budget=8, confirm=3), out_dir=runs_dir)
    assert session.settings.plan() == "budget 8 = search 5 (5 configs × 1 seed) + confirm 3"
    assert session.run() == "finished"
    runs = [r for r in session.store.runs(session.name, with_series=False) if r["stage"] == "search"]
    assert len(runs) == 8 and session.snapshot().runs_spent == 8
    confirm = [r for r in runs if r["seed_index"] >= 1]
    assert len(confirm) == 3 and len({r["seed"] for r in confirm} & {42}) == 0  # fresh seeds
    per_config = {}
    for run in runs:
        per_config[run["config_id"]] = per_config.get(run["config_id"], 0) + 1
    assert sorted(per_config.values(), reverse=True)[:2] in ([3, 2], [2, 2])  # halving: 2 at 2 seeds, then 1 more
    from bracket.standings import standings

    table = standings(session)
    top = table.board("search").rows[0]
    assert top.seeds >= 2 and top.ci_low is not None  # the pick is a mean with its interval
    assert table.winner.config_id == top.config_id and len(table.winner.seeds) >= 2
    session.close()


# -- the best step -----------------------------------------------------------------------
def _run(run_id, validation, last=100, samples=(50, 100)):
    return {"id": run_id, "config_id": 1, "status": "done", "last_step": last,
            "loss": [[s, 0.5] for s in range(1, last + 1)],
            "eval_loss": [[s, v] for s, v in validation.items()], "samples": [{"step": s} for s in samples],
            "judges": {}}


def test_best_step_from_validation_ratings_and_default():
    curve = step_curve(1, [_run(1, {50: 0.20, 100: 0.25}), _run(2, {50: 0.22, 100: 0.26})])
    assert curve.best_step == 50 and curve.basis == "validation" and curve.final_step == 100
    flat = step_curve(1, [_run(1, {})])  # training loss only, flat: no step is better, the final one stays
    assert flat.best_step == 100
    rated = step_curve(1, [_run(1, {})], ratings=[{"run_id": 1, "value": 9, "step": 50},
                                                  {"run_id": 1, "value": 3, "step": 100}])
    assert rated.best_step == 50 and "human" in rated.basis


def test_the_best_step_named_has_samples_to_look_at():
    """Issue 34: validation ran at steps 20, 40, …, samples were saved only at the end, and the
    best step named was 40 — with no sample to look at or rate. With samples, only sampled steps
    (the final one included) can be the best step; without any samples, any evaluated step can."""
    validation = {20: 0.30, 40: 0.18, 60: 0.22, 80: 0.24, 100: 0.25}
    at_the_end = step_curve(1, [_run(1, validation, samples=(100,))])
    assert at_the_end.best_step == 100 and 40 not in at_the_end.steps
    every_other = step_curve(1, [_run(1, validation, samples=(20, 60, 100))])
    assert every_other.best_step == 60 and every_other.basis == "validation"
    no_samples = step_curve(1, [_run(1, validation, samples=())])
    assert no_samples.best_step == 40
    assert at_the_end.per_judge["loss"][40] == 0.18  # the chart still draws every evaluated step


def test_best_step_through_export_and_a_stored_rating_step(tmp_path, runs_dir, monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_OVERFIT_STEP", "20")  # validation loss rises after step 20 of 40
    session = Session.create("demo-cpu", _fields(tmp_path, 30),
                             _settings(budget=2, steps=40, sample_every_n_steps=10), out_dir=runs_dir)
    assert session.run() == "finished"
    from bracket.standings import standings

    table = standings(session)
    rows = table.board("search").rows
    assert {r.best_step for r in rows} <= {10, 20, 30} and {r.best_step_basis for r in rows} == {"validation"}
    assert {r.loss_basis for r in rows} == {"validation"}
    assert table.winner.step == rows[0].best_step and table.to_dict()["winner"]["step"] == table.winner.step
    result = export_run(session)
    document = json.loads(result.json_path.read_text())
    assert document["steps"] == document["best_step"] < 40
    assert "--max_train_steps" in result.command
    assert result.command[result.command.index("--max_train_steps") + 1] == str(document["best_step"])
    run = session.store.runs(session.name, with_series=False)[0]
    session.add_rating(run["id"], 8, step=20)
    assert session.store.ratings(session.name)[0]["step"] == 20
    session.close()


def test_older_store_gets_the_rating_step_column(tmp_path):
    path = tmp_path / "old.db"
    engine = sa.create_engine(sqlite_url(path))
    with engine.begin() as c:  # an older Bracket store: its sessions table, ratings without a step
        c.execute(sa.text("CREATE TABLE bracket_sessions (name VARCHAR(200) PRIMARY KEY)"))
        c.execute(sa.text("CREATE TABLE bracket_ratings (id INTEGER PRIMARY KEY, session VARCHAR(200), run_id INTEGER,"
                          " prompt_index INTEGER, value FLOAT, created_at FLOAT)"))
    engine.dispose()
    store = Store.open(sqlite_url(path))
    store.add_rating("s", 1, 7.0, step=30)
    assert store.ratings("s")[0]["step"] == 30
    store.close()
