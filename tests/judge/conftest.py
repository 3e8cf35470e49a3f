"""The judge tests' shared fixtures."""

from __future__ import annotations

import pytest

from bracket.session.store import Store, sqlite_url


@pytest.fixture
def store(tmp_path):
    """A SQLite store with one session, ``s``, and nothing in it."""
    store = Store.open(sqlite_url(tmp_path / "bracket.db"))
    store.create_session("s", preset_id="x", fields={}, settings={})
    return store
