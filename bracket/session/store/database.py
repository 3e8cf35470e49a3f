"""The store: one database that is the single source of truth of a search.

It holds the Optuna study (through Optuna's own RDB storage, so ``optuna-dashboard`` and
``optuna.load_study`` open it as they would any study) and Bracket's tables beside it
(``bracket.session.store.schema``; their rows are read and written by ``bracket.session.store.records``).
This module opens the database: URLs, SQLite files (a foreign one is refused, a read-only
folder or a full disk opens read-only), the tables and the Optuna storage.

By default the database is a SQLite file in the session folder, in WAL mode; any
SQLAlchemy URL works (PostgreSQL when several machines share a search). Every write is one
transaction, so a killed process loses at most the run it was doing.
"""

from __future__ import annotations

import os
import random
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from bracket.errors import StoreError, disk_full_message
from bracket.optuna_access.quiet import optuna_module
from bracket.session.store.migrations import NewerStoreError, migrate, stamp
from bracket.session.store.records import Records
from bracket.session.store.schema import metadata, sessions_table

#: how long a SQLite write waits for another connection's lock before "database is locked"
SQLITE_BUSY_TIMEOUT_S = 60.0
#: how long a new store is opened again while other processes are creating its tables at the same
#: moment (each attempt that loses that race waits a moment and tries again)
CREATE_RACE_WAIT_S = 60.0

if TYPE_CHECKING:  # pragma: no cover - Optuna is imported where a study is used (``status`` needs none)
    import optuna


def _optuna() -> Any:
    return optuna_module()


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy URL of a SQLite file."""
    return f"sqlite:///{Path(path).resolve()}"


def sqlite_file(url: str) -> Path:
    """The file of a SQLite URL that names one (``Store.open`` refuses one that does not)."""
    database = sa.engine.make_url(url).database
    assert database is not None, "a SQLite URL without a file is refused before its file is looked at"
    return Path(database)


def absolute_sqlite_url(url: str) -> str:
    """A SQLite URL with an absolute path (``sqlite:///rel.db`` ties a session to one working
    directory); other URLs unchanged."""
    try:
        parsed = sa.engine.make_url(url)
    except Exception:  # noqa: BLE001 - Store.open reports a malformed URL
        return url
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:" \
            or database.startswith("file:") or Path(database).is_absolute():
        return url
    return parsed.set(database=str(Path(database).resolve())).render_as_string(hide_password=False)


def refuse_foreign_sqlite(path: Path) -> None:
    """Refuse another program's SQLite file before anything changes it (read-only look)."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    import sqlite3

    try:
        connection = sqlite3.connect(f"file:{quote(str(path))}?mode=ro&immutable=1", uri=True)
        try:
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            connection.close()
    except sqlite3.Error:
        return  # not readable as SQLite at all: Store.open says so with the driver's words
    if tables and "bracket_sessions" not in tables:
        shown = ", ".join(sorted(tables)[:5]) + (", …" if len(tables) > 5 else "")
        raise StoreError(f"{path} is another program's SQLite database (tables: {shown}), not a Bracket store; "
                         "nothing was changed in it. Give a new file name or a Bracket store.")


def _read_only_reason(path: Path, create: bool) -> str:
    """Why the SQLite store at ``path`` must be opened read-only ("" when it can be written)."""
    if create or not path.is_file():
        return ""
    if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK):
        return ""
    return (f"{path.parent} is read-only. Looking works (status, report --out, export --out); to run or resume, "
            "copy the session folder to a writable place.")


def _full_disk_reason(error: BaseException, path: Path) -> str:
    message = disk_full_message(error)
    try:
        full = message is not None or shutil.disk_usage(path.parent).free == 0
    except OSError:
        full = False
    if message is None and full:
        message = "The disk is full. Free some space, then run the command again (a search: resume it)."
    return message or f"it could not be opened for writing ({type(error).__name__}: {str(error).splitlines()[0]})."


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for logs, reports and the UI)."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - a malformed URL is shown without its middle part
        return url.split("@")[-1] if "@" in url else url


_STORAGE_LOCK = threading.Lock()


@dataclass
class Store(Records):
    """Bracket's tables and the Optuna storage, both on one database URL."""

    url: str = field(repr=False)  # may hold a password: never in a repr or a log
    engine: Engine = field(repr=False)
    #: the Optuna storage, or a function that makes it on first use (opening it imports alembic
    #: and checks the schema version: ~0.5 s that ``status`` and the app's views never need)
    storage_or_factory: Any = field(repr=False)
    #: why this store can only be read ("" when it can be written): a read-only folder, a full disk
    read_only: str = ""
    #: later columns (``table.column``) and tables an older store lacks and cannot be given, being
    #: read-only (see ``bracket.session.store.migrations``)
    absent: frozenset[str] = frozenset()

    @property
    def storage(self) -> optuna.storages.BaseStorage:
        """The Optuna storage on the same database (made on first use when the store was opened lazily)."""
        if callable(self.storage_or_factory):
            with _STORAGE_LOCK:
                if callable(self.storage_or_factory):
                    self.storage_or_factory = self.storage_or_factory()
        return self.storage_or_factory

    @property
    def storage_opened(self) -> bool:
        """Whether the Optuna storage was made (an existing store opens it only when it is used)."""
        return not callable(self.storage_or_factory)

    def require_writable(self) -> None:
        """Raise ``StoreError`` saying why, when this store was opened read-only."""
        if self.read_only:
            raise StoreError(f"The store {redact_url(self.url)} can only be read: {self.read_only}")

    # -- opening ------------------------------------------------------------------------
    @classmethod
    def open(cls, url: str, *, create: bool = True) -> "Store":
        """Open (and create the tables of) the database at ``url``; a bad URL raises ``StoreError``."""
        try:
            parsed = sa.engine.make_url(url)
        except Exception:  # noqa: BLE001
            raise StoreError(
                f"Storage URL {redact_url(url)!r} is malformed; use sqlite:///path/to/file.db or "
                "postgresql+psycopg://user@host:5432/db."
            ) from None
        is_sqlite = parsed.get_backend_name() == "sqlite"
        if is_sqlite and (not parsed.database or parsed.database == ":memory:"):
            raise StoreError(f"Storage URL {redact_url(url)!r} names no file (an in-memory database keeps nothing); "
                             "use sqlite:///path/to/file.db or postgresql+psycopg://user@host:5432/db.")
        read_only = ""
        if is_sqlite and parsed.database and parsed.database != ":memory:":
            url = absolute_sqlite_url(url)
            path = sqlite_file(url)
            if not path.parent.is_dir():
                raise StoreError(f"Cannot create the store: folder {path.parent} does not exist.")
            if not create and not path.is_file():  # connecting would leave a stray empty database
                raise StoreError(f"The store {path} does not exist; check the storage URL (a relative sqlite path "
                                 "is relative to the folder the command runs in).")
            refuse_foreign_sqlite(path)  # before anything (WAL mode, tables) touches the file
            read_only = _read_only_reason(path, create)
        first: Exception | None = None
        deadline = time.monotonic() + (CREATE_RACE_WAIT_S if create else 0.0)
        while True:
            try:
                return cls._open(url, is_sqlite, create, read_only)
            except StoreError:
                raise
            except Exception as error:  # noqa: BLE001 - driver errors vary; the message says what to do
                first = first or error
                if not _lost_create_race(error) or time.monotonic() > deadline:
                    break
                # another process made the tables between our check and our CREATE; it goes on to
                # stamp Optuna's version rows, so let it finish before opening again
                time.sleep(random.uniform(0.1, 0.5))
        assert first is not None
        if is_sqlite and not create and not read_only and sqlite_file(url).is_file():
            # a full disk cannot even create SQLite's shared-memory file: reading still works
            try:
                return cls._open(url, is_sqlite, create,
                                 _full_disk_reason(first, sqlite_file(url)))
            except Exception:  # noqa: BLE001 - report the first error
                pass
        raise StoreError(
            f"Cannot open the store {redact_url(url)}: {type(first).__name__}: "
            f"{str(first).splitlines()[0] if str(first) else ''}. Check the URL, that the server runs, "
            "and that the file is a Bracket store."
        ) from None

    @classmethod
    def _open(cls, url: str, is_sqlite: bool, create: bool, read_only: str) -> "Store":
        kwargs: dict[str, Any] = {"pool_pre_ping": True}
        if is_sqlite:
            kwargs["connect_args"] = {"timeout": SQLITE_BUSY_TIMEOUT_S}
        engine_url = url
        if read_only:  # SQLite's own read-only, immutable mode: no journal, no lock file, no write
            path = sqlite_file(url)
            engine_url = f"sqlite:///file:{quote(str(path))}?mode=ro&immutable=1&uri=true"
            create = False
        engine = sa.create_engine(engine_url, **kwargs)
        if is_sqlite and not read_only:
            sa.event.listen(engine, "connect", _sqlite_pragmas)
        with engine.begin() as connection:
            new = create and not sa.inspect(connection).has_table(sessions_table.name)
            if create:
                metadata.create_all(connection)
            else:
                connection.execute(sa.select(sessions_table.c.name).limit(1))
            try:
                if new:
                    stamp(connection)
                absent = migrate(connection, add=not read_only)
            except NewerStoreError as error:
                raise StoreError(str(error)) from None
        def storage() -> optuna.storages.BaseStorage:
            return _optuna().storages.RDBStorage(
                engine_url,
                engine_kwargs=kwargs if not is_sqlite else {"connect_args": {"timeout": SQLITE_BUSY_TIMEOUT_S}},
                skip_table_creation=bool(read_only))

        # a new store makes Optuna's tables now; an existing one has them and opens the storage on first use
        store = cls(url=url, engine=engine, storage_or_factory=storage() if create else storage)
        store.read_only, store.absent = read_only, absent
        return store

    def close(self) -> None:
        self.engine.dispose()
        if not self.storage_opened:
            return
        remove = getattr(self.storage, "remove_session", None)
        if remove:
            remove()
        storage_engine = getattr(self.storage, "engine", None)
        if storage_engine is not None:
            storage_engine.dispose()

    # -- optuna ----------------------------------------------------------------------------
    def study(self, name: str, sampler: optuna.samplers.BaseSampler | None = None) -> optuna.Study:
        """The Optuna study of session ``name`` (created on first use), minimising."""
        return _optuna().create_study(study_name=name, storage=self.storage, direction="minimize",
                                   sampler=sampler, load_if_exists=True)


def _lost_create_race(error: Exception) -> bool:
    """Whether ``error`` says another process created a table (or its type) first: several
    workers — or two commands — opening one new store at once each check, see no tables and
    create them; all but one fail with "table … already exists" (PostgreSQL: a duplicate
    ``pg_type`` key), or on the version row Optuna stamps into a new store (``alembic_version``,
    ``version_info``) or the schema version Bracket stamps (``bracket_schema``). SQLite may also
    answer "database is locked" at once, without its busy wait, to a process switching the new
    file to WAL while another creates the tables. Opening again then finds the tables and the row."""
    text = str(error).lower()
    clash = "unique constraint" in text or "duplicate key" in text
    return "already exists" in text or "database is locked" in text or (clash and any(
        table in text for table in ("pg_type", "alembic_version", "version_info", "bracket_schema")))


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
    cursor.close()
