"""The store: worker rows per session, secrets out of URLs, malformed URLs refused."""

import pytest

from bracket.errors import StoreError
from bracket.session.store import Store, redact_url, sqlite_url


def test_one_process_working_on_two_searches_has_a_worker_row_in_each(tmp_path):
    store = Store.open(sqlite_url(tmp_path / "b.db"))
    store.heartbeat("A", "host:1", host="host", pid=1)
    store.heartbeat("B", "host:1", host="host", pid=1)
    store.heartbeat("A", "host:1", status="stopped")
    assert [(w["worker_id"], w["status"]) for w in store.workers("A")] == [("host:1", "stopped")]
    assert [(w["worker_id"], w["status"]) for w in store.workers("B")] == [("host:1", "alive")]
    store.close()


def test_urls_are_shown_without_their_password_and_bad_ones_are_refused():
    assert redact_url("postgresql+psycopg://bob:hunter2@db:5432/x") == "postgresql+psycopg://bob:***@db:5432/x"
    with pytest.raises(StoreError, match="malformed"):
        Store.open("definitely not a url")


def test_the_change_marker_moves_with_what_a_view_shows_and_only_then(tmp_path):
    store = Store.open(sqlite_url(tmp_path / "bracket.db"))
    store.create_session("s", preset_id="demo-cpu", fields={}, settings={})
    store.create_session("other", preset_id="demo-cpu", fields={}, settings={})
    marks = [store.change_marker("s")]
    assert store.change_marker("s") == marks[-1]
    config_id = store.add_config("s", trial_number=0, kind="search", name="c0", params={})
    run_id = store.add_run("s", config_id=config_id, kind="search", status="running", max_steps=20, last_step=0)
    changes = [lambda: store.update_run(run_id, last_step=5, loss=[[5, 0.5]]),
               lambda: store.update_run(run_id, status="done", finished_at=1.0),
               lambda: store.update_run(run_id, judges={"loss": 0.4}),
               lambda: store.update_run(run_id, samples=[{"path": "a.png"}]),
               lambda: store.update_config(config_id, status="done", value=0.4),
               # a rung written alone (a paused config promoted after a rating, issue 38)
               lambda: store.update_config(config_id, rung_state="promoted", rung_note="promoted: 1 of 3 at 1/9"),
               lambda: store.add_rating("s", run_id, 4.0),
               lambda: store.add_comparison("s", run_id, run_id, "left"),
               lambda: store.update_session("s", status="stopped")]
    for change in changes:
        marks.append(store.change_marker("s"))
        assert store.change_marker("s") == marks[-1]  # reading changes nothing
        change()
    marks.append(store.change_marker("s"))
    assert len(set(marks)) == len(marks)  # every change moved it
    store.add_run("other", kind="search", status="done")  # another search of a shared store
    assert store.change_marker("s") == marks[-1]
    store.close()


def test_an_older_read_only_store_without_the_rating_step_opens_and_reads(tmp_path, monkeypatch):
    """A store from before ratings had a ``step``, on a read-only folder: the column cannot be
    added, so the store opens as it is and its ratings read with ``step`` None."""
    import os

    import sqlalchemy as sa

    path = tmp_path / "old" / "bracket.db"
    path.parent.mkdir()
    store = Store.open(sqlite_url(path))
    store.add_rating("s", 3, 8.0)
    store.close()
    engine = sa.create_engine(sqlite_url(path))
    with engine.begin() as c:  # as an older Bracket wrote it: ratings without a step
        c.execute(sa.text("ALTER TABLE bracket_ratings DROP COLUMN step"))
        c.execute(sa.text("DROP TABLE bracket_schema"))  # it kept no schema version either
        c.execute(sa.text("PRAGMA journal_mode=DELETE"))
    engine.dispose()
    before = path.read_bytes()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: False if mode & os.W_OK and
                        str(p).startswith(str(path.parent)) else real(p, mode, *a, **k))
    store = Store.open(sqlite_url(path), create=False)
    try:
        assert store.read_only and store.absent == {"bracket_ratings.step"}
        assert [(r["run_id"], r["value"], r["step"]) for r in store.ratings("s")] == [(3, 8.0, None)]
    finally:
        store.close()
    assert path.read_bytes() == before  # nothing was added to the file


def test_updates_take_only_the_keywords_of_their_columns(tmp_path):
    store = Store.open(sqlite_url(tmp_path / "bracket.db"))
    store.create_session("s", preset_id="demo-cpu", fields={}, settings={})
    config_id = store.add_config("s", trial_number=0, kind="search", name="c0", params={})
    run_id = store.add_run("s", config_id=config_id, kind="search", status="running")
    with pytest.raises(TypeError, match="update_run\\(\\) got an unexpected keyword argument 'stauts'"):
        store.update_run(run_id, stauts="done")  # a typo is never a silent no-op
    with pytest.raises(TypeError, match="'rung_sate'"):
        store.update_config(config_id, rung_sate="paused")
    with pytest.raises(TypeError, match="'budget'"):
        store.update_session("s", budget=3)
    assert store.get_run(run_id)["status"] == "running"
    store.update_run(run_id, status="done", last_step=4)
    assert (store.get_run(run_id)["status"], store.get_run(run_id)["last_step"]) == ("done", 4)
    store.close()
