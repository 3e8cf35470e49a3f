"""The app's one-search-at-a-time holder of the current session (Gradio-free).

A Gradio app serves every browser tab from one process, so the session must live at module
level, not in per-tab state: :class:`SessionManager` is that object. It holds the session's
lifecycle and the one cached reading of it every view goes through:

* lists the past sessions in the runs folder (:mod:`bracket.app.catalog`);
* starts a new search, opens a past one to look at, resumes it, gives it more runs, stops and
  pauses it, starts finals and promote — refusing a second search while one runs;
* hands out snapshots rebuilt only when the store changed, and what is derived from them
  computed once per change (:meth:`SessionManager.memo`, :mod:`bracket.app.snapshot_cache`),
  the standings among them.

What each tab reads is a collaborator that reads through those:

* ``manager.reading`` (:mod:`bracket.app.reading`) — log tail, loss curves, wall-time estimate,
  the "why" of each config, the Setup form's values;
* ``manager.compare`` (:mod:`bracket.app.compare`) — the Compare grid, what to rate next,
  ratings and pairwise choices;
* ``manager.results`` (:mod:`bracket.app.results`) — boards, winner, importance, history,
  space table, config plots, report, export.

Every error a person can cause is a ``BracketError`` whose message says what to do.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bracket import settings as app_settings
from bracket.app import stages
from bracket.app.catalog import SessionInfo, list_sessions, session_folder
from bracket.app.compare import Compare
from bracket.app.jobs import Job
from bracket.app.programs import check_launch, check_session_launch
from bracket.app.reading import Reading
from bracket.app.results import Results
from bracket.app.snapshot_cache import SnapshotCache
from bracket.app.thumbs import ThumbnailCache
from bracket.errors import BracketError
from bracket.registry import get_preset
from bracket.session import SearchSettings, Session, SessionSnapshot
from bracket.session.store.change_memo import drop as memo_drop
from bracket.session.store.change_memo import part as memo_part
from bracket.standings import Standings, standings
from bracket.standings.study_sync import record_at_end
from bracket.status import ViewRefresher
from bracket.status.ranking import past_ranking

#: what an action that needs an open session says without one
NO_SESSION = "No search is open: start one in the Setup tab or open a past session there."


class NoSessionError(BracketError):
    """An action that needs a session when none is open."""


class SessionManager:
    """Holds the current session of an app; safe to call from many handler threads."""

    def __init__(self, runs_dir: Path | None = None, *, storage_url: str | None = None,
                 snapshot_ttl: float = 0.5, allow_custom_executables: bool = False) -> None:
        self.allow_custom_executables = allow_custom_executables  # else configured programs only
        self.runs_dir = app_settings.absolute_path(runs_dir) if runs_dir else app_settings.get_settings().runs_dir
        self.storage_url = storage_url
        self._session: Session | None = None
        self.snapshot_ttl = snapshot_ttl
        self._lock = threading.RLock()
        #: finals or promote running (or last run) in the background (``bracket.app.jobs``)
        self.job: Job | None = None
        self.reading = Reading(self)
        self.compare = Compare(self)
        self.results = Results(self)
        #: keeps ``status``'s view (kept in the store) current after this process changed the store
        self.status_view = ViewRefresher(background=True)

    # -- the current session ----------------------------------------------------------
    @property
    def session(self) -> Session | None:
        return self._session

    @property
    def _cache(self) -> SnapshotCache | None:
        """The open session's snapshot cache: a part of the process's one cache owner (``change_memo``)."""
        session = self._session
        if session is None:
            return None
        return memo_part(session, "snapshot", lambda: SnapshotCache(session, self._snapshot_ttl))

    def require(self) -> Session:
        session = self._session
        if session is None:
            raise NoSessionError(NO_SESSION)
        return session

    @property
    def running(self) -> bool:
        """A search, finals or promote is training in this process."""
        return bool(self._session and self._session.running) or bool(self.job and self.job.running)

    def _adopt(self, session: Session) -> Session:
        old = self._session
        self._session = session
        cache = self._cache
        if cache is not None:  # the same session adopted again starts afresh, as a new one does
            cache.invalidate()
        if self.status_view not in session.on_change:
            session.on_change.append(self.status_view)
        if old is not None and old is not session:
            old.store.close()
            memo_drop(old)
        return session

    def _refuse_if_running(self, action: str) -> None:
        if self.job is not None and self.job.running:
            raise BracketError(f"The {self.job.kind} of {self.require().name} are training; wait for them to finish "
                               f"before you {action}.")
        if self.running:
            raise BracketError(f"Search {self.require().name} is running; stop it in the Search tab before you "
                               f"{action}. One search runs at a time.")

    # -- listing, starting, resuming -------------------------------------------------
    def list_sessions(self) -> list[SessionInfo]:
        """Sessions in the runs folder, newest first (unreadable ones say why in their status)."""
        return list_sessions(self.runs_dir, storage_url=self.storage_url, current=self._session,
                             current_snapshot=self.snapshot)

    def start_new(self, preset_id: str, fields: dict[str, str], settings: SearchSettings,
                  name: str | None = None) -> Session:
        """Validate, create and start a new search (nothing is created when a check fails)."""
        with self._lock:
            self._refuse_if_running("start another")
            if not self.allow_custom_executables:  # the web form: only the configured programs and judge
                check_launch(get_preset(preset_id).fields, fields, settings.vlm)
            session = Session.create(preset_id, fields, settings, out_dir=self.runs_dir, name=name or None,
                                     storage_url=self.storage_url, on_finish=[record_at_end],
                                     rank_past=past_ranking)
            self._adopt(session)
            session.start()
            return session

    def open(self, folder: Path | str) -> Session:
        """Open a past session to look at it (Compare, Results) without running it."""
        with self._lock:
            folder = session_folder(self.runs_dir, folder)
            current = self._session
            if current is not None and current.folder.resolve() == folder.resolve():
                return current
            self._refuse_if_running("open another session")
            return self._adopt(Session.open(folder, storage_url=self.storage_url, validate=False,
                                            rank_past=past_ranking))

    def resume(self, folder: Path | str | None = None) -> Session:
        """Resume ``folder`` (or the open session) where it stopped."""
        with self._lock:
            if folder is None:
                session = self.require()
            else:
                session = self.open(folder)
            if session.running:
                raise BracketError(f"Search {session.name} is already running.")
            self._refuse_if_running("resume the search")
            check_session_launch(session, allow=self.allow_custom_executables)
            fresh = Session.open(session.folder, storage_url=self.storage_url, validate=True,
                                 on_finish=[record_at_end], rank_past=past_ranking)
            if fresh.store.read_only:
                fresh.store.close()
                fresh.store.require_writable()  # raises: a read-only folder or a full disk
            self._adopt(fresh)
            fresh.start()
            return fresh

    def extend(self, more: int) -> Session:
        """``+N runs``: give the open (stopped or finished) search ``more`` runs and resume it
        (``bracket.app.extend``)."""
        from bracket.app.extend import extend_budget

        with self._lock:
            session = self.require()
            self._refuse_if_running("add runs")
            check_session_launch(session, allow=self.allow_custom_executables)
            extend_budget(session, more)
            return self.resume()

    def stop(self, *, now: bool = True) -> None:
        session = self.require()
        workers_alive = any(w.get("alive") for w in session.snapshot().workers)
        if not session.running and not workers_alive:
            raise BracketError("The search is not running; there is nothing to stop.")
        session.stop(now=now)  # recorded in the store: workers on other machines stop too
        self.forget()

    def pause(self) -> None:
        session = self.require()
        if not session.running:
            raise BracketError("The search is not running; there is nothing to pause.")
        session.pause()
        self.forget()

    def unpause(self) -> None:
        self.require().unpause()
        self.forget()

    # -- the core every view reads through ------------------------------------------
    def snapshot(self) -> SessionSnapshot | None:
        """The current session's snapshot, rebuilt only when the store or the run here changed
        (:mod:`bracket.app.snapshot_cache`; tabs polling in the same tick share one read)."""
        cache = self._cache
        return None if cache is None else cache.snapshot()

    def require_snapshot(self) -> SessionSnapshot:
        """The open session's :meth:`snapshot`; :class:`NoSessionError` when none is open."""
        self.require()
        snap = self.snapshot()
        if snap is None:
            raise NoSessionError(NO_SESSION)
        return snap

    @property
    def version(self) -> int:
        """Goes up whenever the snapshot changed; the same number means the same picture."""
        cache = self._cache
        return -1 if cache is None else cache.version

    @property
    def snapshot_ttl(self) -> float:
        """Seconds a snapshot is served without looking at the store (the open session's too)."""
        return self._snapshot_ttl

    @snapshot_ttl.setter
    def snapshot_ttl(self, seconds: float) -> None:
        self._snapshot_ttl = seconds
        cache = self._cache
        if cache is not None:
            cache.ttl = seconds

    def memo(self, key: Any, build: Any, *, structural: bool = False, fresh: bool = True) -> Any:
        """``build()`` once per snapshot version: what every open tab shows the same (a
        rendered table, a chart) is computed once per change, not once per tab; with
        ``structural``, only when more than the progress of running runs changed; with
        ``fresh=False``, of the snapshot just looked at (no second store read in one poll)."""
        cache = self._cache
        return build() if cache is None else cache.memo(key, build, structural=structural, fresh=fresh)

    def standings(self) -> Standings | None:
        """The open session's standings (``bracket.standings``), computed once per store change."""
        session = self._session
        return None if session is None else self.memo("standings", lambda: standings(session), structural=True)

    @property
    def thumbs(self) -> ThumbnailCache:
        """The open session's thumbnail cache (the Compare grid's pictures); :class:`NoSessionError`
        when none is open."""
        session = self.require()
        return memo_part(session, "thumbnails", lambda: ThumbnailCache(session.folder))

    def forget(self, *, changed: bool = False) -> None:
        """Drop what was derived from the store; ``changed``: this process changed it (``Session.changed``)."""
        cache = self._cache
        if cache is not None:
            cache.invalidate()
        if changed and self._session is not None:
            self._session.changed()

    # -- from winner to training ---------------------------------------------------------
    def start_job(self, kind: str, *, steps: int | None = None, top_k: int = 3, seeds: int = 2) -> Job:
        """Start ``finals`` (top ``top_k`` configs × ``seeds`` seeds) or ``promote`` (the winner)
        at ``steps`` in the background; refused while anything trains."""
        session = self.require()
        with self._lock:
            self._refuse_if_running(f"start {kind}")
            check_session_launch(session, allow=self.allow_custom_executables)
            action: Callable[[], Any]
            if kind == "finals":
                # a request that cannot be right is an input error, not a failed job
                stages.check_finals(session, top_k=top_k, steps=steps, seeds=seeds)
                action = functools.partial(stages.run_finals, session, top_k=top_k, steps=steps, seeds=seeds)
            elif kind in ("train-winner", "promote"):  # "promote": the name it had, still taken
                action = functools.partial(stages.train_winner, session, steps=steps)
            else:
                raise BracketError(f"Unknown action {kind!r}: finals or train-winner.")
            self.job = Job(kind, action)
            self.forget()
            return self.job

    def wait_for_background(self, timeout: float | None = None) -> None:
        """Wait until the verdict study written in the background (``results.report_markdown``)
        and the status view (:attr:`status_view`) are done."""
        self.status_view.wait(timeout)
        self.results.wait_for_verdict(timeout)

    def close(self) -> None:
        self.wait_for_background(60)  # the verdict study's write uses the store closed below
        with self._lock:
            if self._session is not None:
                self._session.close()
                memo_drop(self._session)
                self._session = None
