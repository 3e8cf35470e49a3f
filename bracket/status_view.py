"""``python -m bracket status``, kept between calls until the store changes (issue 24).

Scoring every run of a 2000-trial session (its loss series, per-step curves, the boards)
takes seconds, and opening the session in full (the preset registry, the trainer, the
search space — with Optuna and the samplers behind them) most of a second; ``status`` is
asked again and again while nothing changed. So everything of its answer that comes from
the standings and the session's definition — the run table, the best steps, the winner
lines, the ``--json`` standings, the preset, the plan, the fixed knobs and the winner's
whole config — is written to ``<session>/views/status.json`` with the key it was computed
under, and reused while the key is the same:

* the key is the store's change marker (:meth:`Store.change_marker`, one query) without the
  step counter of running runs — a run's progress shows nowhere in this part; a finished
  run, a rating, a new config, a sample written, a changed setting all move it — plus the
  judge weights and :data:`FORMAT`;
* :func:`quick_status` answers from that file with nothing but the store opened
  (``bracket.session.folder``): no preset registry, no Optuna, no loss series. When the file
  is missing or stale, ``bracket.cli_commands.cmd_status`` opens the session, builds the view
  (``bracket.status_refresh.build_view`` from the standings, ``bracket.standings``: the one
  computation of the answer) and keeps it;
* the header (status, workers alive or gone) is read fresh every time, by both: it changes
  with the clock, not with the store (:func:`print_status`);
* a read-only or full session folder is read, never written; a damaged or foreign file is
  ignored and rebuilt. The file is plain JSON (numbers and text), never code;
* the process that changes the store keeps the file current (``bracket.status_refresh``):
  a search right after each run's trainer started, and when it ends; the app after a rating
  or a pairwise choice. So ``status`` asked during or after a search finds it current.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from bracket.session.records import MARKER_STEPS

if TYPE_CHECKING:  # pragma: no cover
    import argparse

    from bracket.session.session import Session
    from bracket.session.store import Store

#: bump when what :func:`standings_view` stores changes shape
FORMAT = 2
VIEW_FILE = Path("views") / "status.json"


def view_key(store: "Store", name: str, weights: Mapping[str, float] | None) -> list[Any]:
    """What the kept view depends on (see the module's docstring); ``weights``: the session's judge weights."""
    marker = list(store.change_marker(name))
    del marker[MARKER_STEPS]  # running runs' steps: not shown by the standings part
    return json.loads(json.dumps([FORMAT, name, marker, sorted((weights or {}).items())], default=str))


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write(path: Path, data: dict[str, Any], *, quiet: bool = True) -> None:
    """Replace ``path`` whole with ``data``; an OSError is raised only when not ``quiet``."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")  # one per writer, then replaced whole
        partial.write_text(json.dumps(data), encoding="utf-8")
        os.replace(partial, path)
    except OSError:  # a read-only folder, a full disk: status still answers, just not faster next time
        if not quiet:
            raise


def kept_view(folder: Path, key: list[Any]) -> dict[str, Any] | None:
    """The view kept in ``folder`` under ``key``, or None."""
    kept = _read(Path(folder) / VIEW_FILE)
    if kept is not None and kept.get("key") == key and isinstance(kept.get("view"), dict):
        return kept["view"]
    return None


def standings_view(session: "Session", build: Callable[[], dict[str, Any]], *, quiet: bool = True
                   ) -> dict[str, Any]:
    """``build()`` (plain JSON data: ``bracket.status_refresh.build_view``), or what it gave last
    time under the same :func:`view_key`; a new one is written unless the store is read-only (a
    failed write raises OSError only when not ``quiet``)."""
    key = view_key(session.store, session.name, session.settings.weights)  # before the build: a change
    view = kept_view(session.folder, key)                                   # during it builds again next time
    if view is not None:
        return view
    view = json.loads(json.dumps(build(), default=str))
    if not session.store.read_only:
        _write(session.folder / VIEW_FILE, {"key": key, "view": view}, quiet=quiet)
    return view


def status_answer(name: str, status: str, view: Mapping[str, Any]) -> dict[str, Any]:
    """What ``status --json`` prints: the standings of ``view`` (their ``params`` are the searched
    knobs), the knobs this session holds fixed (``fixed_knobs``, e.g. a preset's batch size; a
    conditional one applies only where its condition holds) and the winner's whole config,
    searched and fixed knobs alike (``winner.all_params``)."""
    answer = {"session": name, "preset_id": view["preset_id"], "status": status,
              "runs_spent": view["runs_spent"], "total_runs": view["total_runs"],
              "fixed_knobs": dict(view["fixed_knobs"]), **json.loads(view["table_json"])}
    if answer.get("winner") is not None:  # a copy: the view is kept
        answer["winner"] = {**answer["winner"], "all_params": dict(view["winner_all_params"] or {})}
    return answer


def print_status(store: "Store", name: str, view: Mapping[str, Any], *, as_json: bool, grace_s: float | None = None
                 ) -> int:
    """Print ``status`` (or ``status --json``) from ``view`` and the store's fresh header; the exit code."""
    from bracket.session.recovery import DEFAULT_GRACE_SECONDS, worker_is_alive

    status = str((store.get_session(name) or {}).get("status", "created"))
    if as_json:
        print(json.dumps(status_answer(name, status, view), indent=2, default=str))
        return 0
    grace = DEFAULT_GRACE_SECONDS if grace_s is None else grace_s
    workers = [dict(w, alive=worker_is_alive(w, grace_s=grace)) for w in store.workers(name)]
    if status == "running" and not any(w["alive"] for w in workers):
        status = "interrupted (no process runs it; resume it)"  # e.g. a full disk kept "failed" from the store
    print(f"session {name} ({view['preset_id']}): {status}; {view['plan']}; "
          f"{view['runs_spent']}/{view['total_runs']} runs spent")
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
    from bracket.session.folder import open_session_store

    try:
        store, name = open_session_store(Path(args.path), storage_url=args.storage)
    except BracketError:
        return None  # the full command says what is wrong, in its own words
    try:
        row = store.get_session(name) or {}
        view = kept_view(Path(args.path), view_key(store, name, (row.get("settings") or {}).get("weights")))
        if view is None:
            return None
        return print_status(store, name, view, as_json=bool(args.json))
    finally:
        store.close()
