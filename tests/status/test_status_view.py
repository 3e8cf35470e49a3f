"""``status`` answers from what it keeps (the status view, in the store; the run summaries, in
``<session>/views``) exactly what a cold computation from the store alone answers (issue 24):
after a new loss point, a new trial, a rating, a pairwise choice, a judge weight change, with a
damaged or a foreign kept view, and when two processes write them at once."""

from __future__ import annotations

import gc
import json
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bracket.errors import DamagedRowError
from bracket.session.scoring.summaries import SUMMARY_FILE
from bracket.session.store import open_session_store
from tests.fakes.view_helpers import cold_status, execute, kept_row, status_outputs

pytestmark = pytest.mark.timeout(240)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def filled(runs_dir, demo_fields) -> Path:
    """A session of 10 finished search configs, two with samples at steps 10 and 20."""
    from bracket.session import SearchSettings, Session
    from tests.fakes.filled_store import fill_store

    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=14, sample_prompts="", warm_start=False),
                             out_dir=runs_dir, name="viewed")
    fill_store(session, 10, 30)
    for run in session.store.runs(session.name)[:2]:
        session.store.update_run(run["id"], samples=[{"path": f"/x/{run['id']}-{s}.png", "step": s, "prompt_index": 0}
                                                     for s in (10, 20)])
    folder = session.folder
    session.close()
    return folder


def _kept_equals_cold(folder: Path, capsys, tmp_path: Path) -> tuple[str, str]:
    kept = status_outputs(folder, capsys)
    assert kept == cold_status(folder, capsys, tmp_path)
    return kept


def _store(folder: Path):
    return open_session_store(folder)


def test_each_change_gives_the_answer_a_cold_computation_gives(filled, capsys, tmp_path):
    first = _kept_equals_cold(filled, capsys, tmp_path)
    assert kept_row(filled) is not None and (filled / SUMMARY_FILE).is_file()
    store, name = _store(filled)
    try:
        runs = [r for r in store.runs(name, with_series=False) if r["kind"] != "setup"]
        config = store.add_config(name, trial_number=10, kind="search", name="search-10",
                                  params=dict(runs[0]["params"]), worker="test")
        running = store.add_run(name, config_id=config, kind="search", stage="search", label="search-10 seed 42",
                                seed=42, seed_index=0, params=dict(runs[0]["params"]), status="running",
                                max_steps=30, last_step=3, started_at=time.time(), loss=[[1, 2.0], [2, 1.9], [3, 1.8]],
                                worker="test")
        new_trial = _kept_equals_cold(filled, capsys, tmp_path)  # a new trial, its run under way
        assert new_trial != first
        store.update_run(running, last_step=4, loss=[[1, 2.0], [2, 1.9], [3, 1.8], [4, 1.7]])
        assert _kept_equals_cold(filled, capsys, tmp_path) == new_trial  # a new point: shown nowhere in status
        store.update_run(running, status="done", exit_code=0, last_step=30, finished_at=time.time(), duration_s=1.0,
                         loss=[[s, 2.0 - s / 40] for s in range(1, 31)])
        finished = _kept_equals_cold(filled, capsys, tmp_path)
        assert finished != new_trial
        store.add_rating(name, runs[3]["id"], 9.0)
        rated = _kept_equals_cold(filled, capsys, tmp_path)
        assert rated != finished and "rating 9.0" in rated[0]
        store.add_comparison(name, runs[4]["id"], runs[5]["id"], "left")
        compared = _kept_equals_cold(filled, capsys, tmp_path)
        assert compared != rated
        settings = dict(store.get_session(name)["settings"])
        store.update_session(name, settings={**settings, "weights": {"loss": 1.0, "human": 3.0}})
        weighted = _kept_equals_cold(filled, capsys, tmp_path)
        assert weighted != compared
    finally:
        store.close()


@pytest.mark.parametrize("damage", ["garbage", "empty", "list", "foreign"])
def test_a_damaged_or_foreign_kept_view_is_ignored_and_rebuilt(filled, capsys, tmp_path, runs_dir, demo_fields,
                                                                 damage):
    cold = cold_status(filled, capsys, tmp_path)
    status_outputs(filled, capsys)  # keeps the view and the summaries
    if damage == "foreign":  # the views of another session, whose runs have the same ids
        from bracket.session import SearchSettings, Session
        from tests.fakes.filled_store import fill_store

        other = Session.create("demo-cpu", demo_fields, SearchSettings(budget=14, sample_prompts="", warm_start=False),
                               out_dir=runs_dir, name="other")
        fill_store(other, 10, 30, seed=7)
        other_folder = other.folder
        other.close()
        status_outputs(other_folder, capsys)
        shutil.copyfile(other_folder / SUMMARY_FILE, filled / SUMMARY_FILE)
        (key, data), name = kept_row(other_folder), "viewed"
        execute(filled, "UPDATE bracket_views SET key_json = ?, data_json = ? WHERE session = ?",
                (json.dumps(key), json.dumps(data), name))
    else:  # the kept view's data damaged under its current key
        text = {"garbage": "{not json", "empty": "", "list": "[1, 2, 3]"}[damage]
        (filled / SUMMARY_FILE).write_text(text, encoding="utf-8")
        execute(filled, "UPDATE bracket_views SET data_json = ?", (text,))
    assert status_outputs(filled, capsys) == cold
    assert kept_row(filled)[1]["lines"]  # rebuilt
    assert status_outputs(filled, capsys) == cold


def test_two_processes_writing_the_views_at_once_leave_them_whole(filled, capsys, tmp_path):
    status_outputs(filled, capsys)  # a kept view ...
    store, name = _store(filled)
    try:  # ... then a change: every process finds it stale and writes it (and the summaries) again
        store.add_rating(name, store.runs(name, with_series=False)[0]["id"], 4.0)
    finally:
        store.close()
    cold = cold_status(filled, capsys, tmp_path)
    (filled / SUMMARY_FILE).unlink()
    command = [sys.executable, "-m", "bracket", "status", "--json", str(filled)]
    processes = [subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    printed = [p.communicate(timeout=180)[0] for p in processes]
    assert all(p.returncode == 0 for p in processes)
    assert printed == [cold[1]] * 3
    json.loads((filled / SUMMARY_FILE).read_text(encoding="utf-8"))  # whole JSON, never a mix of two writes
    assert kept_row(filled)[1]["lines"]
    assert not list((filled / "views").glob("*.tmp"))
    assert status_outputs(filled, capsys) == cold


def test_one_owner_per_process_keeps_the_views_of_a_store_change_without_pausing_the_collector(filled):
    from bracket.session import Session
    from bracket.session.store import CHANGE_MEMO
    from bracket.standings import standings

    session = Session.open(filled, validate=False)
    seen = []
    real = session.scores
    session.scores = lambda *a, **k: seen.append(gc.isenabled()) or real(*a, **k)
    try:
        table = standings(session)
        assert seen == [True] and gc.isenabled()  # the collector is never paused
        assert "_per_change_memo" not in vars(session)  # nothing written onto the session
        assert CHANGE_MEMO.peek(session, "standings") is table and standings(session) is table
        run_id = session.store.runs(session.name)[0]["id"]
        session.store.add_rating(session.name, run_id, 7.0)  # the store changed: built again
        assert CHANGE_MEMO.peek(session, "standings") is None and standings(session) is not table
    finally:
        session.close()


def test_the_shortcuts_give_what_the_general_code_gives():
    from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, SearchSpace
    from bracket.session.store.schema import decode
    from bracket.status.text import TABLE_WIDTH, _wrap_details

    for text in ("a=1, b=2", "x" * 94, "x" * 95, "a  b", " a", "a\tb", "a\u00a0b", "k=" + "word " * 30):
        assert _wrap_details(text) == textwrap.wrap(text, TABLE_WIDTH, initial_indent=" " * 6,
                                                    subsequent_indent=" " * 8, break_on_hyphens=False)
    for stored in ("{}", "null", "", None, '{"a": [1, {}]}'):
        row = decode({"params_json": stored})
        assert row["params"] == json.loads(stored or "null")
    for stored in ("[]", "[[]]", "0"):  # not params at all: the damaged-row line, as the general code would say
        with pytest.raises(DamagedRowError):
            decode({"params_json": stored})
    space = SearchSpace({"opt": CategoricalKnob(("AdamW", "Prodigy")), "batch": FixedKnob(2),
                         "lr": FloatKnob(1e-5, 1e-3, log=True, when={"opt": ("AdamW",)}),
                         "d": FloatKnob(0.5, 2.0, when={"opt": ("Prodigy",)})})
    for config in ({"opt": "AdamW", "batch": 2, "lr": 1e-4, "d": 1.0}, {"opt": "Prodigy", "d": 1.0, "extra": 3},
                   {"batch": 2}, {}):
        assert space.searched_params(config) == {n: config[n] for n in space.distributions(config) if n in config}


def test_the_row_decoder_and_the_line_filler_give_what_the_general_code_gives():
    import random

    from bracket.session.store.schema import decode, decode_rows
    from bracket.status.text import TABLE_WIDTH, _wrap_details

    rng = random.Random(7)  # lines of every shape around the width: words up to past what textwrap must break
    for _ in range(3000):
        words = ["".join(rng.choice("ab=,.0-") for _ in range(rng.choice((1, 3, 12, 30, 86, 92, 93, 99))))
                 for _ in range(rng.randint(1, 20))]
        text = " ".join(words)
        assert _wrap_details(text) == textwrap.wrap(text, TABLE_WIDTH, initial_indent=" " * 6,
                                                    subsequent_indent=" " * 8, break_on_hyphens=False), text
    keys = ["id", "kind", "params_json", "name", "samples_json", "label", "judges_json"]
    rows = [(1, "search", '{"lr": 0.1}', "s-1", "[]", None, "{}"), (2, "curated", "null", "past-3", None, "x", ""),
            (3, "curated", '{"a": [1]}', "mine", '[{"step": 2}]', None, '{"vlm": null}'), (4, None, "{}", None, "[]",
                                                                                            "past-1", "null")]
    decoded = decode_rows(keys, rows)
    for row, got in zip(rows, decoded):
        want = decode(dict(zip(keys, row)))
        assert got == want and list(got) == list(want)  # the same dict, its keys in the same order
    assert decoded[1]["kind"] == "past" and decoded[3]["kind"] == "None"  # as ``decode`` reads them
    assert decode_rows(["id", "kind"], []) == []


def test_one_weights_check_per_session_still_refuses_what_it_refused():
    from bracket.judge.base import JudgeResult
    from bracket.judge.combine import WeightsError, combine_scores

    result = {"loss": JudgeResult(score=0.25)}
    assert combine_scores(result, {"loss": 1, "human": 2.0}).value == 0.25  # kept for these weights
    for bad in ({"loss": True, "human": 2.0}, {"loss": float("nan"), "human": 2.0}, {"loss": -1, "human": 2.0},
                {"loss": "1", "human": 2.0}, {"loss": 0, "human": 0.0}, {"lol": 1.0}):
        with pytest.raises(WeightsError):
            combine_scores(result, bad)
    assert combine_scores(result, {"loss": 1.0, "human": 2}).weights_used == {"loss": 1.0}


def test_a_config_of_mixed_loss_bases_takes_every_run_at_its_training_loss():
    from bracket.session.scoring.best_step import loss_by_step, step_curve

    series = [[s, 1.0 / s] for s in range(1, 101)]
    runs = [{"id": 1, "status": "done", "last_step": 100, "samples": [{"step": 50}], "loss": series,
             "eval_loss": [[50, 9.0], [100, 8.0]]},  # this one logged a validation loss: not used in a mixed config
            {"id": 2, "status": "done", "last_step": 100, "samples": [{"step": 50}],
             "loss": [[s, 2 * v] for s, v in series]}]
    curve = step_curve(7, runs)
    training = [loss_by_step(r, [50, 100], validation=False)[0] for r in runs]
    assert curve.per_judge["loss"] == {s: (training[0][s] + training[1][s]) / 2 for s in (50, 100)}
    assert step_curve(7, runs[:1]).per_judge["loss"] == {50: 9.0, 100: 8.0}  # alone: its validation loss
