"""The status view kept in a PostgreSQL store (issue 24): what a worker keeps through its folder
is current for ``status`` in another machine's folder; keeping it is an upsert that leaves the
change marker as it was; a store from before the views table is given it when opened."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from bracket.session import SearchSettings, Session
from bracket.session.store import Store, open_session_store
from bracket.status import refresh as status_refresh
from tests.fakes.view_helpers import status_outputs

pytestmark = pytest.mark.slow


def test_a_view_kept_on_one_machine_is_current_on_another(postgres, demo_fields, tmp_path, capsys, monkeypatch):
    from tests.fakes.filled_store import fill_store

    monkeypatch.setenv("PGPASSWORD", postgres.password)
    url = postgres.create_database("shared_view")
    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=8, sample_prompts="", warm_start=False),
                             out_dir=tmp_path / "machine-a", name="viewed", storage_url=url)
    fill_store(session, 6, 20)
    session.close()
    first = session.folder
    second = tmp_path / "machine-b" / "viewed"  # a worker's folder there, as `bracket worker` writes it
    second.mkdir(parents=True)
    (second / "session.json").write_text(json.dumps({"name": "viewed", "storage": url}), encoding="utf-8")

    engine = sa.create_engine(url)
    with engine.begin() as c:  # as an older Bracket left the store: no views table
        c.execute(sa.text("DROP TABLE bracket_views"))
        c.execute(sa.text("DROP TABLE bracket_schema"))  # nor a schema version
    engine.dispose()
    cold = status_outputs(first, capsys)  # computed; the store is given the table
    assert status_outputs(second, capsys, kept_only=True) == cold

    again = Session.open(first, validate=False)
    try:
        marker = again.store.change_marker("viewed")
        again.add_rating(again.store.runs("viewed", with_series=False)[1]["id"], 2.0)
        assert again.store.change_marker("viewed") != marker
        marker = again.store.change_marker("viewed")
        refresher = status_refresh.ViewRefresher()
        refresher(again)  # kept on machine A: an upsert of the row
        assert not refresher.failed and again.store.change_marker("viewed") == marker
    finally:
        again.close()
    rated = status_outputs(second, capsys, kept_only=True)
    assert rated != cold and "rating 2.0" in rated[0]
    store, name = open_session_store(second)
    try:
        assert store.absent == frozenset()
        with store.engine.connect() as c:
            assert c.execute(sa.text("SELECT count(*) FROM bracket_views")).scalar() == 1
    finally:
        store.close()
    Store.open(url, create=False).close()  # opening again finds the table there


#: hand edits of a PostgreSQL store's rows after a view was kept (issue 44, guarantee 6): text that
#: is not JSON (the database's own cast to json fails), a list for a dict, a number out of range
PG_HAND_DAMAGE = (
    "UPDATE bracket_runs SET params_json = '{hand' WHERE id = (SELECT min(id) FROM bracket_runs)",
    "UPDATE bracket_configs SET params_json = '[]' WHERE id = (SELECT min(id) FROM bracket_configs)",
    "UPDATE bracket_runs SET pause_step = -4 WHERE id = (SELECT min(id) FROM bracket_runs)",
    "UPDATE bracket_runs SET started_at = 'Infinity' WHERE id = (SELECT min(id) FROM bracket_runs)",
)


def test_a_row_damaged_by_hand_after_the_view_was_kept_gives_the_one_line_error(postgres, demo_fields, tmp_path,
                                                                                 capsys, monkeypatch):
    from bracket.cli import main
    from tests.fakes.filled_store import fill_store

    monkeypatch.setenv("PGPASSWORD", postgres.password)
    url = postgres.create_database("damaged_view")
    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=6, sample_prompts="", warm_start=False),
                             out_dir=tmp_path, name="damaged", storage_url=url)
    fill_store(session, 4, 10)
    folder = session.folder
    session.close()
    kept = status_outputs(folder, capsys)  # computed and kept
    assert status_outputs(folder, capsys, kept_only=True) == kept
    engine = sa.create_engine(url)
    try:
        for damage in PG_HAND_DAMAGE:
            with engine.connect() as c:
                before = c.execute(sa.text("SELECT * FROM bracket_runs ORDER BY id")).all(), \
                    c.execute(sa.text("SELECT * FROM bracket_configs ORDER BY id")).all()
            with engine.begin() as c:
                c.execute(sa.text(damage))
            for extra in ([], ["--json"]):
                code = main(["status", *extra, str(folder)])
                out, err = capsys.readouterr()
                assert code in (1, 2) and not out, (damage, code, out, err)
                assert err.startswith("error: The session's store is damaged (") and len(err.splitlines()) == 1, \
                    (damage, err)
            with engine.begin() as c:  # mended by hand again: the kept view is served as before
                for table, rows in zip(("bracket_runs", "bracket_configs"), before):
                    c.execute(sa.text(f"DELETE FROM {table}"))
                    columns = list(rows[0]._fields)
                    c.execute(sa.text(f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
                                      f"({', '.join(':' + n for n in columns)})"), [r._asdict() for r in rows])
            assert status_outputs(folder, capsys, kept_only=True) == kept, damage
    finally:
        engine.dispose()
