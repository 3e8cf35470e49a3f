"""``python -m bracket status``, kept between calls until the store changes.

Scoring every run of a 2000-trial session (its loss series, per-step curves, the boards)
takes seconds, and opening the session in full (the preset registry, the trainer, the
search space — with Optuna and the samplers behind them) most of a second; ``status`` is
asked again and again while nothing changed. So everything of its answer that comes from
the standings and the session's definition — the run table, the best steps, the winner
lines, the ``--json`` standings, the preset, the plan, the fixed knobs and the winner's
whole config — is kept *in the store* (table ``bracket_views``, view ``status``, one row per
session: ``Store.keep_view``) with the key it was computed under, and reused while the key is
the same. In the store, not in the session folder: several machines sharing a search each have
a folder of their own and one store, so a view kept by a worker on one machine is found current
by ``status`` on every other (a file would be current only in the folder of whoever wrote it).

* the key is the store's change marker (:meth:`Store.change_marker`, one query) without the
  step counter of running runs — a run's progress shows nowhere in this part; a finished
  run, a rating, a new config, a sample written, a changed setting all move it — plus the
  judge weights and :data:`FORMAT`. Keeping a view touches nothing the marker reads;
* :func:`quick_status` answers from the kept view with nothing but the store opened
  (``bracket.session.store.folder``; one more query, which fetches nothing when the view is stale):
  no preset registry, no Optuna, no loss series. When it is missing or stale,
  ``bracket.cli.commands.cmd_status`` opens the session, builds the view
  (``bracket.status.refresh.build_view`` from the standings, ``bracket.standings``: the one
  computation of the answer) and keeps it;
* the header (status, workers alive or gone) is read fresh every time, by both: it changes
  with the clock, not with the store (:func:`print_status`);
* a read-only store is read, never written; a store from before ``bracket_views`` gets the
  table when opened writable, and opened read-only (or where the table cannot be made) it
  goes without: ``status`` then computes its answer each time. A kept view that is not JSON
  is ignored and rebuilt; it is plain JSON (numbers and text), never code. Older Bracket
  versions kept it in ``<session>/views/status.json``: such a file is no longer read;
* the process that changes the store keeps the view current (``bracket.status.refresh``):
  a search or worker right after each run's trainer started, and when it ends; the app after
  a rating or a pairwise choice. So ``status`` asked during or after a search, in any folder
  of the store, finds it current.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import sqlalchemy as sa

from bracket.session.store.records import MARKER_STEPS

if TYPE_CHECKING:  # pragma: no cover
    import argparse

    from bracket.session import Session
    from bracket.session.store import Store

#: bump when what :func:`standings_view` stores changes shape
FORMAT = 5
#: the name of ``status``'s row in the store's kept views (``bracket_views``)
VIEW_NAME = "status"


def view_key(store: "Store", name: str, weights: Mapping[str, float] | None) -> list[Any]:
    """What the kept view depends on (see the module's docstring); ``weights``: the session's judge weights."""
    marker = list(store.change_marker(name))
    del marker[MARKER_STEPS]  # running runs' steps: not shown by the standings part
    return json.loads(json.dumps([FORMAT, name, marker, sorted((weights or {}).items())], default=str))


def _key_text(key: list[Any]) -> str:
    return json.dumps(key, separators=(",", ":"))


def kept_view(store: "Store", name: str, key: list[Any]) -> dict[str, Any] | None:
    """The view of session ``name`` kept in ``store`` under ``key``, or None."""
    view = store.kept_view(name, VIEW_NAME, _key_text(key))
    return view if isinstance(view, dict) else None


def standings_view(session: "Session", build: Callable[[], dict[str, Any]], *, quiet: bool = True
                   ) -> dict[str, Any]:
    """``build()`` (plain JSON data: ``bracket.status.refresh.build_view``), or what it gave last
    time under the same :func:`view_key`; a new one is kept in the store unless the store is
    read-only (a failed write raises only when not ``quiet``)."""
    key = view_key(session.store, session.name, session.settings.weights)  # before the build: a change
    view = kept_view(session.store, session.name, key)                     # during it builds again next time
    if view is not None:
        return view
    view = json.loads(json.dumps(build(), default=str))
    if not session.store.read_only:
        try:
            session.store.keep_view(session.name, VIEW_NAME, _key_text(key), view)
        except (OSError, sa.exc.SQLAlchemyError):  # a locked or full store: status answers, just not faster next time
            if not quiet:
                raise
    return view


def status_answer(name: str, status: str, view: Mapping[str, Any]) -> dict[str, Any]:
    """What ``status --json`` prints: the standings of ``view`` (their ``params`` are the searched
    knobs), the knobs this session holds fixed (``fixed_knobs``, e.g. a preset's batch size; a
    conditional one applies only where its condition holds) and the winner's whole config,
    searched and fixed knobs alike (``winner.all_params``); the budget (``budget``: runs, or a halving
    search's full runs, whose ``full_runs_spent`` is the GPU time its runs used, ``spent`` the
    status line's words)."""
    answer = {"session": name, "preset_id": view["preset_id"], "status": status,
              "runs_spent": view["runs_spent"], "total_runs": view["total_runs"],
              "halving": view.get("full_runs_spent") is not None, "budget": view.get("budget"),
              "full_runs_spent": view.get("full_runs_spent"), "spent": _spent(view),
              "fixed_knobs": dict(view["fixed_knobs"]), **json.loads(view["table_json"])}
    if answer.get("winner") is not None:  # a copy: the view is kept
        answer["winner"] = {**answer["winner"], "all_params": dict(view["winner_all_params"] or {})}
    return answer


def _spent(view: Mapping[str, Any]) -> str:
    """``3/8 runs`` or a halving search's ``2.4/4 full runs, 8 configs`` (a view kept before it had it: runs)."""
    return str(view.get("spent") or f"{view['runs_spent']}/{view['total_runs']} runs")


def print_status(store: "Store", name: str, view: Mapping[str, Any], *, as_json: bool, grace_s: float | None = None
                 ) -> int:
    """Print ``status`` (or ``status --json``) from ``view`` and the store's fresh header; the exit code."""
    from bracket.session.recovery import DEFAULT_GRACE_SECONDS, shown_status, worker_is_alive

    status = str((store.get_session(name) or {}).get("status", "created"))
    if as_json:
        print(json.dumps(status_answer(name, status, view), indent=2, default=str))
        return 0
    grace = DEFAULT_GRACE_SECONDS if grace_s is None else grace_s
    workers = [dict(w, alive=worker_is_alive(w, grace_s=grace)) for w in store.workers(name)]
    status = shown_status(status, workers, grace)  # the app's past sessions follow the same rule
    print(f"session {name} ({view['preset_id']}): {status}; {view['plan']}; "
          f"{_spent(view)} spent")
    for worker in workers:
        doing = str(worker.get("status") or "alive")  # what it beats with: "alive", "running finals", ...
        state = ("alive" if doing == "alive" else f"alive, {doing}") if worker["alive"] else "gone"
        print(f"worker {worker['worker_id']} gpu={worker['gpu'] or '-'}: {state}")
    for line in view["lines"]:
        print(line)
    return 0


def quick_status(args: "argparse.Namespace") -> int | None:
    """``status`` from the kept view, with only the store opened; None when the view is missing
    or stale (or anything is unusual: the full command then answers, or says what is wrong)."""
    from bracket.errors import BracketError
    from bracket.session.store import open_session_store

    try:
        store, name = open_session_store(Path(args.path), storage_url=args.storage)
    except BracketError:
        return None  # the full command says what is wrong, in its own words
    try:
        row = store.get_session(name) or {}
        view = kept_view(store, name, view_key(store, name, (row.get("settings") or {}).get("weights")))
        if view is None:
            return None
        return print_status(store, name, view, as_json=bool(args.json))
    finally:
        store.close()
