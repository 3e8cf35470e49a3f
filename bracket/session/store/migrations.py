"""The store's schema version and its ordered migrations.

A store records the version of Bracket's tables it holds in ``bracket_schema`` (one row). Each
change to the tables after the first release is one :class:`Migration` in :data:`MIGRATIONS`,
numbered in order; opening a writable store runs those above its version, in order, in the
opening transaction, and stamps the new version. A store without the version row (written
before versions were kept) is at version 0: every migration checks what it adds before adding
it, so an old store that already has some of the later columns is brought up to date safely.

A store stamped with a version above :data:`LATEST` was written by a newer Bracket (machines of
different versions sharing one PostgreSQL store): it is refused with one line that says so,
rather than read with rows this version does not understand.

To change the tables: add the column or table to :mod:`bracket.session.store.schema` (so new
stores get it from ``create_all``) and append a migration here that adds it to an older store.
Never change or reorder a migration that has shipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

import sqlalchemy as sa

from bracket.errors import BracketError
from bracket.session.store.schema import metadata, views_table

schema_table = sa.Table(
    "bracket_schema", metadata,
    sa.Column("id", sa.Integer, primary_key=True),  # always 1: one row
    sa.Column("version", sa.Integer, nullable=False),
)


class NewerStoreError(BracketError):
    """The store was written by a newer Bracket than this one."""


@dataclass(frozen=True)
class Migration:
    """One change to the tables: ``version`` is the store's version once it has run."""

    version: int
    what: str
    #: adds what is missing (idempotent); returns the ``table.column`` / table names it cannot
    #: add on a read-only store (``add=False``), which reading then treats as empty
    run: Callable[[sa.Connection, bool], set[str]]


def _column(table: str, column: str, sql_type: str) -> Callable[[sa.Connection, bool], set[str]]:
    def run(connection: sa.Connection, add: bool) -> set[str]:
        inspector = sa.inspect(connection)
        if not inspector.has_table(table) or column in {c["name"] for c in inspector.get_columns(table)}:
            return set()
        if not add:
            return {f"{table}.{column}"}
        connection.execute(sa.text(f"ALTER TABLE {table} ADD COLUMN {column} {sql_type}"))
        return set()
    return run


def _table(table: sa.Table) -> Callable[[sa.Connection, bool], set[str]]:
    def run(connection: sa.Connection, add: bool) -> set[str]:
        if sa.inspect(connection).has_table(table.name):
            return set()
        if not add:
            return {table.name}
        table.create(connection, checkfirst=True)
        return set()
    return run


#: the halving fields the release before nesting kept flat in a session's settings
_FLAT_HALVING = ("eta", "smallest_rung", "launch_share")
#: the trainer's facts that release wrote into a session's settings after validation
_FLAT_FACTS = ("restarts", "rung_every")


def nested_settings(data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Stored search settings as this release keeps them, and the trainer's facts they held: the
    release before kept successive halving flat (``halving: true`` beside ``eta``,
    ``smallest_rung``, ``launch_share``) and wrote the trainer's facts (``restarts``,
    ``rung_every``) into them; now ``halving`` is an object of its settings or null, and the facts
    are the session's ``plan``. Settings already nested come back as they are, with no facts."""
    flag = data.get("halving")
    if not isinstance(flag, bool):
        return dict(data), None
    out = {k: v for k, v in data.items() if k not in _FLAT_HALVING + _FLAT_FACTS}
    out["halving"] = {k: data[k] for k in _FLAT_HALVING if k in data} if flag else None
    facts = {k: data[k] for k in _FLAT_FACTS if k in data}
    return out, (facts if flag else None)


def _nest_settings(connection: sa.Connection, add: bool) -> set[str]:
    if not add:
        return set()  # read-only: ``SearchSettings.from_dict`` reads the flat form the same way
    inspector = sa.inspect(connection)
    if not inspector.has_table("bracket_sessions") or not {"settings_json", "plan_json"} <= {
            c["name"] for c in inspector.get_columns("bracket_sessions")}:
        return set()  # no sessions' settings to rewrite (a store made by hand in a test, say)
    rows = connection.execute(sa.text("SELECT name, settings_json, plan_json FROM bracket_sessions")).all()
    for name, settings_json, plan_json in rows:
        try:
            settings = json.loads(settings_json)
        except ValueError:
            continue  # a damaged row: opening that session says so
        if not isinstance(settings, dict):
            continue
        nested, facts = nested_settings(settings)
        if facts is None and nested == settings:
            continue
        connection.execute(sa.text("UPDATE bracket_sessions SET settings_json = :settings, plan_json = :plan "
                                   "WHERE name = :name"),
                           {"settings": json.dumps(nested), "name": name,
                            "plan": json.dumps(facts) if facts is not None else plan_json})
    return set()


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "a rating names the step whose samples were rated", _column("bracket_ratings", "step", "INTEGER")),
    Migration(2, "successive halving: a config's rung", _column("bracket_configs", "rung", "INTEGER")),
    Migration(3, "successive halving: a config's rung state", _column("bracket_configs", "rung_state", "VARCHAR(20)")),
    Migration(4, "successive halving: a config's rung note", _column("bracket_configs", "rung_note", "TEXT")),
    Migration(5, "a run's launches", _column("bracket_runs", "launches", "INTEGER")),
    Migration(6, "a run's pause step", _column("bracket_runs", "pause_step", "INTEGER")),
    Migration(7, "the steps a restart threw away", _column("bracket_runs", "restart_steps", "INTEGER")),
    Migration(8, "views kept in the store (status)", _table(views_table)),
    Migration(9, "a session's plan: the trainer's facts decided at creation", _column("bracket_sessions", "plan_json",
                                                                                   "TEXT")),
    Migration(10, "halving settings nested, the trainer's facts moved from the settings to the plan", _nest_settings),
)
#: the version of the tables this Bracket writes
LATEST = MIGRATIONS[-1].version


def stored_version(connection: sa.Connection) -> int | None:
    """The version stamped in the store, or None when it keeps none (written before versions were)."""
    if not sa.inspect(connection).has_table(schema_table.name):
        return None
    row = connection.execute(sa.select(schema_table.c.version).where(schema_table.c.id == 1)).first()
    return None if row is None else int(row[0])


def stamp(connection: sa.Connection, version: int = LATEST) -> None:
    """Record ``version`` as the store's (a new store's tables are at :data:`LATEST`)."""
    schema_table.create(connection, checkfirst=True)
    done = connection.execute(sa.update(schema_table).where(schema_table.c.id == 1).values(version=version))
    if not done.rowcount:
        connection.execute(sa.insert(schema_table).values(id=1, version=version))


def migrate(connection: sa.Connection, *, add: bool = True) -> frozenset[str]:
    """Bring the store on ``connection`` up to :data:`LATEST` (its migrations above its stamped
    version, in order, then the new stamp); a read-only store (``add=False``) is left as it is and
    the names it lacks are returned. Raises :class:`NewerStoreError` for a store of a newer Bracket."""
    version = stored_version(connection) or 0
    if version > LATEST:
        raise NewerStoreError(
            f"The store was written by a newer Bracket (its tables are at version {version}, this Bracket "
            f"knows up to {LATEST}); update Bracket on this machine to the version the other machines run.")
    absent: set[str] = set()
    for migration in MIGRATIONS:
        if migration.version > version:
            absent |= migration.run(connection, add)
    if add and version < LATEST:
        stamp(connection)
    return frozenset(absent)
