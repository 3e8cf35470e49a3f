"""One query that says whether a session's rows would all decode: the database's own check of
what :func:`~bracket.session.store.schema.check_record` checks in Python, for a kept view.

A kept view (``status``'s) is served without reading the rows it was built from, and a row
changed by hand (a JSON column that is not JSON or of the wrong shape, a number of the wrong
type or out of range) moves nothing the change marker reads. So before a kept view is served,
:func:`rows_vouched` asks the database, in one statement built from the same rules
(``JSON_SHAPES``, ``WHOLE_COLUMNS``, ``NUMBER_COLUMNS``), whether any run (its loss series
aside, as ``status`` reads them) or config of the session breaks them. When one might, the
view is not served: the command reads the rows and says the one ``error: The session's store
is damaged (…)`` line, or, where the database was stricter than Python (``NaN`` in a JSON
column), answers from the rows as without a kept view.

SQLite checks JSON with ``json_type`` and types with ``typeof``; PostgreSQL (typed number
columns) casts JSON text to ``json``, which fails on text that is not JSON: a failed check is a
row not vouched for. Another database is never vouched for (its views are rebuilt).
"""

from __future__ import annotations

import sys
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from bracket.session.store.schema import (
    JSON_COLUMNS,
    JSON_SHAPES,
    NUMBER_COLUMNS,
    WHOLE_COLUMNS,
    configs_table,
    runs_table,
)

#: the runs' columns a kept view is built without (``Store.runs(with_series=False)``)
SERIES_COLUMNS = ("loss_json", "eval_loss_json")
#: what ``json_type`` / ``json_typeof`` call each shape of ``JSON_SHAPES``
_JSON_TYPE: dict[type, str] = {dict: "object", list: "array"}
_CHECKED_DIALECTS = ("sqlite", "postgresql")


def _json_broken(column: sa.Column, shape: type, dialect: str) -> Any:
    kind = sa.func.json_type(column) if dialect == "sqlite" else sa.func.json_typeof(sa.cast(column, sa.JSON))
    empty = column.is_(None) | column.in_(["", "null"])  # decoded as None, as ``schema._loads`` does
    # CASE, not AND: an empty text is never parsed (PostgreSQL's cast of "" fails)
    return sa.case((empty, sa.false()), else_=sa.func.coalesce(kind, "") != _JSON_TYPE[shape])


def _number_broken(column: sa.Column, dialect: str, low: float, high: float, types: tuple[str, ...]) -> Any:
    bound = sa.BigInteger() if "real" not in types else sa.Float()  # 64-bit bounds beside a 32-bit column
    # PostgreSQL's NaN sorts above every number
    wrong = (column < sa.literal(low, bound)) | (column > sa.literal(high, bound))
    if dialect == "sqlite":  # a column of any type holds any value there
        wrong = wrong | sa.func.typeof(column).not_in(list(types))
    return column.is_not(None) & wrong


def broken_row(table: sa.Table, dialect: str, absent: frozenset[str] = frozenset()) -> Any:
    """The condition of a row of ``table`` that ``check_record`` might refuse (columns in
    ``absent``, and the runs' loss series, left out)."""
    largest = sys.float_info.max
    conditions = []
    for column in table.c:
        if f"{table.name}.{column.name}" in absent or column.name in SERIES_COLUMNS:
            continue
        decoded = JSON_COLUMNS.get(column.name, column.name)
        if decoded in JSON_SHAPES and column.name in JSON_COLUMNS:
            conditions.append(_json_broken(column, JSON_SHAPES[decoded], dialect))
        elif decoded in WHOLE_COLUMNS:
            low, high = WHOLE_COLUMNS[decoded]
            conditions.append(_number_broken(column, dialect, low, high, ("integer",)))
        elif decoded in NUMBER_COLUMNS:
            conditions.append(_number_broken(column, dialect, -largest, largest, ("integer", "real")))
    return sa.or_(*conditions) if conditions else sa.false()


def rows_vouched(engine: Engine, session: str, absent: frozenset[str] = frozenset()) -> bool:
    """Whether every run (loss series aside) and config row of ``session`` passes the database's
    check of the rules ``check_record`` applies; False when one may not, or the check failed."""
    dialect = engine.dialect.name
    if dialect not in _CHECKED_DIALECTS:
        return False
    counts = [sa.select(sa.func.count()).select_from(table)
              .where((table.c.session == session) & broken_row(table, dialect, absent)).scalar_subquery()
              for table in (runs_table, configs_table)]
    try:
        with engine.connect() as c:
            return not any(c.execute(sa.select(*counts)).one())
    except sa.exc.DBAPIError:  # PostgreSQL: text that is not JSON cast to json; SQLite: malformed JSON
        return False
