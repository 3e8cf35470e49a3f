"""Nothing a trainer prints may fail a write to the store (issue 16, item 5).

PostgreSQL text fields refuse NUL bytes; text decoded with ``surrogateescape`` (undecodable
bytes) cannot even be encoded for the wire. A trainer that prints a NUL (here the fake
trainer's ``binary`` mode, which then fails with exit 1) once left its run ``running`` on a
PostgreSQL store and made resume fail the same way. On a real PostgreSQL server and on
SQLite: the search finishes, the failed run's log tail is stored with U+FFFD in place of the
NUL, and the store layer takes any text for any column.
"""

from __future__ import annotations

import pytest

from bracket.session import SearchSettings, Session
from bracket.session.store import Store, sqlite_url
from tests.distributed.conftest import postgres  # noqa: F401  (the real server fixture)
from tests.fakes import write_fake_plan

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
BAD = "a\x00b \udcff c \x1b[31m d"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path, monkeypatch):
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "bracket.db")
    server = request.getfixturevalue("postgres")
    monkeypatch.setenv("PGPASSWORD", server.password)
    return server.create_database(f"text_{request.node.name[-30:].replace('[', '_').replace(']', '')}".lower())


def test_any_text_is_stored_in_every_column(store_url):
    store = Store.open(store_url)
    store.create_session("s", preset_id="demo-cpu", fields={"dataset": BAD}, settings={"prompts": BAD},
                         notes=[BAD])
    run = store.add_run("s", kind="search", label=BAD, failure_reason=BAD, log_tail=BAD)
    store.update_run(run, failure_reason=BAD + BAD, log_tail=BAD)
    stored = store.get_run(run)
    assert stored["failure_reason"] == "a\ufffdb ? c \x1b[31m da\ufffdb ? c \x1b[31m d"
    assert stored["label"] == stored["log_tail"] == "a\ufffdb ? c \x1b[31m d"
    assert store.get_session("s")["fields"]["dataset"].startswith("a\x00b")  # JSON keeps the NUL escaped
    store.close()


def test_a_trainer_printing_nul_bytes_does_not_stop_the_search(store_url, fast_fields, runs_dir, tmp_path,
                                                               monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_PLAN", str(write_fake_plan(tmp_path / "plan.json",
                                                                ["binary,exit1", "binary", "binary"])))
    settings = SearchSettings(budget=3, steps=4, seeds=1, sample_prompts="a red circle --d 1")
    session = Session.create("demo-cpu", fast_fields, settings, out_dir=runs_dir, name="nul",
                             storage_url=store_url)
    session.run()
    assert session.store.get_session("nul")["status"] == "finished", session.error
    runs = session.store.runs("nul")
    assert [r["status"] for r in runs] == ["failed", "done", "done"]
    assert "\ufffd NUL" in runs[0]["log_tail"] and "\x00" not in runs[0]["log_tail"]
    session.close()
