"""Reads and writes of Bracket's tables: sessions, configs, runs, human scores, workers, kept views.

:class:`Records` is the half of :class:`~bracket.session.store.database.Store` that speaks in rows
(plain dicts, JSON columns decoded); the other half opens the database. Every write is one
transaction, so a killed process loses at most the run it was doing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from typing import Any, Unpack

import sqlalchemy as sa
from sqlalchemy.engine import CursorResult, Engine

from bracket.errors import StoreError
from bracket.session.store.rows import ConfigUpdate, RunUpdate, SeedRuns, SessionUpdate, checked
from bracket.session.store.schema import (
    check_record,
    comparisons_table,
    configs_table,
    decode,
    decode_rows,
    encode,
    ratings_table,
    runs_table,
    sessions_table,
    views_table,
    workers_table,
)
from bracket.session.store.sound_rows import rows_vouched


def _new_id(result: CursorResult[Any]) -> int:
    """The primary key of the one row an INSERT ``result`` made."""
    key = result.inserted_primary_key
    assert key is not None, "an INSERT of one row into a table with a primary key returns it"
    return int(key[0])


def _change_marker_query() -> sa.Select:
    """:meth:`Records.change_marker`'s statement, built once: each table is read in one pass (the
    runs table once for all its aggregates), the session name a bound parameter."""
    name: sa.BindParameter[str] = sa.bindparam("session")
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
#: the place of the runs' summed steps in :meth:`Records.change_marker` (it moves with every
#: logged step of a running run; views that show no live progress leave it out)
MARKER_STEPS = 2


def _decoded(result: sa.CursorResult) -> list[dict[str, Any]]:
    """Every row of ``result`` as a decoded dict (the column names looked up once, not per row:
    ``.mappings()`` costs more than the decoding for the 2000 runs of a long search)."""
    return decode_rows(list(result.keys()), result.all())  # fetched at once, not row by row


class Records:
    """The row-level methods of a store (mixed into ``Store``, which provides ``engine``)."""

    engine: Engine
    absent: frozenset[str]

    # -- sessions ----------------------------------------------------------------------
    def create_session(self, name: str, *, preset_id: str, fields: Mapping[str, str],
                       settings: Mapping[str, Any], notes: Iterable[str] = (),
                       plan: Mapping[str, Any] | None = None) -> None:
        """A new session row; ``plan``: the trainer's facts decided at creation (``TrainerFacts``)."""
        now = time.time()
        try:
            with self.engine.begin() as c:
                c.execute(sessions_table.insert().values(encode({
                    "name": name, "preset_id": preset_id, "fields": dict(fields), "settings": dict(settings),
                    "plan": None if plan is None else dict(plan), "notes": list(notes), "study_name": name,
                    "status": "created", "stop_requested": "", "created_at": now, "updated_at": now,
                })))
        except sa.exc.IntegrityError:  # another process created it since the caller looked
            if self.get_session(name) is None:
                raise
            raise StoreError(f"A session named {name!r} already exists in this store (another process may have "
                             "just created it); choose another name, or resume that one.") from None

    def get_session(self, name: str) -> dict[str, Any] | None:
        columns = [col for col in sessions_table.c if f"{sessions_table.name}.{col.name}" not in self.absent]
        with self.engine.connect() as c:
            row = c.execute(sa.select(*columns).where(sessions_table.c.name == name)).mappings().first()
        return decode(row) if row else None

    def session_names(self) -> list[str]:
        with self.engine.connect() as c:
            return [r[0] for r in c.execute(sa.select(sessions_table.c.name).order_by(sessions_table.c.created_at))]

    def update_session(self, name: str, **values: Unpack[SessionUpdate]) -> None:
        row = {**checked(SessionUpdate, values, "update_session"), "updated_at": time.time()}
        with self.engine.begin() as c:
            c.execute(sessions_table.update().where(sessions_table.c.name == name).values(encode(row)))

    # -- configs ------------------------------------------------------------------------
    def add_config(self, session: str, *, trial_number: int, kind: str, name: str, params: Mapping[str, Any],
                   stage: str = "search", worker: str = "") -> int:
        with self.engine.begin() as c:
            result = c.execute(configs_table.insert().values(encode({
                "session": session, "trial_number": trial_number, "kind": kind, "stage": stage, "name": name,
                "params": dict(params), "status": "running", "worker": worker, "created_at": time.time(),
            })))
            return _new_id(result)

    def update_config(self, config_id: int, *, only_if: Mapping[str, Any] | None = None,
                      runs_as: SeedRuns | None = None, **values: Unpack[ConfigUpdate]) -> bool:
        """Write ``values`` into config ``config_id``'s row; ``only_if``: only while its columns hold
        those values (one conditional UPDATE, so another worker's write in between is kept);
        ``runs_as``: only while the config's runs of its seeds are still as a decision read them
        (``SeedRuns``), checked in the same transaction under the config row's lock (``FOR UPDATE`` on
        PostgreSQL: another worker's write to the row waits, so one that claimed a run before it is
        seen, and one after it lands after). Whether the row was written."""
        checked(ConfigUpdate, values, "update_config")
        where = [configs_table.c.id == config_id,
                 *(configs_table.c[name] == value for name, value in (only_if or {}).items())]
        with self.engine.begin() as c:
            if runs_as is not None:
                if c.execute(sa.select(configs_table.c.id).where(*where).with_for_update()).first() is None:
                    return False
                runs = _decoded(c.execute(sa.select(
                    runs_table.c.id, runs_table.c.config_id, runs_table.c.status, runs_table.c.stage,
                    runs_table.c.seed_index, runs_table.c.pause_step, runs_table.c.last_step, runs_table.c.launches)
                    .where(runs_table.c.config_id == config_id)))
                if not runs_as.holds(runs):
                    return False
            written = c.execute(configs_table.update().where(*where).values(encode(values))).rowcount == 1
            if written and values.keys() & {"rung", "rung_state", "rung_note"}:  # not in the change marker's sums
                owner = sa.select(configs_table.c.session).where(configs_table.c.id == config_id).scalar_subquery()
                c.execute(sessions_table.update().where(sessions_table.c.name == owner).values(updated_at=time.time()))
        return written

    def configs(self, session: str, *, stage: str | None = None) -> list[dict[str, Any]]:
        query = sa.select(configs_table).where(configs_table.c.session == session)
        if stage:
            query = query.where(configs_table.c.stage == stage)
        with self.engine.connect() as c:
            return _decoded(c.execute(query.order_by(configs_table.c.id)))

    # -- runs ----------------------------------------------------------------------------
    def add_run(self, session: str, **values: Any) -> int:
        values = {"session": session, "status": "pending", **values}
        with self.engine.begin() as c:
            return _new_id(c.execute(runs_table.insert().values(encode(values))))

    def update_run(self, run_id: int, **values: Unpack[RunUpdate]) -> None:
        checked(RunUpdate, values, "update_run")
        with self.engine.begin() as c:
            c.execute(runs_table.update().where(runs_table.c.id == run_id).values(encode(values)))
            if "samples" in values:  # stored after the loss series: the change marker sees it here
                owner = sa.select(runs_table.c.session).where(runs_table.c.id == run_id).scalar_subquery()
                c.execute(sessions_table.update().where(sessions_table.c.name == owner).values(updated_at=time.time()))

    def claim_run(self, run_id: int, worker: str, *, from_status: str = "paused") -> bool:
        """Take run ``run_id`` over to relaunch it (a paused run resumed, an interrupted promote
        run continued): ``from_status`` -> "running" for ``worker`` in one conditional UPDATE, so
        of several workers that try at once exactly one gets True."""
        with self.engine.begin() as c:
            return c.execute(runs_table.update().where(
                (runs_table.c.id == run_id) & (runs_table.c.status == from_status)).values(
                status="running", worker=worker)).rowcount == 1

    def get_run(self, run_id: int) -> dict[str, Any] | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(runs_table).where(runs_table.c.id == run_id)).mappings().first()
        return decode(row) if row else None

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
            return _decoded(c.execute(query.order_by(runs_table.c.id)))

    def series(self, run_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        """The loss and eval-loss series of the given runs: ``{id: {"loss": ..., "eval_loss": ...}}``."""
        ids = list(run_ids)
        if not ids:
            return {}
        query = sa.select(runs_table.c.id, runs_table.c.loss_json, runs_table.c.eval_loss_json).where(
            runs_table.c.id.in_(ids))
        with self.engine.connect() as c:
            return {row.id: dict(check_record({"loss": json.loads(row.loss_json or "[]"),
                                               "eval_loss": json.loads(row.eval_loss_json or "[]")}, f"run {row.id}"))
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
            return _new_id(c.execute(ratings_table.insert().values(
                session=session, run_id=run_id, prompt_index=prompt_index, value=float(value), step=step,
                created_at=time.time(),
            )))

    def ratings(self, session: str) -> list[dict[str, Any]]:
        with self.engine.connect() as c:
            columns = [col for col in ratings_table.c if f"{ratings_table.name}.{col.name}" not in self.absent]
            query = sa.select(*columns).where(ratings_table.c.session == session).order_by(ratings_table.c.id)
            return [{"step": None, **r} for r in c.execute(query).mappings()]

    def add_comparison(self, session: str, left_run_id: int, right_run_id: int, winner: str) -> int:
        with self.engine.begin() as c:
            return _new_id(c.execute(comparisons_table.insert().values(
                session=session, left_run_id=left_run_id, right_run_id=right_run_id, winner=winner,
                created_at=time.time(),
            )))

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

    # -- kept views ----------------------------------------------------------------------
    def kept_view(self, session: str, name: str, key_json: str) -> Any | None:
        """The data of view ``name`` of ``session`` when it was kept under ``key_json`` (its key as
        JSON text), else None; nothing fetched when it is stale, and one more query when it is
        current. None too when the
        store has no views table (an older store opened read-only), the data is not JSON, or a
        row of the session may be damaged by hand since (``sound_rows.rows_vouched``: the rows
        are then read, and say so)."""
        if views_table.name in self.absent:
            return None
        v = views_table.c
        query = sa.select(v.data_json).where((v.session == session) & (v.name == name) & (v.key_json == key_json))
        with self.engine.connect() as c:
            text = c.execute(query).scalar()
        if text is None or not rows_vouched(self.engine, session, self.absent):
            return None
        try:
            return json.loads(text)
        except ValueError:
            return None

    def keep_view(self, session: str, name: str, key_json: str, data: Any) -> bool:
        """Keep ``data`` (plain JSON data) as view ``name`` of ``session`` under ``key_json``,
        replacing what was kept (an upsert: the last writer wins, each row replaced whole). Touches
        nothing :meth:`change_marker` reads. False when the store has no views table."""
        if views_table.name in self.absent:
            return False
        values = {"key_json": key_json, "data_json": json.dumps(data, default=str), "updated_at": time.time()}
        dialect = self.engine.dialect.name
        with self.engine.begin() as c:
            if dialect in ("sqlite", "postgresql"):
                from sqlalchemy.dialects import postgresql, sqlite

                insert = sqlite.insert if dialect == "sqlite" else postgresql.insert
                c.execute(insert(views_table).values(session=session, name=name, **values)
                          .on_conflict_do_update(index_elements=["session", "name"], set_=values))
            else:  # another database: replaced in one transaction
                c.execute(views_table.delete().where((views_table.c.session == session) & (views_table.c.name == name)))
                c.execute(views_table.insert().values(session=session, name=name, **values))
        return True
