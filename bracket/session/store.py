"""The store: one database that is the single source of truth of a search.

It holds the Optuna study (through Optuna's own RDB storage, so ``optuna-dashboard`` and
``optuna.load_study`` open it as they would any study) and Bracket's tables beside it:

- ``bracket_sessions``: one row per search — preset, field values, search settings;
- ``bracket_configs``: one row per configuration (= one Optuna trial), its kind
  (baseline, curated, search, final), name and params;
- ``bracket_runs``: one row per training run (a config × a seed, or a setup command):
  run folder, pid and process start time while running, status, exit code, failure reason,
  log tail, automatic judge results, loss series and sample files;
- ``bracket_ratings`` and ``bracket_comparisons``: human scores, written at any time;
- ``bracket_workers``: heartbeats of the processes working on a search.

By default the database is a SQLite file in the session folder, in WAL mode; any
SQLAlchemy URL works (PostgreSQL when several machines share a search). Every write is one
transaction, so a killed process loses at most the run it was doing.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import optuna
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from bracket.errors import StoreError, disk_full_message

optuna.logging.set_verbosity(optuna.logging.WARNING)

RUN_ACTIVE = ("pending", "running")
#: run states that spend budget (a crash of Bracket itself leaves "interrupted", which does not)
RUN_SPENT = ("done", "failed", "pruned", "disqualified")

_metadata = sa.MetaData()

sessions_table = sa.Table(
    "bracket_sessions", _metadata,
    sa.Column("name", sa.String(200), primary_key=True),
    sa.Column("preset_id", sa.String(100), nullable=False),
    sa.Column("fields_json", sa.Text, nullable=False),
    sa.Column("settings_json", sa.Text, nullable=False),
    sa.Column("notes_json", sa.Text, nullable=False, default="[]"),
    sa.Column("study_name", sa.String(200), nullable=False),
    sa.Column("status", sa.String(40), nullable=False, default="created"),
    sa.Column("stop_requested", sa.String(20), nullable=False, default=""),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)
configs_table = sa.Table(
    "bracket_configs", _metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session", sa.String(200), nullable=False, index=True),
    sa.Column("trial_number", sa.Integer, nullable=False),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("stage", sa.String(20), nullable=False, default="search"),
    sa.Column("name", sa.String(200), nullable=False, default=""),
    sa.Column("params_json", sa.Text, nullable=False),
    sa.Column("status", sa.String(20), nullable=False, default="running"),
    sa.Column("value", sa.Float, nullable=True),
    sa.Column("worker", sa.String(200), nullable=False, default=""),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.UniqueConstraint("session", "trial_number", "stage", name="uq_config_trial"),
)
runs_table = sa.Table(
    "bracket_runs", _metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session", sa.String(200), nullable=False, index=True),
    sa.Column("config_id", sa.Integer, nullable=True, index=True),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("stage", sa.String(20), nullable=False, default="search"),
    sa.Column("label", sa.String(200), nullable=False, default=""),
    sa.Column("seed", sa.Integer, nullable=True),
    sa.Column("seed_index", sa.Integer, nullable=True),
    sa.Column("params_json", sa.Text, nullable=False, default="{}"),
    sa.Column("run_dir", sa.Text, nullable=False, default=""),
    sa.Column("status", sa.String(20), nullable=False, default="pending"),
    sa.Column("exit_code", sa.Integer, nullable=True),
    sa.Column("failure_reason", sa.Text, nullable=False, default=""),
    sa.Column("log_tail", sa.Text, nullable=False, default=""),
    sa.Column("pid", sa.Integer, nullable=True),
    sa.Column("pid_create_time", sa.Float, nullable=True),
    sa.Column("worker", sa.String(200), nullable=False, default=""),
    sa.Column("max_steps", sa.Integer, nullable=True),
    sa.Column("last_step", sa.Integer, nullable=True),
    sa.Column("started_at", sa.Float, nullable=True),
    sa.Column("finished_at", sa.Float, nullable=True),
    sa.Column("duration_s", sa.Float, nullable=True),
    sa.Column("judges_json", sa.Text, nullable=False, default="{}"),
    sa.Column("loss_json", sa.Text, nullable=False, default="[]"),
    sa.Column("eval_loss_json", sa.Text, nullable=False, default="[]"),
    sa.Column("samples_json", sa.Text, nullable=False, default="[]"),
    sa.Column("output_dir", sa.Text, nullable=False, default=""),
)
ratings_table = sa.Table(
    "bracket_ratings", _metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session", sa.String(200), nullable=False, index=True),
    sa.Column("run_id", sa.Integer, nullable=False),
    sa.Column("prompt_index", sa.Integer, nullable=True),
    sa.Column("value", sa.Float, nullable=False),
    #: the training step whose samples were rated (Compare's step slider); None = the run as a whole
    sa.Column("step", sa.Integer, nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
)
comparisons_table = sa.Table(
    "bracket_comparisons", _metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session", sa.String(200), nullable=False, index=True),
    sa.Column("left_run_id", sa.Integer, nullable=False),
    sa.Column("right_run_id", sa.Integer, nullable=False),
    sa.Column("winner", sa.String(10), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)
workers_table = sa.Table(
    "bracket_workers", _metadata,
    # one process may work on several searches of a shared store: a worker row is per session
    sa.Column("worker_id", sa.String(200), primary_key=True),
    sa.Column("session", sa.String(200), primary_key=True),
    sa.Column("host", sa.String(200), nullable=False, default=""),
    sa.Column("pid", sa.Integer, nullable=True),
    sa.Column("gpu", sa.String(20), nullable=False, default=""),
    sa.Column("status", sa.String(20), nullable=False, default="alive"),
    sa.Column("started_at", sa.Float, nullable=False),
    sa.Column("heartbeat_at", sa.Float, nullable=False),
)

_JSON_COLUMNS = {
    "params_json": "params", "judges_json": "judges", "loss_json": "loss", "eval_loss_json": "eval_loss",
    "samples_json": "samples", "fields_json": "fields", "settings_json": "settings", "notes_json": "notes",
}


def _decode(row: Mapping[str, Any]) -> dict[str, Any]:
    record = dict(row)
    for column, key in _JSON_COLUMNS.items():
        if column in record:
            record[key] = json.loads(record.pop(column) or "null")
    return record


def storable_text(text: str) -> str:
    """``text`` as every backend stores it: NUL bytes (PostgreSQL refuses them) become U+FFFD,
    and lone surrogates (undecodable bytes a trainer printed) become ``?``."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def _encode(values: Mapping[str, Any]) -> dict[str, Any]:
    """Column values for a write: JSON columns dumped, every text made storable (:func:`storable_text`)."""
    reverse = {v: k for k, v in _JSON_COLUMNS.items()}
    encoded: dict[str, Any] = {}
    for key, value in values.items():
        if key in reverse:
            value = json.dumps(value, default=str)
            key = reverse[key]
        encoded[key] = storable_text(value) if isinstance(value, str) else value
    return encoded


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy URL of a SQLite file."""
    return f"sqlite:///{Path(path).resolve()}"


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


def _change_marker_query() -> sa.Select:
    """:meth:`Store.change_marker`'s statement, built once: each table is read in one pass (the
    runs table once for all its aggregates), the session name a bound parameter."""
    name = sa.bindparam("session")
    r, cfg = runs_table.c, configs_table.c
    runs = sa.select(
        sa.func.count().label("n"), sa.func.max(r.id).label("max_id"),
        sa.func.sum(sa.func.coalesce(r.last_step, 0)).label("steps"),
        sa.func.sum(sa.func.length(r.status) * r.id).label("statuses"),
        # only columns stored before the loss series: reading past them would read every series
        sa.func.sum(sa.func.length(r.judges_json) + sa.func.length(r.failure_reason)).label("judged"),
        sa.func.sum(sa.func.coalesce(r.finished_at, 0)).label("finished")).where(r.session == name).subquery()
    configs = sa.select(
        sa.func.count().label("n"),
        sa.func.sum(sa.func.length(cfg.status) * cfg.id + sa.func.coalesce(cfg.value, 0)).label("state"),
    ).where(cfg.session == name).subquery()

    def scalar(column: Any, table: sa.Table) -> Any:
        return sa.select(column).where(table.c.session == name).scalar_subquery()

    return sa.select(
        runs.c.n, runs.c.max_id, runs.c.steps, runs.c.statuses, runs.c.judged, runs.c.finished,
        configs.c.n, configs.c.state,
        scalar(sa.func.max(ratings_table.c.id), ratings_table),
        scalar(sa.func.max(comparisons_table.c.id), comparisons_table),
        scalar(sa.func.sum(sa.func.length(workers_table.c.status)), workers_table),
        scalar(sa.func.count(), workers_table),
        sa.select(sessions_table.c.updated_at).where(sessions_table.c.name == name).scalar_subquery(),
    ).select_from(runs).join(configs, sa.true())


_CHANGE_MARKER = _change_marker_query()


@dataclass
class Store:
    """Bracket's tables and the Optuna storage, both on one database URL."""

    url: str = field(repr=False)  # may hold a password: never in a repr or a log
    engine: Engine = field(repr=False)
    #: the Optuna storage, or a function that makes it on first use (opening it imports alembic
    #: and checks the schema version: ~0.5 s that ``status`` and the app's views never need)
    storage_or_factory: Any = field(repr=False)
    #: why this store can only be read ("" when it can be written): a read-only folder, a full disk
    read_only: str = ""
    #: later columns an older store lacks and, being read-only, cannot be given (see _LATER_COLUMNS)
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
        read_only = ""
        if is_sqlite and parsed.database and parsed.database != ":memory:":
            url = absolute_sqlite_url(url)
            path = Path(sa.engine.make_url(url).database)
            if not path.parent.is_dir():
                raise StoreError(f"Cannot create the store: folder {path.parent} does not exist.")
            if not create and not path.is_file():  # connecting would leave a stray empty database
                raise StoreError(f"The store {path} does not exist; check the storage URL (a relative sqlite path "
                                 "is relative to the folder the command runs in).")
            refuse_foreign_sqlite(path)  # before anything (WAL mode, tables) touches the file
            read_only = _read_only_reason(path, create)
        try:
            return cls._open(url, is_sqlite, create, read_only)
        except StoreError:
            raise
        except Exception as error:  # noqa: BLE001 - driver errors vary; the message says what to do
            first = error
        if is_sqlite and not create and not read_only and Path(sa.engine.make_url(url).database).is_file():
            # a full disk cannot even create SQLite's shared-memory file: reading still works
            try:
                return cls._open(url, is_sqlite, create, _full_disk_reason(first, Path(sa.engine.make_url(url).database)))
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
            kwargs["connect_args"] = {"timeout": 60}
        engine_url = url
        if read_only:  # SQLite's own read-only, immutable mode: no journal, no lock file, no write
            path = Path(sa.engine.make_url(url).database)
            engine_url = f"sqlite:///file:{quote(str(path))}?mode=ro&immutable=1&uri=true"
            create = False
        engine = sa.create_engine(engine_url, **kwargs)
        if is_sqlite and not read_only:
            sa.event.listen(engine, "connect", _sqlite_pragmas)
        with engine.begin() as connection:
            if create:
                _metadata.create_all(connection)
            else:
                connection.execute(sa.select(sessions_table.c.name).limit(1))
            absent = _add_missing_columns(connection, add=not read_only)
        def storage() -> optuna.storages.BaseStorage:
            return optuna.storages.RDBStorage(
                engine_url, engine_kwargs=kwargs if not is_sqlite else {"connect_args": {"timeout": 60}},
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

    # -- sessions ----------------------------------------------------------------------
    def create_session(self, name: str, *, preset_id: str, fields: Mapping[str, str],
                       settings: Mapping[str, Any], notes: Iterable[str] = ()) -> None:
        now = time.time()
        with self.engine.begin() as c:
            c.execute(sessions_table.insert().values(_encode({
                "name": name, "preset_id": preset_id, "fields": dict(fields), "settings": dict(settings),
                "notes": list(notes), "study_name": name, "status": "created", "stop_requested": "",
                "created_at": now, "updated_at": now,
            })))

    def get_session(self, name: str) -> dict[str, Any] | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(sessions_table).where(sessions_table.c.name == name)).mappings().first()
        return _decode(row) if row else None

    def session_names(self) -> list[str]:
        with self.engine.connect() as c:
            return [r[0] for r in c.execute(sa.select(sessions_table.c.name).order_by(sessions_table.c.created_at))]

    def update_session(self, name: str, **values: Any) -> None:
        values["updated_at"] = time.time()
        with self.engine.begin() as c:
            c.execute(sessions_table.update().where(sessions_table.c.name == name).values(_encode(values)))

    # -- configs ------------------------------------------------------------------------
    def add_config(self, session: str, *, trial_number: int, kind: str, name: str, params: Mapping[str, Any],
                   stage: str = "search", worker: str = "") -> int:
        with self.engine.begin() as c:
            result = c.execute(configs_table.insert().values(_encode({
                "session": session, "trial_number": trial_number, "kind": kind, "stage": stage, "name": name,
                "params": dict(params), "status": "running", "worker": worker, "created_at": time.time(),
            })))
            return int(result.inserted_primary_key[0])

    def update_config(self, config_id: int, **values: Any) -> None:
        with self.engine.begin() as c:
            c.execute(configs_table.update().where(configs_table.c.id == config_id).values(_encode(values)))

    def configs(self, session: str, *, stage: str | None = None) -> list[dict[str, Any]]:
        query = sa.select(configs_table).where(configs_table.c.session == session)
        if stage:
            query = query.where(configs_table.c.stage == stage)
        with self.engine.connect() as c:
            return [_decode(r) for r in c.execute(query.order_by(configs_table.c.id)).mappings()]

    # -- runs ----------------------------------------------------------------------------
    def add_run(self, session: str, **values: Any) -> int:
        values = {"session": session, "status": "pending", **values}
        with self.engine.begin() as c:
            return int(c.execute(runs_table.insert().values(_encode(values))).inserted_primary_key[0])

    def update_run(self, run_id: int, **values: Any) -> None:
        with self.engine.begin() as c:
            c.execute(runs_table.update().where(runs_table.c.id == run_id).values(_encode(values)))
            if "samples" in values:  # stored after the loss series: the change marker sees it here
                owner = sa.select(runs_table.c.session).where(runs_table.c.id == run_id).scalar_subquery()
                c.execute(sessions_table.update().where(sessions_table.c.name == owner).values(updated_at=time.time()))

    def get_run(self, run_id: int) -> dict[str, Any] | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(runs_table).where(runs_table.c.id == run_id)).mappings().first()
        return _decode(row) if row else None

    def runs(self, session: str, *, with_series: bool = True, statuses: Iterable[str] | None = None,
             kinds: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Runs of ``session`` in creation order; ``with_series=False`` skips the loss series."""
        columns = list(runs_table.c)
        if not with_series:
            columns = [col for col in columns if col.name not in ("loss_json", "eval_loss_json")]
        query = sa.select(*columns).where(runs_table.c.session == session)
        if statuses is not None:
            query = query.where(runs_table.c.status.in_(list(statuses)))
        if kinds is not None:
            query = query.where(runs_table.c.kind.in_(list(kinds)))
        with self.engine.connect() as c:
            return [_decode(r) for r in c.execute(query.order_by(runs_table.c.id)).mappings()]

    def series(self, run_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        """The loss and eval-loss series of the given runs: ``{id: {"loss": ..., "eval_loss": ...}}``."""
        ids = list(run_ids)
        if not ids:
            return {}
        query = sa.select(runs_table.c.id, runs_table.c.loss_json, runs_table.c.eval_loss_json).where(
            runs_table.c.id.in_(ids))
        with self.engine.connect() as c:
            return {row.id: {"loss": json.loads(row.loss_json or "[]"), "eval_loss": json.loads(row.eval_loss_json or "[]")}
                    for row in c.execute(query)}

    def change_marker(self, session: str) -> tuple:
        """A cheap fingerprint of everything a view of ``session`` shows, in one query.

        It changes whenever a run is added, changes status or step, gets judged or gets
        samples (:meth:`update_run` then touches the session row), and whenever a config,
        rating, comparison, worker or the session row changes (the loss series grow with the
        step). Views cache what they build from the store
        keyed by it, so a poll that finds nothing new reads one row and nothing else.
        """
        with self.engine.connect() as c:
            return tuple(c.execute(_CHANGE_MARKER, {"session": session}).one())

    # -- human scores ------------------------------------------------------------------
    def add_rating(self, session: str, run_id: int, value: float, prompt_index: int | None = None,
                   step: int | None = None) -> int:
        with self.engine.begin() as c:
            return int(c.execute(ratings_table.insert().values(
                session=session, run_id=run_id, prompt_index=prompt_index, value=float(value), step=step,
                created_at=time.time(),
            )).inserted_primary_key[0])

    def ratings(self, session: str) -> list[dict[str, Any]]:
        with self.engine.connect() as c:
            columns = [col for col in ratings_table.c if f"{ratings_table.name}.{col.name}" not in self.absent]
            query = sa.select(*columns).where(ratings_table.c.session == session).order_by(ratings_table.c.id)
            return [{"step": None, **r} for r in c.execute(query).mappings()]

    def add_comparison(self, session: str, left_run_id: int, right_run_id: int, winner: str) -> int:
        with self.engine.begin() as c:
            return int(c.execute(comparisons_table.insert().values(
                session=session, left_run_id=left_run_id, right_run_id=right_run_id, winner=winner,
                created_at=time.time(),
            )).inserted_primary_key[0])

    def comparisons(self, session: str) -> list[dict[str, Any]]:
        with self.engine.connect() as c:
            query = (sa.select(comparisons_table).where(comparisons_table.c.session == session)
                     .order_by(comparisons_table.c.id))
            return [dict(r) for r in c.execute(query).mappings()]

    def delete_last_comparison(self, session: str) -> dict[str, Any] | None:
        """Remove the session's newest comparison (an undo); returns it, or None when there is none."""
        with self.engine.begin() as c:
            query = (sa.select(comparisons_table).where(comparisons_table.c.session == session)
                     .order_by(comparisons_table.c.id.desc()).limit(1))
            row = c.execute(query).mappings().first()
            if row is None:
                return None
            c.execute(comparisons_table.delete().where(comparisons_table.c.id == row["id"]))
            return dict(row)

    # -- workers ---------------------------------------------------------------------------
    def heartbeat(self, session: str, worker_id: str, *, host: str = "", pid: int | None = None,
                  gpu: str = "", status: str = "alive") -> None:
        now = time.time()
        with self.engine.begin() as c:
            updated = c.execute(workers_table.update().where(
                (workers_table.c.worker_id == worker_id) & (workers_table.c.session == session)).values(
                heartbeat_at=now, status=status)).rowcount
            if not updated:
                c.execute(workers_table.insert().values(
                    worker_id=worker_id, session=session, host=host, pid=pid, gpu=gpu, status=status,
                    started_at=now, heartbeat_at=now))

    def workers(self, session: str) -> list[dict[str, Any]]:
        with self.engine.connect() as c:
            query = sa.select(workers_table).where(workers_table.c.session == session)
            return [dict(r) for r in c.execute(query.order_by(workers_table.c.started_at)).mappings()]

    # -- optuna ----------------------------------------------------------------------------
    def study(self, name: str, sampler: optuna.samplers.BaseSampler | None = None) -> optuna.Study:
        """The Optuna study of session ``name`` (created on first use), minimising."""
        return optuna.create_study(study_name=name, storage=self.storage, direction="minimize",
                                   sampler=sampler, load_if_exists=True)


#: columns added after the first release: (table, column, SQL type), added to older stores on open
_LATER_COLUMNS = (("bracket_ratings", "step", "INTEGER"),)


def _add_missing_columns(connection: sa.Connection, *, add: bool = True) -> frozenset[str]:
    """Add columns that a store written by an older Bracket lacks (nullable, so old rows stay valid);
    a read-only store (``add=False``) is left as it is: the ``table.column`` names it lacks are
    returned, and reading treats them as empty."""
    inspector = sa.inspect(connection)
    absent = set()
    for table, column, sql_type in _LATER_COLUMNS:
        if not inspector.has_table(table):
            continue
        if column not in {c["name"] for c in inspector.get_columns(table)}:
            if add:
                connection.execute(sa.text(f"ALTER TABLE {table} ADD COLUMN {column} {sql_type}"))
            else:
                absent.add(f"{table}.{column}")
    return frozenset(absent)


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=60000")
    cursor.close()
