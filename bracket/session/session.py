"""A search session: the loop that trains configurations one run at a time.

A :class:`Session` runs in a background thread (``start``) or in the foreground (``run``):

1. recover what a killed process left behind (runs still marked running are failed as
   *interrupted*, their process trees killed, and their slots run again);
2. run the trainer's one-off setup commands (pre-caching, ``bracket.session.precache``) unless already complete;
3. take configurations from the :class:`SearchController` — baseline, curated, then TPE — and train each
   with ``seeds`` seeds through the run pipeline (:class:`~bracket.session.pipeline.RunPipeline`), reading
   loss as the run goes and stopping it early when it diverges (``bracket.session.loop.search_loop``: one loop; its
   scheduler decides what trains next — every config to full length, or with ``--halving`` paused at rungs);
4. the confirmation round (``bracket.session.loop.confirm``): the top configs again, fresh seeds; 5. stop at the budget.

The session holds control and the search loop; its collaborators never import it: the
:class:`~bracket.session.scoring.scoreboard.Scoreboard` (scores), the run pipeline, the
:class:`~bracket.session.control.RunControl` (stop and pause) and the :class:`~bracket.session.worker.WorkerProtocol`
(heartbeat, recovery, claiming work). Finals and promotion train through the pipeline inside :meth:`Session.exclusive`.

Everything is recorded in the store as it happens (resume anywhere, watch from elsewhere).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from bracket.errors import BracketError, machine_state_message
from bracket.search.types import ScoredConfig
from bracket.session.control import RunControl
from bracket.session.create import SessionParts, create_session, open_session
from bracket.session.distributed import join_session, worker_lock_name
from bracket.session.loop.budget import Budget
from bracket.session.loop.plan import plan_for
from bracket.session.loop.search_loop import SearchLoop, session_scheduler
from bracket.session.loop.search_reading import measured_launch, search_view
from bracket.session.loop.search_view import SearchView
from bracket.session.past import Ranking
from bracket.session.pipeline import RunPipeline
from bracket.session.precache import run_setup_commands
from bracket.session.process import RunExecutor
from bracket.session.recovery import DEFAULT_GRACE_SECONDS, failure_message
from bracket.session.scoring import RunScore, Scoreboard, TextJudges, session_image_scorer
from bracket.session.scoring.vlm import VlmScorer, vlm_config
from bracket.session.search_settings import SearchSettings
from bracket.session.snapshot import SessionSnapshot, build_snapshot
from bracket.session.store import SessionLock, per_change, stored_rows
from bracket.session.worker import HEARTBEAT_SECONDS, WorkerProtocol, log_failure

if TYPE_CHECKING:  # imported where a search starts: opening a session imports no Optuna
    from bracket.search.controller import SearchController
log = logging.getLogger(__name__)
#: how often a worker with nothing to do looks again for orphaned work of other workers
WAIT_SECONDS = 2.0
#: called with the session at a search's end (``study_sync.record_at_end``) or after a change (``status_refresh``)
SessionCallback: TypeAlias = Callable[["Session"], None]


class Session:
    """One search, backed by its store; safe to poll from other threads.

    Callbacks are how the layers above act without the engine importing them (failures are
    logged): ``on_finish`` when a search finishes with no other worker left (the verdict);
    ``on_change`` right after each run's trainer started (the store settled till that run
    ends), when a pause takes effect or the worker waits for others, when a judge's scores
    land, at a search's end, and on :meth:`changed` (the app after a rating).
    """

    def __init__(self, parts: SessionParts, *, worker_id: str | None = None, gpu: str = "",
                 grace_s: float = DEFAULT_GRACE_SECONDS, lock_name: str = ".lock",
                 on_finish: Sequence[SessionCallback] = ()) -> None:
        self.parts = parts
        self.store = parts.store
        self.name, self.folder, self.trainer = parts.name, parts.folder, parts.trainer
        self.settings: SearchSettings = parts.settings
        #: the trainer's facts decided at creation (``loop.trainer_facts.TrainerFacts``), never in the settings
        self.facts = parts.facts
        self.space = parts.space
        self.on_finish = list(on_finish)
        self.on_change: list[SessionCallback] = []
        self.worker = WorkerProtocol(self.store, self.name, worker_id, gpu=gpu, grace_s=grace_s)
        self.control = RunControl(self.store, self.name)
        self.scoreboard = Scoreboard(self.store, self.name, self.settings, self.space,
                                     eval_loss=self.trainer.sample_kind == "text", folder=self.folder)
        self.executor = RunExecutor(self.store, self.name, self.settings, self.trainer,
                                    worker_id=self.worker.worker_id, gpu=self.worker.gpu,
                                    stop_mode=self.control.stop_mode, on_started=self.changed)
        config = vlm_config(self.settings.vlm or {})
        prompts = self.settings.prompts()
        self.vlm = VlmScorer(self.store, self.name, config, prompts, self.changed) if config else None
        #: task metrics and the LLM-as-judge of text samples (the same judge server settings)
        self.text_judges = TextJudges(self.store, self.name, config, on_scored=self.changed)
        self.pipeline = RunPipeline(parts, executor=self.executor, scoreboard=self.scoreboard, control=self.control,
                                    controller=self.controller, worker_id=self.worker.worker_id, vlm=self.vlm,
                                    text_judges=self.text_judges, on_phase=self._set_phase,
                                    image_judges=session_image_scorer(parts, self.changed))
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self._lock = SessionLock(self.folder, lock_name)
        self.phase = "idle"
        self.error = ""
        self.started_at: float | None = None
        self._controller: SearchController | None = None
        #: called before each look for work of the search loop (a benchmark's simulated rater)
        self.before_turn: list[Callable[[], None]] = []

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def create(cls, preset_id: str, fields: dict[str, str], settings: SearchSettings | None = None, *,
               worker_id: str | None = None, on_finish: Sequence[SessionCallback] = (), **kw: Any) -> "Session":
        """Validate everything and create a new session (see ``bracket.session.create``)."""
        return cls(create_session(preset_id, fields, settings or SearchSettings(), **kw), worker_id=worker_id,
                   on_finish=on_finish)

    @classmethod
    def open(cls, folder: Path | str, *, storage_url: str | None = None, validate: bool = True,
             worker_id: str | None = None, on_finish: Sequence[SessionCallback] = (),
             rank_past: Ranking | None = None) -> "Session":
        """Re-open an existing session folder, to resume it or to look at it (``rank_past``: how
        the sessions it warm-started from rank their configs, for its plan; see ``create``)."""
        return cls(open_session(Path(folder), storage_url=storage_url, validate=validate, rank_past=rank_past),
                   worker_id=worker_id, on_finish=on_finish)

    @classmethod
    def join(cls, storage_url: str, session_name: str, runs_dir: Path | str | None = None, *,
             worker_id: str | None = None, gpu: str = "", grace_s: float = DEFAULT_GRACE_SECONDS,
             on_finish: Sequence[SessionCallback] = ()) -> "Session":
        """Join a search shared through PostgreSQL as one more worker (see ``bracket.session.distributed``)."""
        parts = join_session(storage_url, session_name, Path(runs_dir) if runs_dir else None)
        return cls(parts, worker_id=worker_id, gpu=gpu, grace_s=grace_s, lock_name=worker_lock_name(str(gpu or "")),
                   on_finish=on_finish)

    @property
    def worker_id(self) -> str:
        return self.worker.worker_id

    # -- control -----------------------------------------------------------------------------
    def start(self) -> None:
        """Run the search in a background thread; the lock is taken before this returns."""
        if self.running:
            raise BracketError("This search is already running.")
        self._lock.acquire()
        self.control.reset()
        self._done.clear()
        self._thread = threading.Thread(target=self._run_locked, name=f"bracket-{self.name}", daemon=True)
        self._thread.start()

    def run(self) -> str:
        """Run the search in this thread until done or stopped; returns the final status."""
        self._lock.acquire()
        self.control.reset()
        return self._run_locked()

    @contextlib.contextmanager
    def exclusive(self, doing: str = "busy") -> Iterator[RunPipeline]:
        """Hold this session for the ``with`` body (finals, promotion) and yield its run pipeline.

        No other search, finals or promotion of the session runs meanwhile (a second one is
        refused with the lock's error); a stop that ended the last section is cleared first.
        The worker beats meanwhile, as in a search, with ``doing`` ("running finals") as its
        status, so ``status`` and the other workers see it alive; it signs off at the end."""
        self._lock.acquire()
        self.control.clear()
        try:
            with self.worker.beating(doing):
                yield self.pipeline
        finally:
            self._lock.release()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background thread; True when it has finished."""
        if self._thread is None:
            return True
        # an Event, not Thread.join: a Ctrl-C that interrupts join() can leave the thread
        # wrongly marked as finished, and the process would exit before the run is recorded
        return self._done.wait(timeout)

    def stop(self, *, now: bool = True, everywhere: bool = True) -> None:
        """Stop the search; ``now`` also kills the current run (its slot re-runs on resume);
        ``everywhere`` records the request in the store, so every worker of a shared search
        stops too (``everywhere=False``: this process only, a worker's Ctrl-C)."""
        self.control.request_stop(now=now, everywhere=everywhere)
        if now:
            self.executor.stop_current("stopped by the user")

    def abandon(self) -> None:
        """Stop without waiting (a second Ctrl-C): kill the current run's processes now; the run,
        left "running" by a gone process, is marked interrupted and re-run by the next resume."""
        self.control.request_stop(now=True, everywhere=False)
        self.executor.kill_current()

    def pause(self) -> None:
        """Finish the current run, then wait before starting the next one."""
        self.control.pause()

    def unpause(self) -> None:
        self.control.unpause()

    @property
    def paused(self) -> bool:
        """True between ``pause`` and ``unpause`` of a running search (the current run may still finish)."""
        return self.running and self.control.pausing

    def active_seconds(self) -> float | None:
        """Seconds since the search started, time spent paused left out (None before it starts)."""
        return self.control.active_seconds(self.started_at)

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._done.is_set()

    def _set_phase(self, phase: str) -> None:
        self.phase = phase

    # -- the loop --------------------------------------------------------------------------
    def _run_locked(self) -> str:
        self.started_at = time.time()
        self.control.restart_clock()
        self.error = ""
        heartbeat = self.worker.heartbeat()
        status = "failed"
        try:
            # a stop still being carried out by live workers of a shared search is not undone by joining
            cleared = {} if self.worker.others_alive() else {"stop_requested": ""}
            self.store.update_session(self.name, status="running", **cleared)
            heartbeat.start()
            self.phase = "recovering"
            self.worker.recover()
            run_setup_commands(self.parts, executor=self.executor, control=self.control, worker=self.worker,
                               on_phase=self._set_phase)
            self._search_phase()
            self.pipeline.drain_judges(timeout_s=600)
            status = "stopped" if self.control.stop_requested() else "finished"
            if status == "finished" and not self.worker.others_alive():  # the study tells the truth at the end
                self._finished()
        except BracketError as error:
            self.error = str(error)
        except Exception as error:  # noqa: BLE001 - recorded and shown; the session stays resumable
            status, self.error = "failed", machine_state_message(error) or failure_message(error)
            try:
                (self.folder / "session-error.log").write_text(traceback.format_exc(), encoding="utf-8")
            except OSError as log_error:  # a full disk may be what failed
                log_failure("could not write session-error.log", log_error)
        finally:
            self.pipeline.end_workers()
            self.phase = status
            self.control.halt()
            heartbeat.join(HEARTBEAT_SECONDS + 1)  # first, so it cannot overwrite "stopped"
            try:
                self.worker.sign_off()
                if not self.worker.others_alive():  # the last worker of a shared search says how it ended
                    self.store.update_session(self.name, status=status)
            except Exception as store_error:  # noqa: BLE001 - the store itself may be what failed
                log_failure("could not record the final session status", store_error)
            self.changed()
            self._lock.release()
            self._done.set()
        return status

    def changed(self) -> None:
        """Tell the ``on_change`` callbacks that this process changed the store (see the class)."""
        self._tell(self.on_change, "after a change of")

    def _finished(self) -> None:
        self._tell(self.on_finish, "at the end of")

    def _tell(self, callbacks: Sequence[SessionCallback], when: str) -> None:
        for callback in callbacks:
            try:
                callback(self)
            except Exception:  # noqa: BLE001 - a callback never breaks a search
                log.warning("a callback %s search %s failed", when, self.name, exc_info=True)

    @functools.cached_property
    def budget(self) -> Budget:
        """The session's budget (``bracket.session.loop.budget``): its unit, what it buys, what is spent."""
        return Budget.of(self.settings, self.trainer, self.facts)

    def view(self) -> SearchView:
        """The search's read model once per store change (``bracket.session.loop.search_view``)."""
        return search_view(self)

    def total_runs(self) -> int:
        """The runs the plan trains as the budget buys them now (``Budget.runs_bought``); a finished
        halving search's, the runs it trained (:meth:`search_over`)."""
        counted = self.counted()
        return counted.spent_runs() if self.search_over() else self.budget.runs_bought(counted)

    def search_over(self) -> bool:
        """A halving search that finished: it ran what its budget bought in the end, and its plan and
        counts say that (``Budget.plan_text(ended=True)``), not what it might have bought."""
        row = self.store.get_session(self.name) or {}
        return self.budget.halving and row.get("status") == "finished" and not self.running

    def spent_runs(self) -> int:
        """Search runs that count against the budget (``RunRow.spends_budget``), read now."""
        return self.counted().spent_runs()

    def counted(self) -> SearchView:
        """The search's view without series or rung scores, read now: what the budget's counts need."""
        runs = self.store.runs(self.name, with_series=False)
        return SearchView.build(self.store.configs(self.name, stage="search"), runs, seeds=self.settings.seeds,
                                full_steps=int(self.settings.steps), launch=measured_launch(runs, self.settings))

    def plan_text(self) -> str:
        """The plan in one line at what the budget buys now (``Budget.plan_text``): what Setup showed
        before Start, the count lowered (and said) once the launches' start-up is measured; a finished
        halving search's, the configs it ran."""
        return self.budget.plan_text(self.counted(), ended=self.search_over())

    def budget_spent(self) -> bool:
        """Nothing is left to train: the budget's runs are spent and no config of a halving search
        waits at a rung (paused or resuming; one still to be promoted or stopped)."""
        return self.budget.finished(self.counted())

    def controller(self) -> SearchController:
        if self._controller is None:  # seeded per worker; each proposal's "why" kept with its trial
            from bracket.session.loop.proposing import build_controller
            self._controller = build_controller(self)
        return self._controller

    def add_note(self, text: str) -> None:
        """Add ``text`` to the session's notes once (every worker's controller may tell it)."""
        notes = list((self.store.get_session(self.name) or {}).get("notes") or [])
        if text not in notes:
            self.store.update_session(self.name, notes=notes + [text])

    def _search_phase(self) -> None:
        """The one search loop (``bracket.session.loop.search_loop``) with the scheduler the budget names."""
        SearchLoop(self, session_scheduler(self), wait_s=WAIT_SECONDS, before_turn=self.before_turn).run()

    # -- what the sampler and the UI see ---------------------------------------------------
    def scores(self, runs: list[dict[str, Any]] | None = None) -> dict[int, RunScore]:
        """Current combined score of every finished run (``Scoreboard.scores``); of every run of
        the session (``runs`` None) once per store change (``bracket.session.store.change_memo``)."""
        if runs is None:
            return per_change(self, "scores", lambda: self.scoreboard.scores(stored_rows(self)[0]))
        return self.scoreboard.scores(runs)

    def scored_configs(self) -> list[ScoredConfig]:
        """Every search config as the sampler sees it now (``Scoreboard.scored_configs``), from the
        runs scored once per store change (:meth:`scores`), which the proposal's "why" line reads too."""
        runs, configs = stored_rows(self)
        return self.scoreboard.scored_configs([r for r in runs if r["stage"] == "search"], self.scores(),
                                              [c for c in configs if c["stage"] == "search"])

    @functools.cached_property
    def search_plan(self) -> list[tuple[str, int]]:
        """``(phase, configs)`` of this search (``bracket.session.loop.plan``): its ``past`` configs
        counted in the order the session was given (``rank_past``), as its warm start took them."""
        return plan_for(self.trainer, self.space, self.settings, self.parts.preset.id, rank=self.parts.rank_past,
                        n_configs=self.budget.planned)

    def plan_at(self, configs: int) -> list[tuple[str, int]]:
        """:attr:`search_plan` when the budget buys ``configs`` configs (a halving search whose launch
        start-up buys fewer than planned: the plan's later phases shrink)."""
        if configs == self.budget.planned:
            return self.search_plan
        return plan_for(self.trainer, self.space, self.settings, self.parts.preset.id, rank=self.parts.rank_past,
                        n_configs=configs)

    def snapshot(self) -> SessionSnapshot:
        """A consistent, copyable picture of the search for the UI and the CLI."""
        return build_snapshot(self)

    def add_rating(self, run_id: int, value: float, prompt_index: int | None = None, step: int | None = None) -> None:
        self.scoreboard.add_rating(run_id, value, prompt_index, step)

    def add_comparison(self, left_run_id: int, right_run_id: int, winner: str) -> None:
        self.scoreboard.add_comparison(left_run_id, right_run_id, winner)

    def undo_last_comparison(self) -> dict[str, Any] | None:
        """Take back the most recent pairwise choice; returns it (None when there is none)."""
        return self.scoreboard.undo_last_comparison()

    def close(self) -> None:
        if self.running:
            self.stop()
            self.wait(30)
        self.store.close()
