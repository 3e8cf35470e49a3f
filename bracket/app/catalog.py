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

from bracket.errors import BracketError, damaged_store_reason
from bracket.safe_text import one_line
from bracket.session import Session, SessionSnapshot
from bracket.session.create import SESSION_FILE, read_session_file


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
            found.append(SessionInfo(folder.name, folder, "?", f"damaged: {one_line(error)}", 0.0))
            continue
        name, preset_id = str(info.get("name", folder.name)), str(info.get("preset_id", "?"))
        created = float(info.get("created_at") or 0.0)
        if current is not None and current.folder.resolve() == folder.resolve():
            snap = current_snapshot()
            if snap is not None:
                found.append(SessionInfo(name, folder, preset_id, snap.status, created, snap.runs_spent,
                                         snap.total_runs))
                continue
        found.append(_stored_info(folder, name, preset_id, created, storage_url))
    return sorted(found, key=lambda s: s.created_at, reverse=True)


def _stored_info(folder: Path, name: str, preset_id: str, created: float, storage_url: str | None) -> SessionInfo:
    """One session as its store describes it; a store that cannot be read — a garbled row, a
    dropped table, whatever the driver raises — is listed as damaged, with the reason."""
    from bracket.session.recovery import shown_status

    session: Session | None = None
    try:
        session = Session.open(folder, storage_url=storage_url, validate=False)
        row = session.store.get_session(session.name) or {}
        status = shown_status(str(row.get("status", "?")), session.store.workers(session.name),
                              session.worker.grace_s)
        return SessionInfo(name, folder, preset_id, status, created, session.spent_runs(), session.total_runs())
    except Exception as error:  # noqa: BLE001 - one damaged session must not break the list of all
        first_line = str(error).splitlines()[0] if str(error) else ""
        reason = str(error) if isinstance(error, BracketError) else (
            damaged_store_reason(error) or f"{type(error).__name__}: {first_line}")
        return SessionInfo(name, folder, preset_id, f"damaged: {one_line(reason)}", created)
    finally:
        if session is not None:
            session.store.close()


def session_folder(runs_dir: Path, folder: Path | str) -> Path:
    """``folder`` (relative to ``runs_dir`` unless absolute) when it is a Bracket session folder."""
    path = Path(folder)
    if not path.is_absolute():
        path = runs_dir / path
    if not (path / SESSION_FILE).is_file():
        raise BracketError(f"{path} is not a Bracket session folder; pick one from the list of past sessions.")
    return path
