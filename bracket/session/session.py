"""A search session: the loop that trains configurations one run at a time.

A :class:`Session` runs in a background thread (``start``) or in the foreground (``run``):

1. recover what a killed process left behind (runs still marked running are failed as
   *interrupted*, their process trees killed, and their slots run again);
2. run the trainer's one-off setup commands (pre-caching) unless already complete;
3. take configurations from the :class:`SearchController` — baseline, curated, then TPE —
   and train each with ``seeds`` seeds through one pipeline (:meth:`Session._train`),
   reading loss as the run goes and stopping it early when it diverges;
4. spend the confirmation rung (``bracket.session.confirm``): the top configs again with
   fresh seeds, by successive halving;
5. stop when the budget (a number of training runs) is spent, or when asked.

Everything is recorded in the store as it happens, so a session can be resumed at any
point and watched from another process. The UI polls :meth:`Session.snapshot`.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import socket
import threading
import time
import traceback
import zlib
from pathlib import Path
from typing import Any

from optuna.trial import TrialState

from bracket.errors import BracketError, disk_full_message
from bracket.search.controller import SEARCH_KINDS, ScoredConfig, SearchController
from bracket.session.config import SearchSettings
from bracket.session.create import SessionParts, create_session, open_session
from bracket.session.distributed import claim_config, reserve_config, setup_done_elsewhere
from bracket.session.execute import RunExecutor
from bracket.session.lock import SessionLock
from bracket.session.recovery import (DEFAULT_GRACE_SECONDS, failure_message, recover_interrupted_runs,
                                      worker_is_alive)
from bracket.session.plan import plan_for
from bracket.session.scoring import (
    RunScore,
    SummaryCache,
    config_values,
    needs_series,
    rated_configs,
    sampler_history,
    score_runs,
)
from bracket.session.snapshot import SessionSnapshot, build_snapshot, confirm_phase_label, phase_label
from bracket.session.store import RUN_SPENT
from bracket.session.study_sync import record_at_end
from bracket.session.text_judges import TextJudges, write_heldout
from bracket.session.vlm_scoring import VlmScorer, vlm_config
from bracket.trainer.base import RunRequest

log = logging.getLogger(__name__)


def _log_failure(what: str, error: BaseException) -> None:
    """Log a secondary failure: one line for a full disk (the session's error says what to do),
    the traceback for anything else."""
    message = disk_full_message(error)
    if message:
        log.info("%s: %s", what, message)  # below WARNING: the one error line says it
    else:
        log.error("%s", what, exc_info=error)
HEARTBEAT_SECONDS = 5.0
#: how often a worker with nothing to do looks again for orphaned work of other workers
WAIT_SECONDS = 2.0


class Session:
    """One search, backed by its store; safe to poll from other threads."""

    def __init__(self, parts: SessionParts, *, worker_id: str | None = None, gpu: str = "",
                 grace_s: float = DEFAULT_GRACE_SECONDS, lock_name: str = ".lock") -> None:
        self.parts = parts
        self.store = parts.store
        self.name = parts.name
        self.folder = parts.folder
        self.trainer = parts.trainer
        self.settings: SearchSettings = parts.settings
        self.space = parts.space
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}"
        #: GPU index given to this worker's trainer processes (CUDA_VISIBLE_DEVICES); "" = inherit
        self.gpu = str(gpu or "")
        #: a worker whose heartbeat is older than this is dead: its run is interrupted and re-run
        self.grace_s = float(grace_s)
        self._stop_mode = ""
        self._stop = threading.Event()
        self._resume_event = threading.Event()
        self._resume_event.set()
        self._paused_at: float | None = None
        self.paused_s = 0.0
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self._lock = SessionLock(self.folder, lock_name)
        self.executor = RunExecutor(self)
        self.phase = "idle"
        self.error = ""
        self.started_at: float | None = None
        self._controller: SearchController | None = None
        self._summaries = SummaryCache()
        config = vlm_config(self.settings.vlm or {})
        self.vlm = VlmScorer(self.store, self.name, config, self.settings.prompts()) if config else None
        #: task metrics and the LLM-as-judge of text samples (the same judge server settings)
        self.text_judges = TextJudges(self.store, self.name, config)

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def create(cls, preset_id: str, fields: dict[str, str], settings: SearchSettings | None = None, **kw: Any
               ) -> "Session":
        """Validate everything and create a new session (see ``bracket.session.create``)."""
        return cls(create_session(preset_id, fields, settings or SearchSettings(), **kw))

    @classmethod
    def open(cls, folder: Path | str, *, storage_url: str | None = None, validate: bool = True) -> "Session":
        """Re-open an existing session folder, to resume it or to look at it."""
        return cls(open_session(Path(folder), storage_url=storage_url, validate=validate))

    @classmethod
    def join(cls, storage_url: str, session_name: str, runs_dir: Path | str | None = None, *,
             worker_id: str | None = None, gpu: str = "", grace_s: float = DEFAULT_GRACE_SECONDS) -> "Session":
        """Join a search shared through PostgreSQL as one more worker (see ``bracket.session.distributed``)."""
        from bracket.session.distributed import join_session, worker_lock_name

        parts = join_session(storage_url, session_name, Path(runs_dir) if runs_dir else None)
        return cls(parts, worker_id=worker_id, gpu=gpu, grace_s=grace_s, lock_name=worker_lock_name(str(gpu or "")))

    # -- control -----------------------------------------------------------------------------
    def start(self) -> None:
        """Run the search in a background thread; the lock is taken before this returns."""
        if self.running:
            raise BracketError("This search is already running.")
        self._lock.acquire()
        self._stop.clear()
        self._stop_mode = ""
        self._done.clear()
        self._thread = threading.Thread(target=self._run_locked, name=f"bracket-{self.name}", daemon=True)
        self._thread.start()

    def run(self) -> str:
        """Run the search in this thread until done or stopped; returns the final status."""
        self._lock.acquire()
        self._stop.clear()
        self._stop_mode = ""
        return self._run_locked()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background thread; True when it has finished."""
        if self._thread is None:
            return True
        # an Event, not Thread.join: a Ctrl-C that interrupts join() can leave the thread
        # wrongly marked as finished, and the process would exit before the run is recorded
        return self._done.wait(timeout)

    def stop(self, *, now: bool = True, everywhere: bool = True) -> None:
        """Stop the search; ``now`` also kills the current run (its slot re-runs on resume).

        ``everywhere`` records the request in the store, so every worker of a shared search
        stops too; ``everywhere=False`` stops only this process (a worker's Ctrl-C).
        """
        self._stop_mode = "now" if now else "after-trial"
        self._stop.set()
        self._resume_event.set()
        if everywhere:
            self.store.update_session(self.name, stop_requested=self._stop_mode)
        if now:
            self.executor.stop_current("stopped by the user")

    def pause(self) -> None:
        """Finish the current run, then wait before starting the next one."""
        if self._resume_event.is_set():
            self._paused_at = time.time()
        self._resume_event.clear()
        self.store.update_session(self.name, status="paused")

    def unpause(self) -> None:
        if not self._resume_event.is_set() and self._paused_at is not None:
            self.paused_s += time.time() - self._paused_at
        self._paused_at = None
        self._resume_event.set()
        self.store.update_session(self.name, status="running")

    @property
    def paused(self) -> bool:
        """True between ``pause`` and ``unpause`` of a running search (the current run may still finish)."""
        return self.running and not self._resume_event.is_set()

    def active_seconds(self) -> float | None:
        """Seconds since the search started, time spent paused left out (None before it starts)."""
        if not self.started_at:
            return None
        now = self._paused_at or time.time()
        return max(0.0, now - self.started_at - self.paused_s)

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._done.is_set()

    def stop_requested(self) -> bool:
        if self._stop.is_set():
            return True
        row = self.store.get_session(self.name)
        return bool(row and row["stop_requested"])

    def stop_mode(self) -> str:
        """"" while the search goes on, else "now" (kill the current run) or "after-trial"."""
        if self._stop_mode:
            return self._stop_mode
        row = self.store.get_session(self.name)
        return str(row["stop_requested"] or "") if row else ""

    # -- the loop --------------------------------------------------------------------------
    def _run_locked(self) -> str:
        self.started_at = time.time()
        self._paused_at, self.paused_s = None, 0.0
        self.error = ""
        heartbeat = threading.Thread(target=self._heartbeat_loop, daemon=True)
        status = "failed"
        try:
            # a stop still being carried out by live workers of a shared search is not undone by joining
            cleared = {} if self._other_workers_alive() else {"stop_requested": ""}
            self.store.update_session(self.name, status="running", **cleared)
            heartbeat.start()
            self.phase = "recovering"
            self._recover()
            self._setup_phase()
            self._search_phase()
            if self.vlm is not None:
                self.phase = "waiting for the judge model"
                self.vlm.drain(timeout=600)
                self.text_judges.drain(timeout=600)
            status = "stopped" if self.stop_requested() else "finished"
            if status == "finished" and not self._other_workers_alive():  # the study tells the truth at the end
                record_at_end(self)
        except BracketError as error:
            self.error = str(error)
        except Exception as error:  # noqa: BLE001 - recorded and shown; the session stays resumable
            self.error = disk_full_message(error) or failure_message(error)
            try:
                (self.folder / "session-error.log").write_text(traceback.format_exc(), encoding="utf-8")
            except OSError as log_error:  # a full disk may be what failed
                _log_failure("could not write session-error.log", log_error)
        finally:
            self.phase = status
            self._stop.set()  # ends the heartbeat thread first, so it cannot overwrite "stopped"
            if heartbeat.is_alive():
                heartbeat.join(HEARTBEAT_SECONDS + 1)
            try:
                self.store.heartbeat(self.name, self.worker_id, status="stopped")
                if not self._other_workers_alive():  # the last worker of a shared search says how it ended
                    self.store.update_session(self.name, status=status)
            except Exception as store_error:  # noqa: BLE001 - the store itself may be what failed
                _log_failure("could not record the final session status", store_error)
            self._stop.set()
            self._lock.release()
            self._done.set()
        return status

    def _heartbeat_loop(self) -> None:
        host = socket.gethostname()
        while not self._stop.is_set():
            try:
                self.store.heartbeat(self.name, self.worker_id, host=host, pid=os.getpid(),
                                     gpu=self.gpu or os.environ.get("CUDA_VISIBLE_DEVICES", ""))
            except Exception as error:  # noqa: BLE001 - a missed beat is not fatal
                _log_failure("heartbeat failed", error)
            self._stop.wait(min(HEARTBEAT_SECONDS, self.grace_s / 3))  # several beats per grace period

    def _setup_phase(self) -> None:
        setup_dir = self.folder / "setup"
        specs = self.trainer.session_setup_commands(dataset=Path(self.parts.fields.get("dataset", "")),
                                                    run_dir=setup_dir)
        done = {r["label"] for r in self.store.runs(self.name, kinds=("setup",), with_series=False)
                if r["status"] == "done"}
        for spec in specs:
            if self._stop.is_set():
                return
            if spec.label in done or setup_done_elsewhere(self, spec.label):
                continue
            self.phase = f"pre-cache: {spec.label}"
            run_id = self.store.add_run(self.name, kind="setup", stage="setup", label=spec.label,
                                        worker=self.worker_id)
            # its log goes to <session>/setup/<label>/logs, not into the trainer checkout (its cwd)
            label_dir = setup_dir / re.sub(r"[^A-Za-z0-9._-]+", "-", spec.label or f"step{run_id}")
            status = self.executor.execute(run_id, spec, scored=False, run_dir=label_dir)
            if status != "done":
                run = self.store.get_run(run_id) or {}
                raise BracketError(f"Pre-caching step {spec.label!r} failed ({run.get('failure_reason', status)}); "
                                   f"see the log in {label_dir / 'logs'}, fix it, then resume.")

    def total_runs(self) -> int:
        return self.settings.n_configs * self.settings.seeds + self.settings.confirm_runs

    def spent_runs(self) -> int:
        runs = self.store.runs(self.name, with_series=False, statuses=RUN_SPENT, kinds=SEARCH_KINDS)
        return sum(1 for r in runs if r["stage"] == "search")

    def controller(self) -> SearchController:
        if self._controller is None:
            study = self.store.study(self.name)
            # each worker samples with its own (stable) seed, so two workers never propose the same config
            seed = self.settings.base_seed + zlib.crc32(self.worker_id.encode("utf-8")) % 10_000
            self._controller = SearchController(study=study, space=self.space, algorithm=self.settings.algorithm,
                                                seed=seed, history=self.scored_configs,
                                                lr_bracket=self.settings.lr_bracket)
        return self._controller

    def _search_phase(self) -> None:
        while not self._stop.is_set():
            self._resume_event.wait()
            if self.stop_requested() or self.spent_runs() >= self.total_runs():
                return
            self._recover()
            work = self._next_config()
            if work is None:
                if not any(c["status"] == "running" for c in self.store.configs(self.name, stage="search")):
                    if self.settings.confirm_runs and self._confirm_step():
                        continue
                    return
                # the rest is being trained by other live workers: wait, to take over if one dies
                self.phase = "waiting for other workers"
                self._stop.wait(WAIT_SECONDS)
                continue
            config_row, seed_indices = work
            for seed_index in seed_indices:
                self._resume_event.wait()  # a pause takes effect between runs, seeds included
                if self.stop_requested() or self.spent_runs() >= self.total_runs():
                    break
                self._train(config_row, seed_index)
            self._finish_config_if_complete(config_row)

    def _confirm_step(self) -> bool:
        """One step of the confirmation rung (``bracket.session.confirm.confirm_step``)."""
        from bracket.session.confirm import confirm_step

        return confirm_step(self, wait_s=WAIT_SECONDS)

    def _next_config(self) -> tuple[dict[str, Any], list[int]] | None:
        """An unfinished config (ours or an orphan's) first, else a new one from the controller."""
        runs = self.store.runs(self.name, with_series=False)
        configs = self.store.configs(self.name, stage="search")
        workers = {w["worker_id"]: w for w in self.store.workers(self.name)}
        for config in configs:
            if config["status"] != "running":
                continue
            owner = config["worker"]
            if owner and owner != self.worker_id and worker_is_alive(workers.get(owner), grace_s=self.grace_s):
                continue
            spent = {r["seed_index"] for r in runs if r["config_id"] == config["id"] and r["status"] in RUN_SPENT}
            missing = [i for i in range(self.settings.seeds) if i not in spent]
            if missing:
                if owner != self.worker_id and not claim_config(self.store, config["id"], owner, self.worker_id):
                    continue  # another worker took this orphan over first
                return config | {"worker": self.worker_id}, missing
            self._finish_config_if_complete(config)
        if len(configs) >= self.settings.n_configs:
            return None
        config_id = reserve_config(self.store, self.name, limit=self.settings.n_configs, worker=self.worker_id,
                                   propose=self.controller().next)
        if config_id is None:
            return None
        config = next(c for c in self.store.configs(self.name, stage="search") if c["id"] == config_id)
        return config, list(range(self.settings.seeds))

    def _recover(self) -> None:
        """Mark the runs of dead workers (or of a killed earlier process) interrupted."""
        for note in recover_interrupted_runs(self.store, self.name, self_worker=self.worker_id,
                                             grace_s=self.grace_s):
            log.warning(note)

    def _other_workers_alive(self) -> bool:
        return any(w["worker_id"] != self.worker_id and worker_is_alive(w, grace_s=self.grace_s)
                   for w in self.store.workers(self.name))

    def _train(self, config: dict[str, Any], seed_index: int, *, steps: int | None = None,
               seed: int | None = None, dataset: Path | None = None, run_id: int | None = None,
               **run_options: Any) -> str:
        """The one pipeline every run goes through, whatever its kind or stage.

        ``run_id`` names a run already reserved in the store (a confirmation run)."""
        stage = config.get("stage", "search")
        if stage == "search" and seed_index >= self.settings.seeds:
            self.phase = confirm_phase_label(self)
        else:
            self.phase = phase_label(self, config) if stage == "search" else f"{stage}: {config['name']}"
        seed = self.settings.base_seed + seed_index if seed is None else seed
        steps = steps or self.settings.steps
        # validated against the session's (narrowed) space before any run is recorded, so a
        # refused config leaves no pending run behind
        trainer_config = self.trainer.config_from_dict(config["params"], self.space)
        if run_id is None:
            run_id = self.store.add_run(
                self.name, config_id=config["id"], kind=config["kind"], stage=stage,
                label=f"{config['name']} seed {seed}", seed=seed, seed_index=seed_index, params=config["params"],
                worker=self.worker_id, max_steps=steps)
        folder = "trials" if stage == "search" else stage
        run_dir = self.folder / folder / f"{run_id:04d}-{config['name']}-s{seed_index}"
        spec = self.trainer.prepare_run(RunRequest(
            run_dir=run_dir, knobs=trainer_config,
            dataset=dataset or Path(self.parts.fields.get("dataset", "")), max_steps=steps, seed=seed,
            sample_prompts=self.settings.prompts(),
            sample_every_n_steps=self.settings.sample_every_n_steps, **run_options))
        write_heldout(self.trainer, run_dir)  # LLM runs: held-out prompts for the task judges
        status = self.executor.execute(run_id, spec, scored=True, run_dir=run_dir)
        if status == "done" and self.vlm is not None and self.trainer.sample_kind in ("image", "video"):
            self.vlm.submit(run_id)
        if status == "done" and self.trainer.sample_kind == "text":
            self.text_judges.after_run(run_id)
        return status

    def _finish_config_if_complete(self, config: dict[str, Any]) -> None:
        all_runs = self.store.runs(self.name, with_series=False)  # one read serves both steps below
        runs = [r for r in all_runs if r["config_id"] == config["id"]]
        spent = [r for r in runs if r["status"] in RUN_SPENT]
        if len({r["seed_index"] for r in spent}) < self.settings.seeds:
            return
        value = config_values(runs, self.scores(all_runs)).get(config["id"])
        pruned = all(r["status"] == "pruned" for r in spent)
        state = TrialState.PRUNED if pruned else (TrialState.COMPLETE if value is not None else TrialState.FAIL)
        self.controller().finish(config["trial_number"], value, state)
        self.store.update_config(config["id"], status="done" if value is not None else "failed", value=value)

    # -- what the sampler and the UI see ---------------------------------------------------
    def scores(self, runs: list[dict[str, Any]] | None = None) -> dict[int, RunScore]:
        """Current combined score of every finished run (ratings included, as of now); of every run
        of the session (``runs`` None) once per store change (``bracket.session.change_memo``)."""
        if runs is None:
            from bracket.session.change_memo import per_change

            return per_change(self, "scores", lambda: self.scores(self.store.runs(self.name, with_series=False)))
        eval_loss = self.trainer.sample_kind == "text"
        missing = [r["id"] for r in runs if "loss" not in r and (eval_loss or needs_series(r, self._summaries))]
        if missing:
            series = self.store.series(missing)
            runs = [{**r, **series[r["id"]]} if r["id"] in series else r for r in runs]
        ratings, comparisons = self.store.ratings(self.name), self.store.comparisons(self.name)
        scores: dict[int, RunScore] = {}
        for stage in {r["stage"] for r in runs if r["stage"] != "setup"}:  # never mix finals with short runs
            scores.update(score_runs([r for r in runs if r["stage"] == stage], ratings, comparisons,
                                     self.settings.weights, eval_loss=eval_loss, cache=self._summaries))
        return scores

    def scored_configs(self) -> list[ScoredConfig]:
        """Every config as the sampler should see it now (current scores, running ones)."""
        runs = [r for r in self.store.runs(self.name, with_series=False) if r["stage"] == "search"]
        scores = self.scores(runs)
        return sampler_history(self.store.configs(self.name, stage="search"), config_values(runs, scores),
                               self.space, rated_configs(runs, scores))

    @functools.cached_property
    def search_plan(self) -> list[tuple[str, int]]:
        """``(phase, configs)`` of this search (``bracket.session.plan``)."""
        return plan_for(self.trainer, self.space, self.settings, self.parts.preset.id)

    def snapshot(self) -> SessionSnapshot:
        """A consistent, copyable picture of the search for the UI and the CLI."""
        return build_snapshot(self)

    def run_finals(self, *, top_k: int = 3, steps: int | None = None, seeds: int = 2) -> list[int]:
        """Re-run the best configs longer with fresh seeds (see ``bracket.session.finals``)."""
        from bracket.session.finals import run_finals

        return run_finals(self, top_k=top_k, steps=steps, seeds=seeds)

    def promote(self, *, steps: int | None = None, run_id: int | None = None,
                save_every_n_steps: int | None = None, dataset: Path | None = None) -> int:
        """Train the winner for the full length with periodic saves (see ``bracket.session.promote``)."""
        from bracket.session.promote import promote

        return promote(self, steps=steps, run_id=run_id, save_every_n_steps=save_every_n_steps, dataset=dataset)

    def add_rating(self, run_id: int, value: float, prompt_index: int | None = None, step: int | None = None) -> None:
        from bracket.session.human import record_rating
        record_rating(self.store, self.name, run_id, value, prompt_index, step)

    def add_comparison(self, left_run_id: int, right_run_id: int, winner: str) -> None:
        from bracket.session.human import record_comparison
        record_comparison(self.store, self.name, left_run_id, right_run_id, winner)

    def undo_last_comparison(self) -> dict[str, Any] | None:
        """Take back the most recent pairwise choice; returns it (None when there is none)."""
        return self.store.delete_last_comparison(self.name)

    def close(self) -> None:
        if self.running:
            self.stop()
            self.wait(30)
        self.store.close()
