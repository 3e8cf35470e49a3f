"""A search session: the loop that trains configurations one run at a time.

A :class:`Session` runs in a background thread (``start``) or in the foreground (``run``):

1. recover what a killed process left behind (runs still marked running are failed as
   *interrupted*, their process trees killed, and their slots run again);
2. run the trainer's one-off setup commands (pre-caching, ``bracket.session.precache``) unless already complete;
3. take configurations from the :class:`SearchController` — baseline, curated, then TPE — and train each
   with ``seeds`` seeds through the run pipeline (:class:`~bracket.session.pipeline.RunPipeline`), reading
   loss as the run goes and stopping it early when it diverges (``--halving``: ``halving_loop``);
4. the confirmation rung (``bracket.session.confirm``): the top configs again, fresh seeds; 5. stop at the budget.

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
from bracket.search.types import SEARCH_KINDS, ScoredConfig
from bracket.session.confirm import confirm_step
from bracket.session.control import RunControl
from bracket.session.create import SessionParts, create_session, open_session
from bracket.session.distributed import join_session, worker_lock_name
from bracket.session.halving_loop import HalvingLoop
from bracket.session.past import Ranking
from bracket.session.pipeline import RunPipeline
from bracket.session.plan import plan_for
from bracket.session.precache import run_setup_commands
from bracket.session.process import RunExecutor
from bracket.session.recovery import DEFAULT_GRACE_SECONDS, failure_message
from bracket.session.scoring import RunScore, Scoreboard, TextJudges
from bracket.session.scoring.vlm import VlmScorer, vlm_config
from bracket.session.search_settings import SearchSettings
from bracket.session.snapshot import SessionSnapshot, build_snapshot
from bracket.session.store import SessionLock, gc_paused, per_change, stored_rows
from bracket.session.store.schema import RUN_AT_RUNG, RUN_SPENT, spends_budget
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
                                    text_judges=self.text_judges, on_phase=self._set_phase)
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self._lock = SessionLock(self.folder, lock_name)
        self.phase = "idle"
        self.error = ""
        self.started_at: float | None = None
        self._controller: SearchController | None = None

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
            if self.vlm is not None:
                self.phase = "waiting for the judge model"
                self.vlm.drain(timeout=600)
                self.text_judges.drain(timeout=600)
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

    def total_runs(self) -> int:
        return self.settings.n_configs * self.settings.seeds + self.settings.confirm_runs

    def spent_runs(self) -> int:
        """Search runs that count against the budget (``schema.spends_budget``)."""
        runs = self.store.runs(self.name, with_series=False, statuses=RUN_SPENT + RUN_AT_RUNG, kinds=SEARCH_KINDS)
        return sum(1 for r in runs if r["stage"] == "search" and spends_budget(r))

    def budget_spent(self) -> bool:
        """Nothing is left to train: the budget's runs are spent and no config of a halving search
        waits at a rung (paused or resuming; one still to be promoted or stopped)."""
        return self.spent_runs() >= self.total_runs() and not (self.settings.halving and any(
            c["status"] in ("running", "paused") for c in self.store.configs(self.name, stage="search")))

    def controller(self) -> SearchController:
        if self._controller is None:  # seeded per worker; each proposal's "why" kept with its trial
            from bracket.session.proposing import build_controller
            self._controller = build_controller(self)
        return self._controller

    def add_note(self, text: str) -> None:
        """Add ``text`` to the session's notes once (every worker's controller may tell it)."""
        notes = list((self.store.get_session(self.name) or {}).get("notes") or [])
        if text not in notes:
            self.store.update_session(self.name, notes=notes + [text])

    def _search_phase(self) -> None:
        if self.settings.halving:  # configs pause at rungs and the best resume (bracket.session.halving_loop)
            return HalvingLoop(self, wait_s=WAIT_SECONDS).run()
        control = self.control
        while not control.halted:
            control.wait_while_paused(self.changed)  # the view shows the run finished before the pause
            if control.stop_requested() or self.spent_runs() >= self.total_runs():
                return
            self.worker.recover()
            work = self._next_config()
            if work is None:
                if not any(c["status"] == "running" for c in self.store.configs(self.name, stage="search")):
                    if self.settings.confirm_runs and confirm_step(self.pipeline, wait_s=WAIT_SECONDS):
                        continue
                    return
                # the rest is being trained by other live workers: wait, to take over if one dies
                if self.phase != "waiting for other workers":  # the view shows our last run, once
                    self.phase = "waiting for other workers"
                    self.changed()
                control.wait(WAIT_SECONDS)
                continue
            config_row, seed_indices = work
            for seed_index in seed_indices:
                control.wait_while_paused(self.changed)  # a pause takes effect between runs, seeds included
                if control.stop_requested() or self.spent_runs() >= self.total_runs():
                    break
                self.pipeline.train(config_row, seed_index)
            self.pipeline.finish_config(config_row)

    def _next_config(self) -> tuple[dict[str, Any], list[int]] | None:
        """An unfinished config (ours or an orphan's) first, else a new one from the controller."""
        runs = self.store.runs(self.name, with_series=False)
        configs = self.store.configs(self.name, stage="search")
        workers = self.worker.workers()
        for config in configs:
            if config["status"] != "running":
                continue
            owner = config["worker"]
            if owner and owner != self.worker_id and self.worker.is_alive(workers.get(owner)):
                continue
            spent = {r["seed_index"] for r in runs if r["config_id"] == config["id"] and r["status"] in RUN_SPENT}
            missing = [i for i in range(self.settings.seeds) if i not in spent]
            if missing:
                if owner != self.worker_id and not self.worker.claim(config["id"], owner):
                    continue  # another worker took this orphan over first
                return config | {"worker": self.worker_id}, missing
            self.pipeline.finish_config(config)
        if len(configs) >= self.settings.n_configs:
            return None
        config_id = self.worker.reserve(self.settings.n_configs, self.controller().next)
        skipped, self.controller().skipped = self.controller().skipped, []
        for note in skipped:  # noted after the session's row lock is released
            self.add_note(note)
        if config_id is None:
            return None
        config = next(c for c in self.store.configs(self.name, stage="search") if c["id"] == config_id)
        return config, list(range(self.settings.seeds))

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
        """``(phase, configs)`` of this search (``bracket.session.plan``): its ``past`` configs
        counted in the order the session was given (``rank_past``), as its warm start took them."""
        return plan_for(self.trainer, self.space, self.settings, self.parts.preset.id, rank=self.parts.rank_past)

    def snapshot(self) -> SessionSnapshot:
        """A consistent, copyable picture of the search for the UI and the CLI (built without
        cyclic collection passes, like the standings: ``bracket.session.store.change_memo.gc_paused``)."""
        with gc_paused():
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
