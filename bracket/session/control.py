"""Stop and pause of one worker of a search, shared by its loop, its runs and its callers.

A :class:`RunControl` answers the questions every long step asks between its pieces: *should
I stop?* (here, or because another process asked through the store) and *should I wait?*
(a pause takes effect between runs, never inside one). ``stop`` and ``pause`` are called from
other threads (the app's handlers, a signal handler); the loop, the run pipeline and the
confirmation round only read.

A stop has a mode: ``"now"`` kills the current run (its slot runs again on resume),
``"after-trial"`` lets it finish. A stop asked ``everywhere`` is written to the store, so
every worker of a shared search stops too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from bracket.session.store import Store


class RunControl:
    """The stop and pause state of one session's worker; thread-safe."""

    def __init__(self, store: Store, session_name: str) -> None:
        self.store = store
        self.session_name = session_name
        self._mode = ""
        self._stop = threading.Event()
        self._resumed = threading.Event()
        self._resumed.set()
        self._paused_at: float | None = None
        #: seconds spent paused since the search (re)started
        self.paused_s = 0.0

    # -- stopping --------------------------------------------------------------------
    def reset(self) -> None:
        """A fresh start: no stop asked here (a stop recorded in the store still counts)."""
        self._stop.clear()
        self._mode = ""

    def clear(self) -> None:
        """Let a new section (finals, promotion) run after an earlier stop ended the last one."""
        self._stop.clear()

    def request_stop(self, *, now: bool, everywhere: bool) -> None:
        """Ask the loop to stop (``now``: the current run too); ``everywhere`` tells every worker."""
        self._mode = "now" if now else "after-trial"
        self._stop.set()
        self._resumed.set()
        if everywhere:
            self.store.update_session(self.session_name, stop_requested=self._mode)

    def halt(self) -> None:
        """End this worker's loop without recording a request (the loop is over)."""
        self._stop.set()

    @property
    def halted(self) -> bool:
        """A stop was asked in this process (or the loop ended); the store is not read."""
        return self._stop.is_set()

    def stop_requested(self) -> bool:
        """A stop was asked here or, through the store, by any process of the search."""
        if self._stop.is_set():
            return True
        row = self.store.get_session(self.session_name)
        return bool(row and row["stop_requested"])

    def stop_mode(self) -> str:
        """"" while the search goes on, else "now" (kill the current run) or "after-trial"."""
        if self._mode:
            return self._mode
        row = self.store.get_session(self.session_name)
        return str(row["stop_requested"] or "") if row else ""

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``, waking at once on a stop asked here; True when stopped."""
        return self._stop.wait(seconds)

    # -- pausing ---------------------------------------------------------------------
    def pause(self) -> None:
        """Let the current run finish, then wait before the next one."""
        if self._resumed.is_set():
            self._paused_at = time.time()
        self._resumed.clear()
        self.store.update_session(self.session_name, status="paused")

    def unpause(self) -> None:
        if not self._resumed.is_set() and self._paused_at is not None:
            self.paused_s += time.time() - self._paused_at
        self._paused_at = None
        self._resumed.set()
        self.store.update_session(self.session_name, status="running")

    @property
    def pausing(self) -> bool:
        """Between ``pause`` and ``unpause``."""
        return not self._resumed.is_set()

    def wait_while_paused(self, on_pause: Callable[[], None] | None = None) -> None:
        """Return once not paused (at once when not paused, or when a stop is asked);
        ``on_pause`` is called first when the pause takes effect now (``Session.changed``)."""
        if on_pause is not None and not self._resumed.is_set():
            on_pause()
        self._resumed.wait()

    def restart_clock(self) -> None:
        """A new search starts: no pause so far."""
        self._paused_at, self.paused_s = None, 0.0

    def active_seconds(self, started_at: float | None) -> float | None:
        """Seconds since ``started_at``, time spent paused left out (None before a start)."""
        if not started_at:
            return None
        now = self._paused_at or time.time()
        return max(0.0, now - started_at - self.paused_s)
