"""Finals and promote in the background, for the app (the CLI runs them in its own thread).

After a search, the Results tab trains the top configs longer (``bracket.app.stages.run_finals``)
or the winner for real (``bracket.app.stages.train_winner``). Both train, so they take minutes and
hold the session (its ``exclusive()`` section) like a search; :class:`Job` runs one in a
daemon thread and says how it is going — the run in progress comes from the session's
snapshot like any other run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from bracket.errors import BracketError


class Job:
    """One background action on a session: ``finals`` or ``train-winner``."""

    def __init__(self, kind: str, action: Callable[[], Any]) -> None:
        self.kind = kind
        self.started_at = time.time()
        self.result: Any = None
        self.error = ""
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(action,), name=f"bracket-{kind}", daemon=True)
        self._thread.start()

    def _run(self, action: Callable[[], Any]) -> None:
        try:
            self.result = action()
        except BracketError as error:
            self.error = str(error)
        except Exception as error:  # noqa: BLE001 - shown to the person; the session stays usable
            self.error = f"{type(error).__name__}: {error}"
        finally:
            self._done.set()

    @property
    def running(self) -> bool:
        return not self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def status(self) -> str:
        """``finals: running``, ``finals: done``, or ``finals: failed — why``."""
        if self.running:
            return f"{self.kind}: running"
        return f"{self.kind}: failed — {self.error}" if self.error else f"{self.kind}: done"
