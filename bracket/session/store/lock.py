"""An exclusive lock on a session folder, so two Bracket processes never run one search.

The lock is an OS file lock (``fcntl.flock`` on POSIX, ``msvcrt.locking`` on Windows) on
``<session>/.lock``: the operating system releases it when the process dies, so a crashed
process never leaves a stale lock behind. Workers that share a search through PostgreSQL
each hold their own folder, and cooperate through the store instead.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TextIO

from bracket.errors import SessionBusyError

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    # the module is absent on Windows: None marks that msvcrt locks instead (the stub has no Optional module)
    fcntl = None  # type: ignore[assignment]
    import msvcrt


class SessionLock:
    """Hold ``<folder>/<name>`` (``.lock``) exclusively for as long as this object is acquired."""

    def __init__(self, folder: Path, name: str = ".lock") -> None:
        self.path = Path(folder) / name
        self._handle: TextIO | None = None

    def acquire(self) -> None:
        handle = open(self.path, "a+")  # noqa: SIM115 - kept open while the lock is held
        try:
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:  # pragma: no cover
                msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip()
            handle.close()
            raise SessionBusyError(
                f"Session {self.path.parent} is already being run by another Bracket process"
                f"{f' (pid {holder})' if holder else ''}. Stop that one first, or open the session read-only "
                "with `python -m bracket status`."
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._handle = handle

    def release(self) -> None:
        if self._handle is not None:
            try:
                if fcntl is not None:
                    fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            finally:
                self._handle.close()
                self._handle = None

    @property
    def held(self) -> bool:
        return self._handle is not None

    def __enter__(self) -> "SessionLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
