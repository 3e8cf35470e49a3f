"""The Search tab's log panel: the tail of the current run's log, read only when it grew.

Many tabs poll the log every second; :class:`LogTail` reads the file again only when its
size or modification time changed, and finds the last run with a log (when none is
running) once per change of the session (the manager's ``memo``, of the snapshot just taken).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bracket.session import SessionSnapshot
from bracket.session.process import read_log_tail

#: how ``accelerate launch`` opens every run's log when not configured: six lines that say
#: nothing about the run (its defaults: one process, one machine, no mixed precision, no dynamo)
_LAUNCH_NOISE_HEAD = "The following values were not passed to `accelerate launch`"
_LAUNCH_NOISE_TAIL = "To avoid this warning pass in values for each of the problematic parameters"


def without_launch_noise(lines: list[str]) -> list[str]:
    """``lines`` without accelerate's block of launch defaults (its head, the indented
    "`--x` was set to a value of" lines, and its tail), which opens every trainer log."""
    kept, inside = [], False
    for line in lines:
        if _LAUNCH_NOISE_HEAD in line:
            inside = True
            continue
        if inside and ("was set to a value of" in line or _LAUNCH_NOISE_TAIL in line):
            inside = _LAUNCH_NOISE_TAIL not in line
            continue
        inside = False
        kept.append(line)
    return kept


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
            # read a few more than asked: what accelerate's defaults block takes is made up from before it
            self._cache = (key, without_launch_noise(read_log_tail(path, lines + 8))[-lines:] if lines else [])
        return list(self._cache[1])
