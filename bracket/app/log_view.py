"""The Search tab's log panel: the tail of the current run's log, read only when it grew.

Many tabs poll the log every second; :class:`LogTail` reads the file again only when its
size or modification time changed, and finds the last run with a log (when none is
running) once per change of the session (the manager's ``memo``, of the snapshot just taken).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bracket.session.runner import read_log_tail
from bracket.session.snapshot import SessionSnapshot


class LogTail:
    """The last lines of a session's current (else latest) run log, cached by file state."""

    def __init__(self) -> None:
        self._cache: tuple[Any, list[str]] = (None, [])

    def read(self, snap: SessionSnapshot, memo: Callable[..., Any], lines: int = 40) -> list[str]:
        """The tail of ``snap``'s current run's log, else of the last run that has one."""
        path = Path(snap.current["log_path"]) if snap.current and snap.current.get("log_path") else None
        if path is None:
            path = memo("log_path", lambda: next(
                (p for r in reversed(snap.runs) if r.get("run_dir")
                 and (p := Path(r["run_dir"]) / "logs" / "stdout.log").is_file()), None), structural=True,
                fresh=False)
        if path is None:
            return []
        try:
            stat = path.stat()
        except OSError:
            return []
        key = (str(path), stat.st_size, stat.st_mtime_ns, lines)
        if self._cache[0] != key:
            self._cache = (key, read_log_tail(path, lines))
        return list(self._cache[1])
