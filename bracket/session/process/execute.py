"""Running one process of a session and recording everything about it.

:class:`RunExecutor` is the single pipeline every trainer process goes through — setup
commands, baseline, curated and search runs alike: mark it running in the store (with its
pid, process start time and start time, from which a later resume finds its orphans and the
run marker every process of it carries), launch it through the
:class:`~bracket.session.process.runner.Runner`, read its loss incrementally while it runs, stop it
early when the loss diverges, then record its outcome, log tail, loss series and samples.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
import signal
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bracket.judge.divergence import DivergenceMonitor
from bracket.session.launches import Launch, back_to_pause, up_to
from bracket.session.process.groups import run_marker
from bracket.session.process.runner import Runner, RunResult, read_log_tail
from bracket.session.scoring import ScalarReader, collect_samples
from bracket.session.search_settings import SearchSettings
from bracket.session.store import Store
from bracket.trainer.base import LaunchSpec

log = logging.getLogger(__name__)
PERSIST_SECONDS = 3.0
#: how long a run whose paused state is complete may go on to exit by itself before it is stopped
#: (one that already logs steps past its pause is stopped at once: what it trains past is charged)
PAUSE_GRACE_SECONDS = 5.0


def sample_record(sample: Any) -> dict[str, Any]:
    return {"path": str(sample.path), "step": sample.step, "epoch": sample.epoch,
            "prompt_index": sample.prompt_index, "seed": sample.seed, "frame": sample.frame, "kind": sample.kind}


#: the last line of a Python traceback: ``SomeError: message`` (or a bare exception name)
_EXCEPTION_LINE = re.compile(
    r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b(?::\s.*)?$")
#: what launchers (accelerate, subprocess) raise about their child: not the trainer's own error
_LAUNCHER_ERRORS = ("CalledProcessError", "ChildFailedError")
#: lines read back from the end of a failed run's log to find its error
ERROR_SCAN_LINES = 400


def trainer_error_line(lines: Sequence[str]) -> str:
    """The trainer's own last error line in a log: the exception above the launcher's.

    ``accelerate launch`` runs the script as a child and, when it fails, raises its own
    ``CalledProcessError`` last; the useful line is the exception before it (``TypeError:
    ...`` from the tokenizer, an ``AssertionError`` about flags, an out-of-memory error).
    Returns "" when the log holds no traceback line.
    """
    found = ""
    for raw in lines:
        line = raw.rstrip()
        if line != line.lstrip() or not _EXCEPTION_LINE.match(line):
            continue
        if any(name in line.split(":", 1)[0] for name in _LAUNCHER_ERRORS):
            continue
        found = line
    return found[:400]


def describe_exit(result: RunResult, timeout_s: float | None) -> str:
    if result.timed_out:
        return f"timed out after {timeout_s:g} s" if timeout_s else "timed out"
    code = result.exit_code
    if code is None:
        return result.reason or "did not start"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    error = trainer_error_line(result.log_tail) if code else ""
    return f"{error} (exit code {code})" if error else f"exit code {code}"


#: where a resumed run's samples from past its resume step are moved, inside its run folder
DISCARDED_FOLDER = "discarded"


def set_aside_samples_after(sample_dir: Path | None, step: int, folder: Path) -> int:
    """Move the samples past ``step`` out of ``sample_dir`` into ``folder``; how many moved.

    A paused run's trainer goes on a little past its rung before it is stopped (it is stopped
    once its state is complete), and renders samples there; its resume trains those steps again
    from the state, so the earlier samples show a trajectory the run no longer has. Best effort."""
    moved = 0
    for sample in collect_samples(sample_dir):
        if sample.step is None or sample.step <= step:
            continue
        try:
            folder.mkdir(parents=True, exist_ok=True)
            sample.path.replace(folder / sample.path.name)
            moved += 1
        except OSError:
            log.warning("could not set aside %s", sample.path, exc_info=True)
    return moved


class RunExecutor:
    """Runs processes for one session and keeps the live view of the current one.

    It is given what it needs, not the session: the store and session name to record into,
    the settings (timeout, divergence stop, prompts), the trainer (post-run steps), this
    worker's id and GPU, and ``stop_mode`` — asked every few seconds, ``"now"`` stops the run;
    ``on_started`` is called once a run's process has started and is recorded (the store then
    stays as it is, but for the run's progress, until the run ends).
    """

    def __init__(self, store: Store, session_name: str, settings: SearchSettings, trainer: Any, *,
                 worker_id: str, gpu: str = "", stop_mode: Callable[[], str] = lambda: "",
                 on_started: Callable[[], None] = lambda: None) -> None:
        self.store = store
        self.session_name = session_name
        self.settings = settings
        self.trainer = trainer
        self.worker_id = worker_id
        self.gpu = gpu
        self.stop_mode = stop_mode
        self.on_started = on_started
        self._lock = threading.Lock()
        self._runner: Runner | None = None
        self.current: dict[str, Any] | None = None

    def stop_current(self, reason: str) -> None:
        with self._lock:
            runner = self._runner
        if runner is not None:
            runner.stop(reason)

    def kill_current(self) -> None:
        """Kill the current run's processes now, without their grace time."""
        with self._lock:
            runner = self._runner
        if runner is not None:
            runner.kill()

    def live(self) -> dict[str, Any] | None:
        """A copy of the current run's live state (step, loss so far, samples so far)."""
        with self._lock:
            return None if self.current is None else {**self.current, "loss": list(self.current["loss"]),
                                                      "samples": list(self.current["samples"])}

    def execute(self, run_id: int, spec: LaunchSpec, *, scored: bool, run_dir: Path | None = None,
                resume_step: int | None = None) -> str:
        """Run ``spec`` as run ``run_id`` to its end; returns the final run status.

        With ``spec.pause_step`` the run is recorded "paused" once the trainer's state for that
        step is complete (``Trainer.paused_state``): it exits by itself there, or is stopped
        then. ``resume_step``: this launch resumes the run's own state of that step in its run
        folder; its series continue the stored one with true steps (``bracket.session.launches``)."""
        store, settings = self.store, self.settings
        gpu = self.gpu
        if gpu:  # a worker pinned to one GPU (`bracket worker --gpu N`)
            spec = dataclasses.replace(spec, env={**spec.env, "CUDA_VISIBLE_DEVICES": gpu})
        run_dir = Path(run_dir or spec.cwd)
        log_path = run_dir / "logs" / "stdout.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        started_at = time.time()
        # the marker every process of the run inherits: recovery derives it again from the stored row
        runner = Runner(spec, log_path, timeout_s=settings.timeout_s,
                        marker=run_marker(self.session_name, run_id, started_at))
        launch = Launch.of(store.get_run(run_id) or {}, spec.logging_dir, spec.tfevents_glob, resume_step)
        if launch.resume_step or launch.launches_before:  # a run trained again from 0: none of its samples stand
            set_aside_samples_after(spec.sample_dir, launch.resume_step or -1, run_dir / DISCARDED_FOLDER)
        tags = tuple(spec.loss_tags) + tuple(spec.eval_loss_tags)
        if launch.gap():  # resumed from a state past the rung: the steps up to it, from the earlier launch's files
            earlier = ScalarReader(spec.logging_dir, spec.tfevents_glob, tags, metrics_db=spec.metrics_db)
            earlier.poll()
            launch.fill(earlier.loss_series(), [p for tag in spec.eval_loss_tags for p in earlier.series.get(tag, [])])
        reader = ScalarReader(spec.logging_dir, spec.tfevents_glob, tags, skip=launch.old_event_files,
                              metrics_db=spec.metrics_db)
        store.update_run(run_id, status="running", run_dir=str(run_dir), output_dir=str(spec.output_dir),
                         started_at=started_at, max_steps=spec.max_steps, worker=self.worker_id,
                         launches=launch.launches_before + 1, restart_steps=launch.restart_steps or None,
                         # a resume stands at its state's step (what it trained past it is in restart_steps)
                         **({"last_step": launch.resume_step} if launch.resume_step else {}))
        with self._lock:
            self._runner = runner
            # a resumed run starts from its stored series: what is persisted while it runs (and what a
            # worker killed meanwhile leaves) never drops the steps before the resume
            current: dict[str, Any] = {
                "run_id": run_id, "label": spec.label or "", "step": launch.resume_step or 0,
                "max_steps": spec.max_steps, "loss": launch.joined([]), "samples": [],
                "log_path": str(log_path), "started_at": time.time()}
            self.current = current
        state = {"persisted": 0.0, "sampled": 0.0, "paused_at": 0.0}
        monitor = DivergenceMonitor()

        def on_poll() -> None:
            if reader.poll():
                loss = launch.joined(reader.loss_series())
                launch.saw(len(launch.true_steps(reader.loss_series())), time.time() - started_at)
                with self._lock:
                    current["loss"] = loss
                    current["step"] = max((step for step, _ in loss), default=0)
                if scored and settings.divergence_stop:
                    reason = monitor.update(loss)
                    if reason:
                        runner.stop(f"diverged: {reason}")
            now = time.time()
            if (spec.pause_step and not state["paused_at"]
                    and self.trainer.paused_state(spec.output_dir, spec.pause_step)):
                state["paused_at"] = now  # complete: the trainer may exit by itself, else it is stopped
            with self._lock:
                past = int(current["step"] or 0) > int(spec.pause_step or 0)
            if state["paused_at"] and (past or now - state["paused_at"] > PAUSE_GRACE_SECONDS):
                runner.stop(f"paused at step {spec.pause_step}")  # training on past it: no grace
            if spec.sample_dir is not None and now - state["sampled"] > 2.0:
                state["sampled"] = now
                samples = [sample_record(s) for s in collect_samples(spec.sample_dir)]
                with self._lock:
                    current["samples"] = samples
            if now - state["persisted"] > PERSIST_SECONDS:
                state["persisted"] = now
                store.update_run(run_id, last_step=current["step"], loss=current["loss"])
                if self.stop_mode() == "now":  # "after-trial" lets this run finish
                    runner.stop("stopped by the user")

        try:
            pid = runner.start()
            if pid:
                store.update_run(run_id, pid=pid, pid_create_time=runner.create_time)
            self.on_started()
            result = runner.wait(on_poll=on_poll, poll_interval=0.25)
        except BaseException as error:
            self._abandon(run_id, runner, error)
            raise
        finally:
            with self._lock:
                self._runner = None
        launch.keep(run_dir, len(launch.true_steps(reader.loss_series())), result.duration_s)
        return self._record(run_id, spec, reader, result, scored=scored, log_path=log_path, launch=launch)

    def _abandon(self, run_id: int, runner: Runner, error: BaseException) -> None:
        """An error (a full disk, a failing store) cut the run short: kill its tree, mark it interrupted.

        Best effort: when the store cannot be written either, recovery marks the run on resume.
        """
        try:
            if runner.pid is not None:
                runner.stop(f"error: {type(error).__name__}")
                runner.wait()
        except Exception:  # the original error is the one to report
            log.warning("could not stop run %s after an error", run_id, exc_info=True)
        try:
            run = self.store.get_run(run_id) or {}
            resumed_from = run.get("pause_step")
            if resumed_from:  # a resume cut short: the paused state is still there
                self.store.update_run(run_id, **back_to_pause(run), finished_at=time.time(),
                                      failure_reason=f"stopped by an error in Bracket ({type(error).__name__}: "
                                      f"{error}); it resumes again from step {resumed_from}")
            else:
                self.store.update_run(
                    run_id, status="interrupted", pid=None, finished_at=time.time(),
                    failure_reason=f"stopped by an error in Bracket ({type(error).__name__}: {error}); "
                    "the slot runs again")
        except Exception:  # recovery marks it on resume
            log.warning("could not mark run %s interrupted", run_id, exc_info=True)
        with self._lock:
            self.current = None

    def _record(self, run_id: int, spec: LaunchSpec, reader: ScalarReader, result: RunResult, *, scored: bool,
                log_path: Path | None = None, launch: Launch | None = None) -> str:
        launch = launch or Launch()
        reader.poll()
        loss = launch.joined(reader.loss_series())
        eval_loss = launch.joined([point for tag in spec.eval_loss_tags for point in reader.series.get(tag, [])],
                                  eval_loss=True)
        samples = [sample_record(s) for s in collect_samples(spec.sample_dir)] if spec.sample_dir else []
        # the step it trained to, before a pause cuts its series: a run that trained past its rung is
        # charged what it trained (``RunRow.overshoot``), though it resumes from the rung's state
        trained_to = max((step for step, _ in loss), default=None)
        reason = ""
        pause = spec.pause_step or 0
        # a run that trained on to its end and exited 0 before the stop landed is a full run, neither
        # paused nor interrupted: what it trained is used (its config has a full-length run)
        whole = bool(spec.max_steps) and result.exit_code == 0 and (trained_to or 0) >= int(spec.max_steps or 0)
        paused = bool(pause) and not whole and self.trainer.paused_state(spec.output_dir, pause) is not None \
            and (result.exit_code == 0 or result.reason.startswith("paused"))
        if paused:  # the series end at the pause (a trainer stopped after it may have gone on a little)
            loss, eval_loss = up_to(loss, pause), up_to(eval_loss, pause)
            samples = [s for s in samples if s["step"] is None or s["step"] <= pause]
        if result.reason.startswith("diverged"):
            status, reason = "pruned", result.reason
        elif paused and scored and not loss:
            status, reason = "disqualified", "the trainer logged no loss (tfevents missing or empty)"
        elif paused:
            status = "paused"
        elif result.stopped and not result.timed_out and not whole and launch.resume_step:
            # a resume stopped (by the user): the run stays paused at the state it resumed from
            status, reason = "paused", f"{result.reason or 'stopped'}; it resumes again from step {launch.resume_step}"
            loss, eval_loss = up_to(loss, launch.resume_step), up_to(eval_loss, launch.resume_step)
            samples = [s for s in samples if s["step"] is None or s["step"] <= launch.resume_step]
        elif result.stopped and not result.timed_out and not whole:
            status, reason = "interrupted", result.reason or "stopped"
        elif result.timed_out or result.exit_code != 0:
            scan = read_log_tail(log_path, ERROR_SCAN_LINES) if log_path is not None else result.log_tail
            # the trainer's traceback may sit above the last 40 lines (the launcher's own comes last)
            status, reason = "failed", describe_exit(dataclasses.replace(result, log_tail=scan),
                                                     self.settings.timeout_s)
        elif (unfinished := self.trainer and self.trainer.unfinished_reason(spec.output_dir)):
            status, reason = "interrupted", unfinished
        elif scored and not loss:
            status, reason = "disqualified", "the trainer logged no loss (tfevents missing or empty)"
        elif scored and any(not math.isfinite(v) for _, v in loss):
            status, reason = "disqualified", next(f"loss became {v} at step {s}"
                                                  for s, v in loss if not math.isfinite(v))
        elif scored and spec.max_steps and max(step for step, _ in loss) < spec.max_steps - int(
                getattr(self.trainer, "last_loss_step_offset", 0)):
            # exit 0 short of the length, no pause: a trainer that took a state at (or past) its end
            status, reason = "failed", (f"the trainer exited at step {max(step for step, _ in loss)} of "
                                        f"{spec.max_steps} with no error and no pause; the run is not complete")
        else:
            status = "done"
        # the trainer may have made its output folders again after the run folder was deleted:
        # the log, opened at the launch and never made again, is the witness
        deleted = not Path(spec.cwd).exists() or (log_path is not None and not log_path.exists())
        if status != "done" and deleted:
            reason += f"; its run folder {spec.cwd} was deleted while it ran"
        self.store.update_run(
            run_id, status=status, exit_code=result.exit_code, failure_reason=reason,
            log_tail="\n".join(result.log_tail), finished_at=time.time(),
            duration_s=launch.duration_before + (result.duration_s or 0.0),
            loss=loss, eval_loss=eval_loss, samples=samples, pid=None,
            last_step=trained_to if status == "paused" else max((step for step, _ in loss), default=None),
            pause_step=(spec.pause_step if paused else launch.resume_step) if status == "paused" else None)
        with self._lock:
            self.current = None
        if status == "done":
            self._post_run(run_id, spec)
        return status

    def _post_run(self, run_id: int, spec: LaunchSpec) -> None:
        """Post-run steps (e.g. LLM generations); their failure is noted, not fatal."""
        run = self.store.get_run(run_id) or {}
        run_dir = Path(run.get("run_dir") or spec.cwd)
        commands = self.trainer.post_run_commands(run_dir=run_dir, launch=spec,
                                                  sample_prompts=self.settings.prompts() or None)
        for failure in self.run_steps(commands, run_dir / "logs", "post"):
            self.store.update_run(run_id, failure_reason=f"post-run step {failure}")
        if commands and spec.sample_dir:
            samples = [sample_record(s) for s in collect_samples(spec.sample_dir)]
            self.store.update_run(run_id, samples=samples)

    def run_steps(self, commands: Sequence[LaunchSpec], log_dir: Path, name: str) -> list[str]:
        """Run a run's extra steps one after the other (the generation after a run, or at its
        rung), each logged to ``<log_dir>/<name>-<i>.log`` and pinned to this worker's GPU, as the
        current process (a stop ends it); what failed, in words ([] when all went well)."""
        failures = []
        for index, step in enumerate(commands):
            if self.gpu:
                step = dataclasses.replace(step, env={**step.env, "CUDA_VISIBLE_DEVICES": self.gpu})
            runner = Runner(step, Path(log_dir) / f"{name}-{index}.log", timeout_s=self.settings.timeout_s)
            with self._lock:
                self._runner = runner
            try:
                result = runner.run()
            finally:
                with self._lock:
                    self._runner = None
            if result.exit_code != 0:
                failures.append(f"{step.label or index} failed: {describe_exit(result, None)}")
        return failures
