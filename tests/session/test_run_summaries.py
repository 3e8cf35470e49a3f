"""Per-run loss summaries kept across processes (issue 24): a reopened session reads no series
of a run it summarised, and the answer stays what a computation from the series gives — also
after a run gets a new loss point, a new last step, or a rating."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from bracket.session import Session
from bracket.session.scoring.summaries import SUMMARY_FILE
from bracket.standings import standings


@pytest.fixture
def filled(filled_demo_session) -> Path:
    """A session of 8 finished search configs (with samples at steps 10 and 20 for two of them)."""
    from bracket.session.store import open_session_store

    folder = filled_demo_session(8, name="kept", points=30, budget=10)
    store, name = open_session_store(folder)
    for run in store.runs(name)[:2]:
        store.update_run(run["id"], samples=[{"path": f"/x/{run['id']}-{s}.png", "step": s, "prompt_index": 0}
                                             for s in (10, 20)])
    store.close()
    return folder


def _answer(folder: Path, *, kept: bool, series_reads: list | None = None) -> dict:
    """The standings of a freshly opened session (as another process would see them)."""
    if not kept:
        (folder / SUMMARY_FILE).unlink(missing_ok=True)
    session = Session.open(folder, validate=False)
    if series_reads is not None:
        real = session.store.series
        session.store.series = lambda ids: series_reads.append(list(ids)) or real(ids)
    try:
        return json.loads(json.dumps(standings(session).to_dict(), default=str))
    finally:
        session.close()


def test_a_reopened_session_reads_no_series_of_runs_it_summarised_and_answers_the_same(filled):
    fresh = _answer(filled, kept=False)
    assert (filled / SUMMARY_FILE).is_file()  # written by the computation above
    reads: list = []
    assert _answer(filled, kept=True, series_reads=reads) == fresh
    assert all(ids == [] for ids in reads)


def test_a_new_loss_point_or_last_step_is_summarised_again(filled):
    _answer(filled, kept=False)
    session = Session.open(filled, validate=False)
    run = session.store.runs(session.name)[3]
    worse = [[s, v * 3.0] for s, v in run["loss"]] + [[31, 9.0]]  # the loss grew a (bad) point: it must rank last
    session.store.update_run(run["id"], loss=worse, last_step=31)
    session.close()
    reads: list = []
    after = _answer(filled, kept=True, series_reads=reads)
    assert [run["id"]] in reads  # only the changed run's series was read
    assert after == _answer(filled, kept=False)
    rows = after["stages"]["search"]["rows"]
    assert rows[-1]["runs"][0]["run_id"] == run["id"]


def test_a_run_that_ends_again_is_summarised_again(filled):
    _answer(filled, kept=False)
    session = Session.open(filled, validate=False)
    run = session.store.runs(session.name)[0]
    session.store.update_run(run["id"], loss=[[s, 5.0] for s, _ in run["loss"]], finished_at=time.time() + 1)
    session.close()
    assert _answer(filled, kept=True) == _answer(filled, kept=False)


def test_a_rating_counts_although_summaries_are_kept(filled):
    before = _answer(filled, kept=False)
    session = Session.open(filled, validate=False)
    last = before["stages"]["search"]["rows"][-1]["runs"][0]["run_id"]
    session.add_rating(last, 10.0)
    session.close()
    after = _answer(filled, kept=True)
    assert after != before and after == _answer(filled, kept=False)
    assert any(r["runs"][0]["ratings"] == 1 for r in after["stages"]["search"]["rows"])


def test_a_damaged_summary_file_is_ignored(filled):
    fresh = _answer(filled, kept=False)
    (filled / SUMMARY_FILE).write_text("{not json", encoding="utf-8")
    assert _answer(filled, kept=True) == fresh
    assert json.loads((filled / SUMMARY_FILE).read_text(encoding="utf-8"))["runs"]  # rewritten
