"""The past sessions in a runs folder, as the Setup tab lists them.

Each folder with a ``session.json`` is one entry; its status and progress come from its
store (the open session's from its live snapshot). A folder whose file or store is damaged
is still listed, with the reason in its status, so the others keep working.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bracket.errors import BracketError
from bracket.session.create import SESSION_FILE, read_session_file
from bracket.session.session import Session
from bracket.session.snapshot import SessionSnapshot


@dataclass(frozen=True)
class SessionInfo:
    """One past session in the runs folder."""

    name: str
    folder: Path
    preset_id: str
    status: str
    created_at: float
    runs_spent: int = 0
    total_runs: int = 0

    @property
    def label(self) -> str:
        try:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.created_at)) if self.created_at else "?"
        except (OverflowError, OSError, ValueError):
            when = "?"
        return f"{self.name} · {self.preset_id} · {self.status} · {self.runs_spent}/{self.total_runs} runs · {when}"


def list_sessions(runs_dir: Path, *, storage_url: str | None = None, current: Session | None = None,
                  current_snapshot: Callable[[], SessionSnapshot | None] = lambda: None) -> list[SessionInfo]:
    """Sessions in ``runs_dir``, newest first (unreadable ones say why in their status);
    ``current`` (the open session) is described by ``current_snapshot``."""
    if not runs_dir.is_dir():
        return []
    found: list[SessionInfo] = []
    for path in sorted(runs_dir.glob(f"*/{SESSION_FILE}")):
        folder = path.parent
        try:
            info = read_session_file(folder)
        except BracketError as error:  # listed as damaged, with the reason; the others still work
            found.append(SessionInfo(folder.name, folder, "?", f"damaged: {error}", 0.0))
            continue
        name, preset_id = str(info.get("name", folder.name)), str(info.get("preset_id", "?"))
        created = float(info.get("created_at") or 0.0)
        if current is not None and current.folder.resolve() == folder.resolve():
            snap = current_snapshot()
            if snap is not None:
                found.append(SessionInfo(name, folder, preset_id, snap.status, created, snap.runs_spent,
                                         snap.total_runs))
                continue
        try:
            session = Session.open(folder, storage_url=storage_url, validate=False)
        except (BracketError, ValueError, TypeError, KeyError) as error:  # a damaged store row, too
            found.append(SessionInfo(name, folder, preset_id, f"unreadable ({error})", created))
            continue
        try:
            row = session.store.get_session(session.name) or {}
            spent = session.spent_runs()
            found.append(SessionInfo(name, folder, preset_id, str(row.get("status", "?")), created, spent,
                                     session.total_runs()))
        finally:
            session.store.close()
    return sorted(found, key=lambda s: s.created_at, reverse=True)


def session_folder(runs_dir: Path, folder: Path | str) -> Path:
    """``folder`` (relative to ``runs_dir`` unless absolute) when it is a Bracket session folder."""
    path = Path(folder)
    if not path.is_absolute():
        path = runs_dir / path
    if not (path / SESSION_FILE).is_file():
        raise BracketError(f"{path} is not a Bracket session folder; pick one from the list of past sessions.")
    return path
