"""The app's one-search-at-a-time holder of the current session (Gradio-free).

A Gradio app serves every browser tab from one process, so the session must live at module
level, not in per-tab state: :class:`SessionManager` is that object. It

* lists the past sessions in the runs folder (:mod:`bracket.app.catalog`);
* starts a new search, opens a past one to look at, resumes it, stops and pauses it —
  refusing a second search while one runs;
* hands out snapshots rebuilt only when the store changed, and derived views computed once
  per change (:mod:`bracket.app.snapshot_cache`), so many polling tabs cost one read;
* builds the Compare grid (:mod:`bracket.app.grid`) and hands out loss curves (:mod:`bracket.app.loss_series`);
* picks what to score next: unrated runs and blind pairs where a rating could change the
  answer most (:mod:`bracket.app.rating_queue`, :mod:`bracket.judge.informative`);
* records ratings and pairwise choices, keeping ``status``'s view current (:mod:`bracket.status_refresh`);
* gathers the Results tab's data: the standings (:mod:`bracket.standings`) and :mod:`bracket.app.results`.

Every error a person can cause is a ``BracketError`` whose message says what to do.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import Any

from bracket import settings as app_settings
from bracket.app import results, stages
from bracket.app.catalog import SessionInfo, list_sessions, session_folder
from bracket.app.estimate import Estimate, wall_time_estimate
from bracket.app.forms import check_configured
from bracket.app.grid import GridData, build_grid
from bracket.app.jobs import Job
from bracket.app.log_view import LogTail
from bracket.app.loss_series import LossSeries
from bracket.app.programs import check_session_programs
from bracket.app.rating_queue import rate_next, run_labels
from bracket.app.snapshot_cache import SnapshotCache
from bracket.app.thumbs import ThumbnailCache
from bracket.errors import BracketError
from bracket.session.config import SearchSettings
from bracket.session.session import Session
from bracket.session.snapshot import SessionSnapshot
from bracket.standings import STAGES, StageBoard, Standings, importance, past_ranking, standings
from bracket.standings.study_sync import background_verdict, record_at_end
from bracket.status_refresh import ViewRefresher

SCORABLE = ("done", "paused")  # rated and compared: finished runs, and runs paused at a rung


class NoSessionError(BracketError):
    """An action that needs a session when none is open."""


class SessionManager:
    """Holds the current session of an app; safe to call from many handler threads."""

    def __init__(self, runs_dir: Path | None = None, *, storage_url: str | None = None,
                 snapshot_ttl: float = 0.5, allow_custom_executables: bool = False) -> None:
        self.allow_custom_executables = allow_custom_executables  # else configured programs only
        self.runs_dir = app_settings.absolute_path(runs_dir) if runs_dir else app_settings.get_settings().runs_dir
        self.storage_url = storage_url
        self.snapshot_ttl = snapshot_ttl
        self._lock = threading.RLock()
        self._session: Session | None = None
        self._thumbs: ThumbnailCache | None = None
        self._cache: SnapshotCache | None = None
        self._loss = LossSeries()
        self._log = LogTail()
        #: finals or promote running (or last run) in the background (``bracket.app.jobs``)
        self.job: Job | None = None
        self._verdict_thread: threading.Thread | None = None
        #: keeps ``status``'s view (kept in the store) current after this process changed the store
        self.status_view = ViewRefresher(background=True)

    # -- the current session ----------------------------------------------------------
    @property
    def session(self) -> Session | None:
        return self._session

    def require(self) -> Session:
        session = self._session
        if session is None:
            raise NoSessionError("No search is open: start one in the Setup tab or open a past session there.")
        return session

    @property
    def running(self) -> bool:
        """A search, finals or promote is training in this process."""
        return bool(self._session and self._session.running) or bool(self.job and self.job.running)

    def _adopt(self, session: Session) -> Session:
        old = self._session
        self._session, self._loss = session, LossSeries()
        self._cache = SnapshotCache(session, self.snapshot_ttl)
        self._thumbs = ThumbnailCache(session.folder)
        if self.status_view not in session.on_change:
            session.on_change.append(self.status_view)
        if old is not None and old is not session:
            old.store.close()
        return session

    def _refuse_if_running(self, action: str) -> None:
        if self.job is not None and self.job.running:
            raise BracketError(f"The {self.job.kind} of {self._session.name} are training; wait for them to finish "
                               f"before you {action}.")
        if self.running:
            raise BracketError(f"Search {self._session.name} is running; stop it in the Search tab before you "
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
                check_configured(preset_id, fields, settings)
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
            check_session_programs(session, allow=self.allow_custom_executables)
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
            check_session_programs(session, allow=self.allow_custom_executables)
            extend_budget(session, more)
            return self.resume()

    def stop(self, *, now: bool = True) -> None:
        session = self.require()
        workers_alive = any(w.get("alive") for w in session.snapshot().workers)
        if not session.running and not workers_alive:
            raise BracketError("The search is not running; there is nothing to stop.")
        session.stop(now=now)  # recorded in the store: workers on other machines stop too
        self._forget()

    def pause(self) -> None:
        session = self.require()
        if not session.running:
            raise BracketError("The search is not running; there is nothing to pause.")
        session.pause()
        self._forget()

    def unpause(self) -> None:
        self.require().unpause()
        self._forget()

    def _forget(self, *, changed: bool = False) -> None:
        """Drop what was derived from the store; ``changed``: this process changed it (``Session.changed``)."""
        if self._cache is not None:
            self._cache.invalidate()
        if changed and self._session is not None:
            self._session.changed()

    # -- reading -------------------------------------------------------------------------
    def snapshot(self) -> SessionSnapshot | None:
        """The current session's snapshot, rebuilt only when the store or the run here changed
        (:mod:`bracket.app.snapshot_cache`; tabs polling in the same tick share one read)."""
        cache = self._cache
        return None if cache is None else cache.snapshot()

    @property
    def version(self) -> int:
        """Goes up whenever the snapshot changed; the same number means the same picture."""
        cache = self._cache
        return -1 if cache is None else cache.version

    def memo(self, key: Any, build: Any, *, structural: bool = False, fresh: bool = True) -> Any:
        """``build()`` once per snapshot version: what every open tab shows the same (a
        rendered table, a chart) is computed once per change, not once per tab; with
        ``structural``, only when more than the progress of running runs changed; with
        ``fresh=False``, of the snapshot just looked at (no second store read in one poll)."""
        cache = self._cache
        return build() if cache is None else cache.memo(key, build, structural=structural, fresh=fresh)

    def log_tail(self, lines: int = 40, snap: SessionSnapshot | None = None) -> list[str]:
        """The tail of the current run's log, else of the last run that has one (read again
        only when the file grew; ``bracket.app.log_view``); ``snap``: the snapshot the caller just
        got (else one is taken)."""
        snap = snap if snap is not None else self.snapshot()
        return [] if snap is None else self._log.read(snap, self.memo, lines)

    def loss_series(self, run_ids: list[int] | None = None,
                    snap: SessionSnapshot | None = None, kind: str = "loss") -> dict[int, list[tuple[int, float]]]:
        """Loss series of finished runs (read once, then cached) and of the run in progress
        (``snap``: the snapshot the caller just got; else one is taken): ``bracket.app.loss_series``."""
        session = self.require()
        snap = snap if snap is not None else self.snapshot()
        return self._loss.read(session.store, snap, run_ids, kind)  # kind "eval_loss": validation

    def estimate_seconds(self, total_runs: int, preset_id: str | None = None, steps: int | None = None,
                         fields: dict[str, str] | None = None) -> Estimate | None:
        """``total_runs`` × the median finished run like these (``bracket.app.estimate``: same preset,
        steps, resolution; this and earlier sessions); by default the open session's setup."""
        session = self._session
        if (preset_id is None or steps is None) and session is not None:
            preset_id, steps, fields = session.parts.preset.id, session.settings.steps, dict(session.parts.fields)
        return None if preset_id is None or steps is None else wall_time_estimate(
            self.runs_dir, preset_id, int(steps), fields, total_runs, current=session, storage_url=self.storage_url)

    # -- compare and score ---------------------------------------------------------------
    def compare_grid(self, run_ids: list[int], step: int | None = None, *, blind: bool = False) -> GridData:
        """Rows = prompts, columns = ``run_ids`` (in order), cells = samples at ``step``.

        ``blind`` serves every file under a neutral name (the pairwise panel)."""
        session, snap = self.require(), self.snapshot()
        by_id = {r["id"]: r for r in snap.runs}
        unknown = [i for i in run_ids if i not in by_id]
        if unknown:
            raise BracketError(f"Run(s) {unknown} are not part of session {session.name}; pick runs from the list.")
        control = session.parts.fields.get("sample_control_image", "")
        return build_grid([by_id[i] for i in run_ids], session.settings.prompts(), thumbs=self._thumbs,
                          runs_dir=self.runs_dir, step=step, sample_kind=snap.sample_kind, control_image=control,
                          blind=blind)

    def scorable_runs(self) -> list[dict[str, Any]]:
        snap = self.snapshot()
        return [] if snap is None else [r for r in snap.runs if r["status"] in SCORABLE and r["kind"] != "setup"]

    def next_unrated(self, k: int = 4) -> list[int]:
        """Up to ``k`` finished runs nobody rated yet, where a rating could change the answer most."""
        return self.rate_next(k)[0]

    def rate_next(self, k: int = 4) -> tuple[list[int], str]:
        """(runs to rate next, the one-line why): ``rating_queue.rate_next``."""
        self.require()  # "No search is open" before anything else
        return rate_next(self.standings(), {r["id"] for r in self.scorable_runs()}, k)

    def run_labels(self) -> dict[int, str]:
        """Compare's label per finished run: stage, seed, score with its raw figures, rated or not."""
        return self.memo("labels", lambda: run_labels(self.standings(), {r["id"] for r in self.scorable_runs()}),
                         structural=True)

    def next_pairs(self, k: int = 1) -> list[tuple[int, int]]:
        """Pairs for a blind comparison whose order is least certain among the contenders
        (``bracket.judge.informative.informative_pairs``)."""
        from bracket.judge.informative import candidates_from_standings, informative_pairs

        session, scorable = self.require(), [r["id"] for r in self.scorable_runs()]
        return informative_pairs(candidates_from_standings(self.standings(), scorable),
                                 session.store.comparisons(session.name), k)

    def rate(self, run_id: int, value: float, prompt_index: int | None = None, step: int | None = None) -> str:
        """Record a rating (``step``: the step whose samples were shown, for the best step);
        returns what it changed (``bracket.app.rating_effect``)."""
        from bracket.app.rating_effect import rate_and_explain

        message = rate_and_explain(self.require(), int(run_id), value, prompt_index, step)
        self._forget(changed=True)
        return message

    def compare(self, left_run_id: int, right_run_id: int, winner: str) -> None:
        self.require().add_comparison(int(left_run_id), int(right_run_id), winner)
        self._forget(changed=True)

    def undo_comparison(self) -> dict[str, Any] | None:
        """Take back the last pairwise choice of the open session (None when there is none)."""
        undone = self.require().undo_last_comparison()
        self._forget(changed=True)
        return undone

    def ratings(self) -> list[dict[str, Any]]:
        session = self.require()
        return session.store.ratings(session.name)

    def comparisons(self) -> list[dict[str, Any]]:
        session = self.require()
        return session.store.comparisons(session.name)

    # -- results ------------------------------------------------------------------------
    def standings(self) -> Standings | None:
        """The open session's standings (``bracket.standings``), computed once per store change."""
        session = self._session
        return None if session is None else self.memo("standings", lambda: standings(session), structural=True)

    def leaderboard(self) -> tuple[list[StageBoard], str]:
        """(every stage's board, finals first; the verdict with its warnings)."""
        table = self.standings()
        if table is None:
            return [], "No search is open."
        boards = [table.boards[s] for s in STAGES if s in table.boards]
        text = table.verdict + "".join(f"\n\n**Warning: {w}.**" for w in table.warnings)
        return boards, text

    def winner_export(self) -> results.WinnerExport | None:
        table = self.standings()
        return None if table is None else self.memo("winner", lambda: results.winner_command(
            self.require(), table.winner), structural=True)

    def param_importance(self) -> tuple[dict[str, float], str]:
        session = self.require()
        return self.memo("importance", lambda: importance(session, self.standings()), structural=True)

    def score_history(self) -> list[dict[str, Any]]:
        table = self.standings()
        return [] if table is None else self.memo("history", lambda: results.score_history(table), structural=True)

    def report_markdown(self, image_url: Any = None) -> str:
        """The report (written under the session folder); when no search runs here, the stored
        study's verdict view is brought up to date too (``bracket.standings.study_sync``)."""
        from bracket.report import report_markdown

        session = self.require()
        def build() -> str:  # once per change (the same image-URL scheme every time in an app)
            text = report_markdown(session, image_url)
            if not self.running:  # in the background: the Results tab does not wait for it (issue 24)
                self._verdict_thread = background_verdict(session, self.standings(), self._verdict_thread)
            return text

        return self.memo("report", build, structural=True)

    def wait_for_background(self, timeout: float | None = None) -> None:
        """Wait until the verdict study written in the background (:meth:`report_markdown`) and
        the status view (:attr:`status_view`) are done."""
        self.status_view.wait(timeout)
        thread = self._verdict_thread
        if thread is not None:
            thread.join(timeout)

    # -- from winner to training ---------------------------------------------------------
    def start_job(self, kind: str, *, steps: int | None = None, top_k: int = 3, seeds: int = 2) -> Job:
        """Start ``finals`` (top ``top_k`` configs × ``seeds`` seeds) or ``promote`` (the winner)
        at ``steps`` in the background; refused while anything trains."""
        session = self.require()
        with self._lock:
            self._refuse_if_running(f"start {kind}")
            check_session_programs(session, allow=self.allow_custom_executables)
            if kind == "finals":
                # a request that cannot be right is an input error, not a failed job
                stages.check_finals(session, top_k=top_k, steps=steps, seeds=seeds)
                action = functools.partial(stages.run_finals, session, top_k=top_k, steps=steps, seeds=seeds)
            elif kind == "promote":
                action = functools.partial(stages.promote, session, steps=steps)
            else:
                raise BracketError(f"Unknown action {kind!r}: finals or promote.")
            self.job = Job(kind, action)
            self._forget()
            return self.job

    def export_winner(self, steps: int | None = None) -> Any:
        """Write the winner's ``train.sh``/``train.ps1``/config under the session folder
        (``bracket.export.export_run``); returns its ``ExportResult``."""
        from bracket.export import export_run

        return export_run(self.require(), steps=steps)

    def dashboard_command(self) -> str:
        return results.dashboard_command(self.require())

    def close(self) -> None:
        self.wait_for_background(60)  # the verdict study's write uses the store closed below
        with self._lock:
            if self._session is not None:
                self._session.close()
                self._session = None
