"""Several workers sharing one search through a database server (PostgreSQL).

A search created with an external store (``--storage postgresql+psycopg://…``) can be
worked on by any number of ``python -m bracket worker`` processes — one per GPU, on one or
many machines. They cooperate only through the store:

- **Configurations.** A new configuration is *reserved* under a row lock on the session
  (``SELECT … FOR UPDATE``): the worker counts the configurations already handed out and
  only asks the :class:`~bracket.search.controller.SearchController` for a new one while
  that count is below the budget, so the budget is never overshot however many workers
  ask at once. Warm-start configs are waiting Optuna trials, popped exactly once by
  Optuna itself under the same kind of lock.
- **Orphans.** A configuration whose worker stopped beating for longer than the grace
  period is *claimed* by one other worker with a compare-and-set on its owner column, so
  two survivors never both re-run it; its interrupted run does not spend budget.
- **Pre-caching.** A setup step another live worker is running is waited for, not run
  twice (the cache is shared through the dataset folder, at the same path everywhere;
  ``WorkerProtocol.setup_done_elsewhere`` in ``bracket.session.worker``).
- **Artifacts.** Run folders are named by the run's database id, unique across workers,
  so every worker can write into one shared runs folder (a network mount at the same path
  on every machine); the store keeps their absolute paths, loss series and samples.

SQLite has no ``SELECT … FOR UPDATE`` and breaks on network file systems (see Optuna's
FAQ), so joining a search as a worker is refused on anything but PostgreSQL.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import sqlalchemy as sa

from bracket import settings as app_settings
from bracket.errors import BracketError, StoreError
from bracket.search.types import Proposal
from bracket.session.create import (
    SESSION_FILE,
    SessionParts,
    check_writable,
    parts_from_store,
    write_session_file,
)
from bracket.session.store import Store, redact_url
from bracket.session.store.schema import configs_table, sessions_table

#: database backends on which several workers may share one search
SHARED_BACKENDS = ("postgresql",)


def require_shared_storage(url: str) -> None:
    """Raise unless ``url`` names a database that several workers can share safely."""
    try:
        backend = sa.engine.make_url(url).get_backend_name()
    except Exception:  # noqa: BLE001 - any parse error is the person's URL
        raise StoreError(f"Storage URL {redact_url(url)!r} is malformed; use "
                         "postgresql+psycopg://USER@HOST:5432/DATABASE (password in PGPASSWORD).") from None
    if backend not in SHARED_BACKENDS:
        raise StoreError(
            f"Workers need a PostgreSQL store, not {backend}: SQLite cannot hand out configurations to several "
            "processes safely (it has no SELECT ... FOR UPDATE, and it corrupts on network file systems). Create "
            "the search with --storage postgresql+psycopg://USER@HOST:5432/DATABASE, or run a SQLite search with "
            "a single `python -m bracket resume`.")


def worker_lock_name(gpu: str) -> str:
    """The lock file of a worker in the session folder: one worker per GPU and machine."""
    host = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in socket.gethostname())
    return f".worker-{host}-gpu{gpu}.lock" if gpu else f".worker-{host}-cpu.lock"


def join_session(storage_url: str, name: str, runs_dir: Path | None = None) -> SessionParts:
    """Open session ``name`` from a shared store, with ``<runs_dir>/<name>`` as its local folder."""
    require_shared_storage(storage_url)
    store = Store.open(storage_url, create=False)
    if store.get_session(name) is None:
        known = ", ".join(store.session_names()[-10:]) or "none"
        store.close()
        raise StoreError(f"The store {redact_url(storage_url)} holds no session named {name!r} (sessions there: "
                         f"{known}); create it first in the app or with `python -m bracket run --storage ...`.")
    folder = app_settings.absolute_path(runs_dir or app_settings.get_settings().runs_dir) / name
    try:
        check_writable(folder)
    except BracketError:
        store.close()
        raise
    if not (folder / SESSION_FILE).is_file():
        row = store.get_session(name) or {}
        write_session_file(folder, name, str(row.get("preset_id", "")), storage_url)
    return parts_from_store(store, name, folder, validate=True)


def claim_config(store: Store, config_id: int, owner: str, worker: str) -> bool:
    """Make ``worker`` the owner of a config still owned by ``owner``; False if another won."""
    with store.engine.begin() as c:
        result = c.execute(configs_table.update()
                           .where(configs_table.c.id == config_id, configs_table.c.worker == owner,
                                  configs_table.c.status == "running")
                           .values(worker=worker))
        return result.rowcount == 1


@contextlib.contextmanager
def session_row_locked(store: Store, session: str) -> Iterator[None]:
    """Hold the lock on ``session``'s row (``SELECT … FOR UPDATE``) for the ``with`` body, so no
    other worker decides on the same view meanwhile (a halving search's promotions: read the
    rungs, check the budget, claim the paused runs). The body reads and claims runs only: a write
    to the session's row from another connection would wait for this lock. A no-op on SQLite
    (one process per session there)."""
    with store.engine.begin() as c:
        c.execute(sa.select(sessions_table.c.name).where(sessions_table.c.name == session).with_for_update())
        yield


def reserve_config(store: Store, session: str, *, limit: Callable[[], int], worker: str,
                   propose: Callable[[], Proposal]) -> int | None:
    """Record the next configuration of ``session`` unless ``limit()`` are handed out already.

    ``limit`` (what the budget buys, read from the store) is asked, the configs counted and the new
    one inserted under the lock on the session's row — the lock a halving search's promotions are
    decided under — so no two workers hand out the last slot twice, and no promotion decided
    meanwhile spends the steps a reservation counted on: a reserved config, its runs not started
    yet, is counted by every later decision (``Halving.unstarted``). ``propose`` (the controller's
    ``next``) is only called when a slot is free. Returns the new config id, or None when the
    budget is taken. ``limit`` must not write the session's row (it would wait for this lock).
    """
    with store.engine.begin() as c:
        c.execute(sa.select(sessions_table.c.name).where(sessions_table.c.name == session).with_for_update())
        taken = c.execute(sa.select(sa.func.count()).select_from(configs_table).where(
            configs_table.c.session == session, configs_table.c.stage == "search")).scalar_one()
        if taken >= limit():
            return None
        proposal = propose()
        result = c.execute(configs_table.insert().values(
            session=session, trial_number=proposal.trial_number, kind=proposal.kind, stage="search",
            name=proposal.name, params_json=json.dumps(dict(proposal.config), default=str), status="running",
            worker=worker, created_at=time.time()))
        return int(result.inserted_primary_key[0])
