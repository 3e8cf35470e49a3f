"""The process that changes a store keeps ``status``'s view current (issue 24): a CLI search
after each run's trainer started, when a pause takes effect, when a worker waits for others, when
a judge's scores land, and at its end, the app after a rating or a pairwise choice;
``status`` then answers from the kept view (the full command is never reached), and what it
answers equals a cold computation. A view that cannot be written never stops a search."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest

from bracket import cli
from bracket.session.store import open_session_store
from bracket.status import refresh as status_refresh
from bracket.status import view as status_view
from tests.fakes.view_helpers import cold_status, status_outputs

pytestmark = pytest.mark.timeout(240)


def _sets(fields: dict[str, str]) -> list[str]:
    return [arg for name, value in fields.items() for arg in ("--set", f"{name}={value}")]


def _current(folder: Path) -> bool:
    """The kept view is the one ``status`` would answer from now."""
    store, name = open_session_store(folder)
    try:
        weights = ((store.get_session(name) or {}).get("settings") or {}).get("weights")
        return status_view.kept_view(store, name, status_view.view_key(store, name, weights)) is not None
    finally:
        store.close()


def test_a_cli_search_leaves_the_view_current_during_and_after_it(capsys, demo_fields, runs_dir, tmp_path,
                                                                   monkeypatch):
    refreshed: list[bool] = []
    original = status_refresh.ViewRefresher._refresh

    def probe(self, session):  # right after each refresh: would status answer from the view?
        original(self, session)
        refreshed.append(_current(session.folder))

    monkeypatch.setattr(status_refresh.ViewRefresher, "_refresh", probe)
    code = cli.main(["run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "3", "--steps", "8",
                     "--seeds", "1", "--name", "kept", "--out", str(runs_dir), "--quiet"])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    assert refreshed == [True] * 4  # once per run, while it trained, and once at the end
    folder = runs_dir / "kept"
    assert status_outputs(folder, capsys, kept_only=True) == cold_status(folder, capsys, tmp_path)


def test_a_rating_and_a_choice_through_the_app_refresh_the_view(capsys, demo_fields, runs_dir, tmp_path,
                                                                 monkeypatch):
    from bracket.app.manager import SessionManager

    assert cli.main(["run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "3", "--steps", "8",
                     "--seeds", "1", "--name", "rated", "--out", str(runs_dir), "--quiet"]) == 0
    capsys.readouterr()
    folder = runs_dir / "rated"
    manager = SessionManager(runs_dir)
    try:
        manager.open(folder)
        runs = [r["id"] for r in manager.compare.scorable_runs()]
        assert len(runs) == 3
        manager.compare.rate(runs[0], 9.0)
        manager.wait_for_background(60)
        assert _current(folder)
        after_rating = status_outputs(folder, capsys, kept_only=True)
        assert after_rating == cold_status(folder, capsys, tmp_path)
        manager.compare.choose(runs[1], runs[2], "left")
        manager.wait_for_background(60)
        assert _current(folder)
        after_choice = status_outputs(folder, capsys, kept_only=True)
        assert after_choice == cold_status(folder, capsys, tmp_path) and after_choice != after_rating
    finally:
        manager.close()


def test_a_view_that_cannot_be_written_never_stops_a_search(capsys, demo_fields, runs_dir, caplog, monkeypatch):
    import sqlalchemy as sa

    from bracket.session.store import Records

    def locked(*_args, **_kwargs):  # every write of the view fails
        raise sa.exc.OperationalError("INSERT INTO bracket_views ...", {}, Exception("database is locked"))

    monkeypatch.setattr(Records, "keep_view", locked)
    folder = runs_dir / "blocked"
    with caplog.at_level(logging.WARNING, logger="bracket.status.refresh"):
        code = cli.main(["run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "2", "--steps", "8",
                         "--seeds", "1", "--out", str(runs_dir), "--name", "blocked", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and "finished — 2/2 runs" in out
    warnings = [r for r in caplog.records if r.name == "bracket.status.refresh"]
    assert len(warnings) == 1 and "status computes it when asked" in warnings[0].getMessage()
    assert cli.main(["status", str(folder)]) == 0  # computed, as without a view
    assert "2/2 runs spent" in capsys.readouterr().out


def test_a_pause_and_a_late_judge_score_leave_the_view_current(capsys, demo_fields, runs_dir, tmp_path,
                                                               monkeypatch):
    import threading

    from bracket.judge.base import JudgeResult
    from bracket.session import SearchSettings, Session

    settings = SearchSettings(budget=2, steps=8, seeds=1, confirm=0,
                              vlm={"enabled": True, "base_url": "http://127.0.0.1:9", "model": "fake"})
    session = Session.create("demo-cpu", demo_fields, settings, out_dir=runs_dir)
    release = threading.Event()

    class LateJudge:  # the VLM cannot run here: its scores land when the test releases them
        def score_run(self, pairs):
            release.wait(60)
            return JudgeResult(0.75)

    assert session.vlm is not None
    session.vlm.judge = LateJudge()
    calls: list[bool] = []
    told = threading.Condition()

    def probe(s):  # after the refresher: counts the changes told, pauses at the first run's start
        with told:
            calls.append(_current(s.folder))
            told.notify_all()
        if len(calls) == 1:
            s.pause()

    def wait_for(count: int) -> None:
        with told:
            assert told.wait_for(lambda: len(calls) >= count, timeout=120), f"{len(calls)} changes told"

    session.on_change += [status_refresh.ViewRefresher(), probe]
    session.start()
    try:
        wait_for(2)  # the first run finished and was scored, then the pause took effect
        assert calls == [True, True] and session.paused
        after_pause = status_outputs(session.folder, capsys, kept_only=True)
        assert after_pause == cold_status(session.folder, capsys, tmp_path)
        release.set()  # the judge's scores of that run land now, after the view was written
        wait_for(3)
        assert calls == [True, True, True]
        time.sleep(0.2)  # nothing else is told while paused
        assert len(calls) == 3
        after_judge = status_outputs(session.folder, capsys, kept_only=True)
        assert after_judge == cold_status(session.folder, capsys, tmp_path) and after_judge != after_pause
    finally:
        release.set()
        session.unpause()
        assert session.wait(120)
        judged = session.store.runs(session.name, with_series=False)[0]["judges"]["vlm"]
        session.close()
    assert judged["score"] == 0.75


def test_a_worker_that_waits_for_other_workers_refreshes_the_view_once(demo_fields, runs_dir, monkeypatch):
    from bracket.session import SearchSettings, Session
    from bracket.session import session as session_module

    monkeypatch.setattr(session_module, "WAIT_SECONDS", 0.02)  # it looks again often: still told once
    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=1, steps=8, seeds=1, confirm=0),
                             out_dir=runs_dir)
    # the budget's one config is being trained by another live worker: this one waits for it
    session.store.heartbeat(session.name, "other-host:1", host="other-host", pid=1)
    session.store.add_config(session.name, trial_number=0, kind="baseline", name="theirs", params={},
                             worker="other-host:1")
    calls: list[tuple[str, bool]] = []
    session.on_change += [status_refresh.ViewRefresher(), lambda s: calls.append((s.phase, _current(s.folder)))]
    looked: list[str] = []
    turned = threading.Condition()

    def look() -> None:  # the loop's look for work, each time round
        with turned:
            looked.append(session.phase)
            turned.notify_all()

    session.before_turn.append(look)
    session.start()
    try:
        with turned:  # 25 looks while it waits
            assert turned.wait_for(lambda: looked.count("waiting for other workers") >= 25, timeout=120), looked[-3:]
        assert calls == [("waiting for other workers", True)]
    finally:
        session.stop()
        assert session.wait(60)
        session.close()
