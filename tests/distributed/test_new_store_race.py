"""Several processes opening one new store at the same moment all get it.

Workers on several machines — or two commands started together — open a store nobody has
made yet. Each checks for the tables, sees none and creates them; before the fix every process
but the first failed with "table bracket_sessions already exists" (or a clash on the version
row Optuna stamps into a new store), told as "Cannot open the store … check that the file is a
Bracket store". The processes here start from one barrier so their checks overlap.
"""

from __future__ import annotations

import multiprocessing

import pytest

PROCESSES = 4
ROUNDS = 3


def _open_at_once(url: str, barrier, results) -> None:
    from bracket.session.store import Store

    barrier.wait(timeout=120)
    try:
        store = Store.open(url)
        store.study("race")  # Optuna's tables answer too
        store.close()
        results.put("ok")
    except Exception as error:  # noqa: BLE001 - the test reports what the process saw
        results.put(f"{type(error).__name__}: {error}")


def _race(url: str) -> list[str]:
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(PROCESSES), context.Queue()
    processes = [context.Process(target=_open_at_once, args=(url, barrier, results)) for _ in range(PROCESSES)]
    for process in processes:
        process.start()
    outcomes = [results.get(timeout=300) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    return outcomes


def test_processes_opening_a_new_sqlite_store_at_once_all_open_it(tmp_path):
    for round_ in range(ROUNDS):
        folder = tmp_path / f"round{round_}"
        folder.mkdir()
        outcomes = _race(f"sqlite:///{folder / 'bracket.db'}")
        assert outcomes == ["ok"] * PROCESSES, outcomes


def test_workers_opening_a_new_postgresql_store_at_once_all_open_it(postgres, monkeypatch):
    monkeypatch.setenv("PGPASSWORD", postgres.password)
    for round_ in range(ROUNDS):
        outcomes = _race(postgres.create_database(f"race_{round_}"))
        assert outcomes == ["ok"] * PROCESSES, outcomes


def test_a_session_name_another_process_just_took_is_one_clear_error(tmp_path):
    """Two commands that start a search of one name at once both pass the "is it there?" check;
    the second insert used to surface as SQLAlchemy's IntegrityError traceback."""
    from bracket.errors import StoreError
    from bracket.session.store import Store

    url = f"sqlite:///{tmp_path / 'bracket.db'}"
    first, second = Store.open(url), Store.open(url)
    try:
        first.create_session("race", preset_id="demo-cpu", fields={}, settings={})
        with pytest.raises(StoreError, match="A session named 'race' already exists in this store"):
            second.create_session("race", preset_id="demo-cpu", fields={}, settings={"budget": 9})
        assert second.get_session("race")["settings"] == {}, "the first one's row is untouched"
    finally:
        first.close()
        second.close()
