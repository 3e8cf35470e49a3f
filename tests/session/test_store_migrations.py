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


def _session_row(path: Path) -> tuple[dict, object]:
    with sqlite3.connect(path) as connection:
        settings, plan = connection.execute("SELECT settings_json, plan_json FROM bracket_sessions").fetchone()
    connection.close()
    return json.loads(settings), None if plan is None else json.loads(plan)


def test_the_previous_release_session_resumes_with_nested_settings_and_no_facts_in_them(tmp_path, demo_fields):
    from bracket.session import Session

    folder = _previous_release_session(tmp_path / "prev")
    with sqlite3.connect(folder / "bracket.db") as connection:  # its demo trainer, here
        connection.execute("UPDATE bracket_sessions SET fields_json = ?", (json.dumps(demo_fields),))
    connection.close()
    session = Session.open(folder)
    try:
        assert session.settings.halving is None and not session.facts.restarts
        done = len(session.store.runs("prev"))
        assert session.run() == "finished" and len(session.store.runs("prev")) == done  # its budget was spent
        assert session.budget.label(session.view()) == "2/2 runs"
    finally:
        session.close()
    settings, plan = _session_row(folder / "bracket.db")
    assert settings["halving"] is None and plan is None
    assert not {"eta", "smallest_rung", "launch_share", "restarts", "rung_every"} & set(settings)


def _flat_halving_store(tmp_path: Path) -> Path:
    """The previous release's store with the settings a halving session of that release kept: flat,
    the trainer's facts written into them."""
    folder = _previous_release_session(tmp_path / "prev")
    with sqlite3.connect(folder / "bracket.db") as connection:
        (text,) = connection.execute("SELECT settings_json FROM bracket_sessions").fetchone()
        flat = {**json.loads(text), "halving": True, "eta": 2, "smallest_rung": 0.25, "launch_share": 0.1,
                "restarts": True, "rung_every": 2}
        connection.execute("UPDATE bracket_sessions SET settings_json = ?", (json.dumps(flat),))
    connection.close()
    return folder


def test_an_old_halving_session_gets_nested_settings_and_its_trainer_facts_move_to_the_plan(tmp_path):
    from bracket.session.create import open_session
    from bracket.session.search_settings import HalvingSettings

    folder = _flat_halving_store(tmp_path)
    parts = open_session(folder, validate=False)
    parts.store.close()
    assert parts.settings.halving == HalvingSettings(eta=2, smallest_rung=0.25, launch_share=0.1)
    assert parts.facts.restarts and parts.facts.rung_every == 2
    settings, plan = _session_row(folder / "bracket.db")
    assert settings["halving"] == {"eta": 2, "smallest_rung": 0.25, "launch_share": 0.1}
    assert plan == {"restarts": True, "rung_every": 2}
    assert not {"eta", "restarts", "rung_every"} & set(settings)


def test_a_read_only_old_halving_store_reads_as_the_migration_writes_it(tmp_path, monkeypatch):
    import os

    from bracket.session.create import parts_from_store

    folder = _flat_halving_store(tmp_path)
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: False if mode & os.W_OK and
                        str(p).startswith(str(folder)) else real(p, mode, *a, **k))
    store = Store.open(sqlite_url(folder / "bracket.db"), create=False)
    try:
        assert store.read_only and "bracket_sessions.plan_json" in store.absent  # nothing was added
        parts = parts_from_store(store, "prev", folder, validate=False)
        assert parts.settings.halving is not None and parts.settings.halving.eta == 2
        assert parts.facts.restarts and parts.facts.rung_every == 2
    finally:
        store.close()
    assert _version(folder / "bracket.db") is None
