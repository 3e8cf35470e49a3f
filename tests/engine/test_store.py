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
