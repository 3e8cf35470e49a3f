"""The store's schema version and ordered migrations (``bracket.session.store.migrations``):
a store made by the previous release opens, is brought up to date and stamped; a store of a
newer Bracket is refused with one line; a new store is stamped at the latest version."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from bracket.errors import StoreError
from bracket.session.store import Store, sqlite_url
from bracket.session.store.migrations import LATEST, MIGRATIONS, stamp, stored_version

STORES = Path(__file__).resolve().parent / "stores"


def _version(path: Path) -> int | None:
    engine = sa.create_engine(sqlite_url(path))
    try:
        with engine.connect() as connection:
            return stored_version(connection)
    finally:
        engine.dispose()


def _previous_release_session(folder: Path) -> Path:
    """The session folder a demo search of the release before schema versions left (its store
    as an SQL dump in tests/session/stores/, made by that release's ``bracket run``)."""
    folder.mkdir()
    with sqlite3.connect(folder / "bracket.db") as connection:
        connection.executescript((STORES / "previous_release.sql").read_text(encoding="utf-8"))
    connection.close()
    (folder / "session.json").write_text(json.dumps({"name": "prev", "storage": "bracket.db"}), encoding="utf-8")
    return folder


def test_the_migrations_are_numbered_in_order():
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    assert LATEST == MIGRATIONS[-1].version


def test_a_new_store_is_stamped_at_the_latest_version(tmp_path):
    Store.open(sqlite_url(tmp_path / "bracket.db")).close()
    assert _version(tmp_path / "bracket.db") == LATEST


def test_a_store_of_the_previous_release_opens_is_migrated_and_reads(tmp_path, capsys):
    from bracket import cli

    folder = _previous_release_session(tmp_path / "prev")
    assert _version(folder / "bracket.db") is None  # that release kept no version
    store = Store.open(sqlite_url(folder / "bracket.db"), create=False)
    try:
        runs = store.runs("prev")
        assert runs and all(run["status"] == "done" for run in runs)
        assert store.absent == frozenset()
    finally:
        store.close()
    assert _version(folder / "bracket.db") == LATEST
    assert cli.main(["status", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "prev" in out and "winner" in out.lower()


def test_an_old_store_without_the_later_columns_gets_them(tmp_path):
    path = tmp_path / "bracket.db"
    Store.open(sqlite_url(path)).close()
    engine = sa.create_engine(sqlite_url(path))
    with engine.begin() as connection:  # as the first release wrote it: no later columns, no version
        for column in ("launches", "pause_step", "restart_steps"):
            connection.execute(sa.text(f"ALTER TABLE bracket_runs DROP COLUMN {column}"))
        connection.execute(sa.text("DROP TABLE bracket_schema"))
    engine.dispose()
    store = Store.open(sqlite_url(path), create=False)
    try:
        run_id = store.add_run("s", kind="search", status="paused", pause_step=4, launches=1)
        assert store.get_run(run_id)["pause_step"] == 4
    finally:
        store.close()
    assert _version(path) == LATEST


def test_a_store_of_a_newer_bracket_is_refused_with_one_line(tmp_path):
    path = tmp_path / "bracket.db"
    Store.open(sqlite_url(path)).close()
    engine = sa.create_engine(sqlite_url(path))
    with engine.begin() as connection:
        stamp(connection, LATEST + 3)
    engine.dispose()
    with pytest.raises(StoreError) as raised:
        Store.open(sqlite_url(path), create=False)
    message = str(raised.value)
    assert "newer Bracket" in message and f"version {LATEST + 3}" in message and "\n" not in message
    assert _version(path) == LATEST + 3  # nothing was changed
