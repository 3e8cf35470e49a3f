"""``python -m bracket status``, kept between calls until the store changes.

Scoring every run of a 2000-trial session takes seconds and opening it in full most of a
second, while ``status`` is asked again and again with nothing changed. So everything of its
answer that comes from the standings and the session's definition is kept *in the store*
(table ``bracket_views``, view ``status``: ``Store.keep_view``) with the key it was computed
under, and reused while the key is the same; in the store, so every machine sharing it finds it.

* the key is the store's change marker (:meth:`Store.change_marker`) without the step counter
  of running runs, plus the judge weights and :data:`FORMAT`; keeping a view moves nothing the
  marker reads;
* :func:`quick_status` answers from the kept view with only the store opened; when it is
  missing or stale, ``bracket.cli.commands.cmd_status`` opens the session, builds the view
  (``bracket.status.refresh.build_view``, from the standings) and keeps it;
* the header (status, workers alive or gone) is read fresh every time (:func:`print_status`);
* a read-only store is read, never written (an old one without the table computes its answer
  each time); a kept view that is not JSON is ignored and rebuilt;
* a kept view is served only while the session's rows are sound (``Store.kept_view`` asks
  ``store.sound_rows`` in one query): a row damaged by hand since is read, and reported;
* the process that changes the store keeps the view current (``bracket.status.refresh``).
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
FORMAT = 6
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
