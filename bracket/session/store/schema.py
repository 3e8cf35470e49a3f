"""The store's schema: Bracket's tables beside the Optuna study, and how rows are encoded.

- ``bracket_sessions``: one row per search — preset, field values, search settings;
- ``bracket_configs``: one row per configuration (= one Optuna trial), its kind
  (baseline, past, curated, bracket, search, final; earlier sessions' configs of stores
  older than kind ``past`` read as ``past``), name and params;
- ``bracket_runs``: one row per training run (a config × a seed, or a setup command):
  run folder, pid and process start time while running, status, exit code, failure reason,
  log tail, automatic judge results, loss series and sample files;
- ``bracket_ratings`` and ``bracket_comparisons``: human scores, written at any time;
- ``bracket_workers``: heartbeats of the processes working on a search;
- ``bracket_views``: what a view computed from the other tables (``status``'s, see
  ``bracket.status.view``) with the key it was computed under, so every folder and machine
  sharing the store reuses it; a cache, never read as the truth, and writing it changes
  nothing :meth:`~bracket.session.store.records.Records.change_marker` reads.

JSON columns (``params_json`` ...) are read and written as plain values (:func:`decode`,
:func:`encode`); a decoded row whose JSON or number column has the wrong type or range
(:data:`JSON_SHAPES`, :data:`WHOLE_COLUMNS`, :data:`NUMBER_COLUMNS`) raises ``DamagedRowError``
where it is read (:func:`check_record`), so every command and the worker say one line. A column
or table added after the first release is added to an older store by its migration
(:mod:`bracket.session.store.migrations`, which also keeps the store's schema version); a
read-only store goes without them (``Store.absent``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from bracket.errors import DamagedRowError
from bracket.search.types import stored_kind

RUN_ACTIVE = ("pending", "running")
#: run states that spend budget (a crash of Bracket itself leaves "interrupted", which does not)
RUN_SPENT = ("done", "failed", "pruned", "disqualified")
#: what a run of a successive-halving search can also be while its config is tried: paused at a
#: rung, or resuming from one (it has a ``pause_step``)
RUN_AT_RUNG = ("paused", *RUN_ACTIVE)


def spends_budget(run: Mapping[str, Any]) -> bool:
    """A run that counts against the budget: spent, or paused at a rung or resuming from one
    (successive halving: its config was tried)."""
    return run["status"] in RUN_SPENT or (bool(run.get("pause_step")) and run["status"] in RUN_AT_RUNG)

metadata = sa.MetaData()

sessions_table = sa.Table(
    "bracket_sessions", metadata,
    sa.Column("name", sa.String(200), primary_key=True),
    sa.Column("preset_id", sa.String(100), nullable=False),
    sa.Column("fields_json", sa.Text, nullable=False),
    sa.Column("settings_json", sa.Text, nullable=False),
    sa.Column("notes_json", sa.Text, nullable=False, default="[]"),
    #: the trainer's facts decided at creation (``bracket.session.loop.trainer_facts.TrainerFacts``); null: none
    sa.Column("plan_json", sa.Text, nullable=True),
    sa.Column("study_name", sa.String(200), nullable=False),
    sa.Column("status", sa.String(40), nullable=False, default="created"),
    sa.Column("stop_requested", sa.String(20), nullable=False, default=""),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)
configs_table = sa.Table(
    "bracket_configs", metadata,
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
    #: successive halving (``bracket.search.halving``): the highest rung whose score is in
    #: (an index into the session's rungs; None without halving), where the config stands
    #: there ("running", "paused", "promoted", "stopped", "full") and why, in words
    sa.Column("rung", sa.Integer, nullable=True),
    sa.Column("rung_state", sa.String(20), nullable=True),
    sa.Column("rung_note", sa.Text, nullable=True),
    sa.UniqueConstraint("session", "trial_number", "stage", name="uq_config_trial"),
)
runs_table = sa.Table(
    "bracket_runs", metadata,
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
    #: how many times the trainer was launched for this run (a paused run resumed is one more)
    sa.Column("launches", sa.Integer, nullable=True),
    #: the step a run paused at a rung saved its state at (status "paused"); None otherwise
    sa.Column("pause_step", sa.Integer, nullable=True),
    #: the steps earlier launches trained that a launch from step 0 threw away (a trainer that
    #: cannot resume trains a promoted config again): spent, though no longer in the series
    sa.Column("restart_steps", sa.Integer, nullable=True),
)
ratings_table = sa.Table(
    "bracket_ratings", metadata,
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
    "bracket_comparisons", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session", sa.String(200), nullable=False, index=True),
    sa.Column("left_run_id", sa.Integer, nullable=False),
    sa.Column("right_run_id", sa.Integer, nullable=False),
    sa.Column("winner", sa.String(10), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)
workers_table = sa.Table(
    "bracket_workers", metadata,
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
views_table = sa.Table(
    "bracket_views", metadata,
    sa.Column("session", sa.String(200), primary_key=True),
    sa.Column("name", sa.String(100), primary_key=True),  # which view: "status"
    sa.Column("key_json", sa.Text, nullable=False),       # what it was computed under
    sa.Column("data_json", sa.Text, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)

JSON_COLUMNS = {
    "params_json": "params", "judges_json": "judges", "loss_json": "loss", "eval_loss_json": "eval_loss",
    "samples_json": "samples", "fields_json": "fields", "settings_json": "settings", "notes_json": "notes",
    "plan_json": "plan",
}


#: what each decoded JSON column must hold (None too: an empty column)
JSON_SHAPES: dict[str, type] = {"params": dict, "judges": dict, "fields": dict, "settings": dict, "plan": dict,
                                "loss": list, "eval_loss": list, "samples": list, "notes": list}
#: the largest step count a row may hold (far past ``search_settings.MAX_STEPS``, far below a float's exact range)
MAX_STORED_STEPS = 1_000_000_000
#: whole-number columns and the range they may hold (None always: not set)
WHOLE_COLUMNS: dict[str, tuple[int, int]] = {
    **{name: (0, MAX_STORED_STEPS) for name in ("max_steps", "last_step", "pause_step", "restart_steps", "launches",
                                               "rung", "seed_index")},
    **{name: (-(2 ** 63), 2 ** 63 - 1) for name in ("id", "config_id", "seed", "exit_code", "pid", "trial_number")},
}
#: number columns (times, durations, a config's value)
NUMBER_COLUMNS = ("value", "started_at", "finished_at", "duration_s", "pid_create_time", "created_at", "updated_at")


def _column_problem(record: Mapping[str, Any], name: str) -> str | None:
    value = record.get(name)
    if value is None:
        return None
    if name in JSON_SHAPES:
        return None if isinstance(value, JSON_SHAPES[name]) else f"a {JSON_SHAPES[name].__name__}"
    if name in WHOLE_COLUMNS:
        low, high = WHOLE_COLUMNS[name]
        ok = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
        return None if ok else f"a whole number from {low} to {high}"
    if name in NUMBER_COLUMNS:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        return None if ok else "a finite number"
    return None


def check_record(record: Mapping[str, Any], table: str = "") -> Mapping[str, Any]:
    """``record`` (a decoded row) unchanged; a JSON or number column of the wrong type or range
    raises :class:`~bracket.errors.DamagedRowError` naming it (and the row: ``table`` or what
    the record looks like), so every command says one line."""
    for name in record:
        expected = _column_problem(record, name)
        if expected:
            which = table or " ".join(filter(None, (
                "session" if "preset_id" in record else "config" if "trial_number" in record
                else "run" if "label" in record else "", str(record.get("id", record.get("name", "")))[:80])))
            raise DamagedRowError(f"{which}: {name} is {str(record[name])[:60]!r}, not {expected}")
    return record


def _loads(text: str | None) -> Any:
    """``json.loads``, with the empty values most columns of a long session hold read without it."""
    if not text or text == "null":
        return None
    if text == "{}":
        return {}
    if text == "[]":
        return []
    return json.loads(text)


def decode(row: Mapping[Any, Any]) -> dict[str, Any]:
    record = dict(row)
    for column, key in JSON_COLUMNS.items():
        if column in record:
            record[key] = _loads(record.pop(column))
    if "kind" in record:  # a config (name) or run (label) of an earlier session in an old store
        record["kind"] = stored_kind(str(record["kind"]), str(record.get("name", record.get("label")) or ""))
    check_record(record)
    return record


def decode_rows(keys: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[dict[str, Any]]:
    """:func:`decode` of each of ``rows`` (tuples of the columns ``keys``), with the column
    positions and the decoded dict's key order worked out once, not per row (the 2000 runs of
    a long search): the same dicts, keys in the same order, as ``decode(dict(zip(keys, row)))``."""
    keys = list(keys)
    plain = [i for i, k in enumerate(keys) if k not in JSON_COLUMNS]
    coded = [(keys.index(column), key) for column, key in JSON_COLUMNS.items() if column in keys]
    names = [keys[i] for i in plain] + [key for _, key in coded]
    if len(set(names)) != len(names) or len(set(keys)) != len(keys):  # a name twice: the plain way
        return [decode(dict(zip(keys, row))) for row in rows]
    first = len(plain)
    at = plain + [i for i, _ in coded]
    has_kind = "kind" in names
    records = []
    for row in rows:
        values = [row[i] for i in at]
        values[first:] = [_loads(v) for v in values[first:]]
        record = dict(zip(names, values))
        if has_kind and (type(record["kind"]) is not str or record["kind"] == "curated"):
            record["kind"] = stored_kind(str(record["kind"]), str(record.get("name", record.get("label")) or ""))
        check_record(record)
        records.append(record)
    return records


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


def encode(values: Mapping[str, Any]) -> dict[str, Any]:
    """Column values for a write: JSON columns dumped, every text made storable (:func:`storable_text`)."""
    reverse = {v: k for k, v in JSON_COLUMNS.items()}
    encoded: dict[str, Any] = {}
    for key, value in values.items():
        if key in reverse:
            value = json.dumps(value, default=str)
            key = reverse[key]
        encoded[key] = storable_text(value) if isinstance(value, str) else value
    return encoded
