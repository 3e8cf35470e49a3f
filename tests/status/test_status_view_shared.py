"""The status view lives in the store (issue 24, several machines sharing one search): a view
refreshed through one session folder is found current by ``status`` in another folder of the
same store; keeping it never moves the store's change marker; a store from before the views
table still gives the right answer (read-only: computed each time; writable: given the table)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import sqlalchemy as sa

from bracket.session.store import Store, sqlite_url
from bracket.status import refresh as status_refresh
from bracket.status import view as status_view
from tests.fakes.view_helpers import cold_copy, execute, kept_row, status_outputs

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def filled(filled_demo_session) -> Path:
    return filled_demo_session(8, name="shared", points=30)


def _second_folder(folder: Path, tmp_path: Path) -> Path:
    """Another machine's folder of the same search: its own ``session.json``, naming the first's store."""
    other = tmp_path / "machine-b" / folder.name
    other.mkdir(parents=True)
    info = {"name": folder.name, "storage": sqlite_url(folder / "bracket.db")}
    (other / "session.json").write_text(json.dumps(info), encoding="utf-8")
    return other


def _refresh_through(folder: Path, change=None) -> None:
    """What a worker does in its own folder: change the store (``change(session)``), then keep the view."""
    from bracket.session import Session

    session = Session.open(folder, validate=False)
    try:
        if change is not None:
            change(session)
        refresher = status_refresh.ViewRefresher()
        refresher(session)
        assert not refresher.failed
    finally:
        session.close()


def test_a_view_kept_through_one_folder_is_current_in_another_folder_of_the_store(filled, tmp_path, capsys,
                                                                                 monkeypatch):
    other = _second_folder(filled, tmp_path)
    _refresh_through(filled)
    cold = status_outputs(cold_copy(filled, tmp_path), capsys)
    assert status_outputs(other, capsys, kept_only=True) == cold
    assert not (other / "views").exists()  # nothing of it is kept in the folder

    def rate(session) -> None:  # a change made on the first machine, the view refreshed there
        session.add_rating(session.store.runs(session.name, with_series=False)[2]["id"], 9.0)

    _refresh_through(filled, rate)
    rated = status_outputs(other, capsys, kept_only=True)
    assert rated == status_outputs(cold_copy(filled, tmp_path), capsys)
    assert rated != cold and "rating 9.0" in rated[0]


def test_keeping_the_view_leaves_the_change_marker_as_it_was(filled, capsys, monkeypatch):
    from bracket.session.store import open_session_store

    store, name = open_session_store(filled)
    try:
        before = store.change_marker(name)
        key = status_view.view_key(store, name, None)
        assert store.keep_view(name, "status", json.dumps(key), {"lines": ["x"]})
        assert store.keep_view(name, "status", json.dumps(key), {"lines": ["y"]})  # replaced: an upsert
        assert store.change_marker(name) == before
        assert store.kept_view(name, "status", json.dumps(key)) == {"lines": ["y"]}
        assert store.kept_view(name, "status", json.dumps([*key, 1])) is None  # another key: stale
    finally:
        store.close()
    execute(filled, "DELETE FROM bracket_views")
    status_outputs(filled, capsys)  # computed and kept by the full command ...
    assert kept_row(filled) is not None
    status_outputs(filled, capsys, kept_only=True)  # ... and current right after


def _as_an_older_bracket_left_it(folder: Path) -> None:
    engine = sa.create_engine(sqlite_url(folder / "bracket.db"))
    with engine.begin() as c:
        c.execute(sa.text("DROP TABLE bracket_views"))
        c.execute(sa.text("DROP TABLE bracket_schema"))  # nor a schema version
        c.execute(sa.text("PRAGMA journal_mode=DELETE"))  # no WAL files: the folder can be made read-only
    engine.dispose()


def test_an_older_read_only_store_without_the_views_table_gives_the_right_status(filled, tmp_path, capsys,
                                                                                 monkeypatch):
    cold = status_outputs(cold_copy(filled, tmp_path), capsys)
    _as_an_older_bracket_left_it(filled)
    path = filled / "bracket.db"
    before = path.read_bytes()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: False if mode & os.W_OK and
                        str(p).startswith(str(filled)) else real(p, mode, *a, **k))
    store = Store.open(sqlite_url(path), create=False)
    try:
        assert store.read_only and "bracket_views" in store.absent
        assert store.kept_view("shared", "status", "[]") is None
        assert store.keep_view("shared", "status", "[]", {}) is False
    finally:
        store.close()
    assert status_outputs(filled, capsys) == cold  # computed: no view to keep
    assert status_outputs(filled, capsys) == cold
    assert path.read_bytes() == before


def test_an_older_writable_store_is_given_the_views_table(filled, tmp_path, capsys, monkeypatch):
    cold = status_outputs(cold_copy(filled, tmp_path), capsys)
    _as_an_older_bracket_left_it(filled)
    assert status_outputs(filled, capsys) == cold
    assert kept_row(filled) is not None
    assert status_outputs(filled, capsys, kept_only=True) == cold
