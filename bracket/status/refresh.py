"""Keeping ``status``'s view current from the process that changed the store.

``python -m bracket status`` answers from the view kept in the store (``bracket_views``) while
the store has not changed since it was written (:mod:`bracket.status.view`); building it for a
large session is costly, paid by the first ``status`` after every change. The process
that changes the store already holds the session and its scores, so it writes the view
instead, right after the change, and ``status`` finds it current — in every session folder of
the store, so a worker on one machine keeps it current for ``status`` asked on another:

* a search (the CLI's ``run``, ``resume``, ``worker``, ``finals``, ``train-winner``; the app's
  searches and jobs) right after each run's trainer started — the run before it finished and
  was scored, and the store stays as it is until this one ends — when a pause takes effect or
  the worker goes to wait for other workers (the run it finished last), when a VLM or LLM
  judge's scores of a run land (in the judge's thread), and once when it ends;
* the app after a rating or a pairwise choice (``bracket.app.manager``), in a thread of its
  own so the click does not wait.

:class:`ViewRefresher` is the ``Session.on_change`` callback that does it (the session layer
knows nothing of the standings: the layers above hand it in); :func:`build_view` is what the
view holds, the one computation ``status`` itself uses when the view is missing or stale.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import TYPE_CHECKING, Any

from bracket.errors import disk_full_error
from bracket.session.store import per_change, stored_rows
from bracket.standings import standings
from bracket.status.text import answer_lines
from bracket.status.view import standings_view

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session import Session

log = logging.getLogger(__name__)


def build_view(session: "Session") -> dict[str, Any]:
    """What ``status`` shows from the standings and the session's definition (see the module's
    docstring), computed now: kept until the store changes. One build per change in a process,
    its snapshot, standings and rows keyed on one read of the change marker."""
    return per_change(session, "status-view", lambda: _build_view(session))


def _build_view(session: "Session") -> dict[str, Any]:
    snapshot, table = session.snapshot(), standings(session)
    answer = table.to_dict()
    config: dict[str, Any] = next((c for c in stored_rows(session)[1]  # the rows the standings were built from
                   if answer["winner"] and c["id"] == answer["winner"]["config_id"]), {})
    return {"runs_spent": snapshot.runs_spent, "total_runs": snapshot.total_runs, "spent": snapshot.spent_label,
            "full_runs_spent": snapshot.full_runs_spent, "budget": snapshot.budget,
            "table_json": json.dumps(answer, default=str, check_circular=False),  # by --json only: the longest part
            "preset_id": session.parts.preset.id, "plan": session.plan_text(),
            "fixed_knobs": {name: session.space[name].value for name in session.space
                            if name not in session.space.searched()},
            "winner_all_params": session.space.complete(config.get("params") or answer["winner"]["params"])
            if answer["winner"] else None,
            "lines": answer_lines(session, snapshot, table)}



class ViewRefresher:
    """A ``Session.on_change`` callback: brings the status view kept in the store up to date.

    Called by the process that changed the store (see ``bracket.status.view``). Nothing is
    built when the kept view is current already (another worker wrote it: the last writer
    wins, the row replaced whole, and the key makes a stale one harmless). ``background``:
    build in a thread of its own, so the caller (an app handler after a rating) does not
    wait; calls while one builds are folded into one more build after it. Builds of one
    refresher run one at a time (a search's thread and a judge's may call it together: the
    second then finds the view current). A failure is logged once per refresher and
    otherwise ignored — never the caller's problem.
    """

    def __init__(self, *, background: bool = False) -> None:
        self.background = background
        self.failed = False
        self._lock = threading.Lock()
        self._building = threading.Lock()
        self._thread: threading.Thread | None = None
        self._again: "Session | None" = None

    def __call__(self, session: "Session") -> None:
        if not self.background:
            self._refresh(session)
            return
        with self._lock:
            if self._thread is not None:
                self._again = session  # the thread builds once more when it is done
                return
            self._thread = threading.Thread(target=self._loop, args=(session,), name="bracket-status-view",
                                            daemon=True)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> None:
        """Wait for a refresh building in the background (tests, closing the app)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _loop(self, session: "Session") -> None:
        while True:
            self._refresh(session)
            with self._lock:
                session, self._again = self._again, None
                if session is None:
                    self._thread = None
                    return

    def _refresh(self, session: "Session") -> None:
        try:
            if not session.store.read_only:
                with self._building:
                    standings_view(session, lambda: build_view(session), quiet=False)
        except Exception as exc:  # noqa: BLE001 - the view is a cache: status rebuilds it when stale
            if disk_full_error(exc) is not None:  # the search's own error line says the disk is full
                log.debug("status view not kept: the disk is full", exc_info=True)
            elif not self.failed:  # one line, no traceback: the view is a cache, not the search
                self.failed = True
                log.warning("could not keep the status view of %s current (%s: %s); status computes it "
                            "when asked", session.name, type(exc).__name__, exc)
                log.debug("status view refresh failed", exc_info=True)
