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
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import optuna
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from bracket.errors import StoreError

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


def _encode(values: Mapping[str, Any]) -> dict[str, Any]:
    reverse = {v: k for k, v in _JSON_COLUMNS.items()}
    encoded: dict[str, Any] = {}
    for key, value in values.items():
        if key in reverse:
            encoded[reverse[key]] = json.dumps(value, default=str)
        else:
            encoded[key] = value
    return encoded


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy URL of a SQLite file."""
    return f"sqlite:///{Path(path).resolve()}"


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for logs, reports and the UI)."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - a malformed URL is shown without its middle part
        return url.split("@")[-1] if "@" in url else url


@dataclass
class Store:
    """Bracket's tables and the Optuna storage, both on one database URL."""

    url: str = field(repr=False)  # may hold a password: never in a repr or a log
    engine: Engine = field(repr=False)
    storage: optuna.storages.BaseStorage = field(repr=False)

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
        if is_sqlite and parsed.database and parsed.database != ":memory:":
            folder = Path(parsed.database).parent
            if not folder.is_dir():
                raise StoreError(f"Cannot create the store: folder {folder} does not exist.")
        kwargs: dict[str, Any] = {"pool_pre_ping": True}
        if is_sqlite:
            kwargs["connect_args"] = {"timeout": 60}
        try:
            engine = sa.create_engine(url, **kwargs)
            if is_sqlite:
                sa.event.listen(engine, "connect", _sqlite_pragmas)
            with engine.begin() as connection:
                if create:
                    _metadata.create_all(connection)
                else:
                    connection.execute(sa.select(sessions_table.c.name).limit(1))
            storage = optuna.storages.RDBStorage(
                url, engine_kwargs=kwargs if not is_sqlite else {"connect_args": {"timeout": 60}}
            )
        except StoreError:
            raise
        except Exception as error:  # noqa: BLE001 - driver errors vary; the message says what to do
            raise StoreError(
                f"Cannot open the store {redact_url(url)}: {type(error).__name__}: "
                f"{str(error).splitlines()[0] if str(error) else ''}. Check the URL, that the server runs, "
                "and that the file is a Bracket store."
            ) from None
        return cls(url=url, engine=engine, storage=storage)

    def close(self) -> None:
        self.engine.dispose()
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
        r, cfg = runs_table.c, configs_table.c

        def scalar(*columns: Any, table: sa.Table) -> Any:
            return sa.select(*columns).where(table.c.session == session).scalar_subquery()

        query = sa.select(
            scalar(sa.func.count(), table=runs_table),
            scalar(sa.func.max(r.id), table=runs_table),
            scalar(sa.func.sum(sa.func.coalesce(r.last_step, 0)), table=runs_table),
            scalar(sa.func.sum(sa.func.length(r.status) * r.id), table=runs_table),
            # only columns stored before the loss series: reading past them would read every series
            scalar(sa.func.sum(sa.func.length(r.judges_json) + sa.func.length(r.failure_reason)), table=runs_table),
            scalar(sa.func.sum(sa.func.coalesce(r.finished_at, 0)), table=runs_table),
            scalar(sa.func.count(), table=configs_table),
            scalar(sa.func.sum(sa.func.length(cfg.status) * cfg.id + sa.func.coalesce(cfg.value, 0)),
                   table=configs_table),
            scalar(sa.func.max(ratings_table.c.id), table=ratings_table),
            scalar(sa.func.max(comparisons_table.c.id), table=comparisons_table),
            scalar(sa.func.sum(sa.func.length(workers_table.c.status)), table=workers_table),
            scalar(sa.func.count(), table=workers_table),
            sa.select(sessions_table.c.updated_at).where(sessions_table.c.name == session).scalar_subquery(),
        )
        with self.engine.connect() as c:
            return tuple(c.execute(query).one())

    # -- human scores ------------------------------------------------------------------
    def add_rating(self, session: str, run_id: int, value: float, prompt_index: int | None = None) -> int:
        with self.engine.begin() as c:
            return int(c.execute(ratings_table.insert().values(
                session=session, run_id=run_id, prompt_index=prompt_index, value=float(value),
                created_at=time.time(),
            )).inserted_primary_key[0])

    def ratings(self, session: str) -> list[dict[str, Any]]:
        with self.engine.connect() as c:
            query = sa.select(ratings_table).where(ratings_table.c.session == session).order_by(ratings_table.c.id)
            return [dict(r) for r in c.execute(query).mappings()]

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


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=60000")
    cursor.close()
