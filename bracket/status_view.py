"""``python -m bracket status``, kept between calls until the store changes (issue 24).

Scoring every run of a 2000-trial session (its loss series, per-step curves, the boards)
takes seconds; ``status`` is asked again and again while nothing changed. So the part of its
answer that comes from the standings — the run table, the best steps, the winner lines, and
the ``--json`` standings — is written to ``<session>/views/status.json`` with the key it was
computed under, and reused while the key is the same:

* the key is the store's change marker (:meth:`Store.change_marker`, one query) without the
  step counter of running runs — a run's progress shows nowhere in this part; a finished
  run, a rating, a new config, a sample written all move it — plus the judge weights and
  :data:`FORMAT`;
* the header (status, workers alive or gone) is read fresh every time: it changes with the
  clock, not with the store;
* a read-only or full session folder is read, never written; a damaged or foreign file is
  ignored and rebuilt. The file is plain JSON (numbers and text), never code.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from bracket.app.snapshot_cache import STEPS

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.session import Session

#: bump when what :func:`standings_view` stores changes shape
FORMAT = 1
VIEW_FILE = Path("views") / "status.json"


def view_key(session: "Session") -> list[Any]:
    marker = list(session.store.change_marker(session.name))
    del marker[STEPS]  # running runs' steps: not shown by the standings part
    weights = sorted((session.settings.weights or {}).items())
    return json.loads(json.dumps([FORMAT, session.name, marker, weights], default=str))


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write(path: Path, data: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(data), encoding="utf-8")
        os.replace(partial, path)
    except OSError:  # a read-only folder, a full disk: status still answers, just not faster next time
        pass


def standings_view(session: "Session", build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``build()`` (plain JSON data), or what it gave last time under the same :func:`view_key`."""
    key = view_key(session)  # before the build: a change during it makes the next call build again
    path = session.folder / VIEW_FILE
    kept = _read(path)
    if kept is not None and kept.get("key") == key and isinstance(kept.get("view"), dict):
        return kept["view"]
    view = json.loads(json.dumps(build(), default=str))
    if not session.store.read_only:
        _write(path, {"key": key, "view": view})
    return view
