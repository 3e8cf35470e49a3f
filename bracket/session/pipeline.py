"""The run pipeline: one configuration trained with one seed, and a configuration finished.

Every scored run — baseline, curated, search, confirmation, finals, promotion — takes the
same path, :meth:`RunPipeline.train`: the config is validated against the session's
(narrowed) space *before* anything is recorded (a refused config leaves no pending run), a
run row is added, the trainer prepares its command in ``<session>/<stage folder>/<id>-<name>-s<seed>``,
the :class:`~bracket.session.process.execute.RunExecutor` runs and records it, and a finished image
or video run is queued for the VLM judge when one is configured and for the image judges
(``bracket.session.scoring.image_scorer``) when their models are (a text run: for the task
metrics and the LLM-as-judge, ``bracket.session.scoring.text_judges``); so is a run paused at
a rung of a halving search, for what it made at the pause step (:meth:`RunPipeline.judge_rung`,
:meth:`RunPipeline.wait_for_rung_verdicts`): an image or video run's samples, a text run's
held-out answers, which its generation step makes there from the paused adapter
(``Trainer.rung_commands``) when a text judge weighs in.

:meth:`RunPipeline.finish_config` closes a search config once all its seeds are spent: its
current mean score goes to the study (``SearchController.finish``; pruned when every run was
stopped early) and to the config row.

The pipeline never imports the session: it is given the pieces it uses, and the session's
``exclusive()`` section is what keeps two processes from training one session at once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bracket.session.control import RunControl
from bracket.session.create import SessionParts
from bracket.session.loop.rung_steps import launch_sample_every
from bracket.session.process import RunExecutor
from bracket.session.run_state import mark_run_folder, resumable_state, state_problem
from bracket.session.scoring import Scoreboard, VlmScorer
from bracket.session.scoring.image_scorer import ImageScorer
from bracket.session.scoring.rung_verdicts import wait_all
from bracket.session.scoring.text_judges import TextJudges, rung_folder, write_heldout
from bracket.session.snapshot import confirm_phase_label, phase_label
from bracket.session.store.schema import RUN_SPENT
from bracket.trainer.base import RunRequest

#: how long a halving search waits for the judge's verdicts at a rung before it promotes without them
RUNG_VERDICT_WAIT_S = 600.0

if TYPE_CHECKING:  # pragma: no cover - opening a session (status) imports no Optuna
    from bracket.search.controller import SearchController


class RunPipeline:
    """Trains configs of one session as runs, and finishes configs whose seeds are spent."""

    def __init__(self, parts: SessionParts, *, executor: RunExecutor, scoreboard: Scoreboard, control: RunControl,
                 controller: Callable[[], SearchController], worker_id: str, vlm: VlmScorer | None = None,
                 text_judges: TextJudges | None = None, image_judges: ImageScorer | None = None,
                 on_phase: Callable[[str], None] = lambda phase: None) -> None:
        self.parts = parts
        self.store = parts.store
        self.name = parts.name
        self.settings = parts.settings
        self.facts = parts.facts
        self.space = parts.space
        self.trainer = parts.trainer
        self.executor = executor
        self.scoreboard = scoreboard
        self.control = control
        #: the search controller (made on first use: it opens the study)
        self.controller = controller
        self.worker_id = worker_id
        self.vlm = vlm
        self.text_judges = text_judges
        self.image_judges = image_judges
        #: told what the worker does now ("search 3/12", "final: lr-2e-4", ...)
        self.on_phase = on_phase

    def train(self, config: dict[str, Any], seed_index: int, *, steps: int | None = None, seed: int | None = None,
              dataset: Path | None = None, run_id: int | None = None, **run_options: Any) -> str:
        """Train ``config`` with seed ``seed_index`` (seed ``base_seed + seed_index`` unless given);
        returns the run's final status. ``run_id`` names a run already reserved in the store
        (a confirmation run); ``run_options`` go to the trainer's ``prepare_run``."""
        settings = self.settings
        stage = config.get("stage", "search")
        if stage == "search" and seed_index >= settings.seeds:
            self.on_phase(confirm_phase_label(self))
        else:
            self.on_phase(phase_label(self, config) if stage == "search" else f"{stage}: {config['name']}")
        seed = settings.base_seed + seed_index if seed is None else seed
        steps = steps or settings.steps
        # validated against the session's (narrowed) space before any run is recorded, so a
        # refused config leaves no pending run behind
        trainer_config = self.trainer.config_from_dict(config["params"], self.space)
        if run_id is None:
            run_id = self.store.add_run(
                self.name, config_id=config["id"], kind=config["kind"], stage=stage,
                label=f"{config['name']} seed {seed}", seed=seed, seed_index=seed_index, params=config["params"],
                worker=self.worker_id, max_steps=steps)
        folder = "trials" if stage == "search" else stage
        run_dir = self.parts.folder / folder / f"{run_id:04d}-{config['name']}-s{seed_index}"
        return self._launch(run_id, run_dir, trainer_config, dataset=dataset, steps=steps, seed=seed, **run_options)

    def _launch(self, run_id: int, run_dir: Path, trainer_config: dict[str, Any], *, dataset: Path | None,
                steps: int, seed: int, resume_step: int | None = None, **run_options: Any) -> str:
        """Prepare and run one launch of run ``run_id`` in ``run_dir``; returns its final status."""
        settings = self.settings
        mark_run_folder(run_dir, self.name, run_id)  # a resume checks that a state is this run's own
        spec = self.trainer.prepare_run(RunRequest(
            run_dir=run_dir, knobs=trainer_config,
            dataset=dataset or Path(self.parts.fields.get("dataset", "")), max_steps=steps, seed=seed,
            sample_prompts=settings.prompts(),
            sample_every_n_steps=launch_sample_every(settings, self.trainer, steps), resume_step=resume_step,
            **run_options))
        write_heldout(self.trainer, run_dir)  # LLM runs: held-out prompts for the task judges
        status = self.executor.execute(run_id, spec, scored=True, run_dir=run_dir, resume_step=resume_step)
        if status == "done" and self.vlm is not None and self.trainer.sample_kind in ("image", "video"):
            self.vlm.submit(run_id)
        if status == "done" and self.image_judges is not None:
            self.image_judges.submit(run_id)
        if status == "paused":
            self.judge_rung(run_id)
        if status == "done" and self.text_judges is not None and self.trainer.sample_kind == "text":
            self.text_judges.after_run(run_id)
        return status

    def judge_rung(self, run_id: int) -> None:
        """Judge paused run ``run_id`` at its pause step (a verdict there already is kept): its
        samples queued for the VLM (a trainer of images or videos, a VLM configured), or its
        held-out answers made there and handed to the text judges (a text trainer)."""
        if self.vlm is not None and self.trainer.sample_kind in ("image", "video"):
            self.vlm.submit_rung(run_id)
        if self.image_judges is not None:
            self.image_judges.submit_rung(run_id)
        if self.text_judges is not None and self.trainer.sample_kind == "text":
            self._answer_rung(run_id)

    def _answer_rung(self, run_id: int) -> None:
        """Run the generation step of paused text run ``run_id`` from its paused adapter (only when
        a text judge weighs in: it costs GPU time) and let the text judges score its answers; a
        failing generation is kept as the reason it has no answers there, and the search goes on."""
        assert self.text_judges is not None
        run = self.store.get_run(run_id) or {}
        step = int(run.get("pause_step") or 0)
        if run.get("status") != "paused" or not step or self.control.stop_requested() \
                or not self.text_judges.needs_answers(run, step, self.settings.weights):
            return
        run_dir = Path(run["run_dir"])
        folder = rung_folder(run_dir, step)
        commands = self.trainer.rung_commands(run_dir=run_dir, output_dir=Path(run.get("output_dir") or run_dir),
                                              step=step, sample_dir=folder, sample_prompts=self.settings.prompts())
        if not commands:
            return
        self.on_phase(f"answering the held-out prompts at step {step}: {run.get('label') or run_id}")
        failures = self.executor.run_steps(commands, run_dir / "logs", f"rung-{step}")
        self.text_judges.judge_rung(run_id, step, folder, failure="; ".join(failures))

    def wait_for_rung_verdicts(self, timeout_s: float = RUNG_VERDICT_WAIT_S) -> bool:
        """Wait (at most ``timeout_s`` for all, and not past a stop) for the judges' queued rung
        verdicts, so a promotion is decided on them; whether they are all in (a late one counts
        once stored)."""
        scorers = [s for s in (self.vlm, self.text_judges, self.image_judges) if s is not None and s.rungs_pending()]
        if not scorers:
            return True
        self.on_phase("waiting for the judge model at the rung")
        return wait_all(scorers, timeout_s, stop=self.control.stop_requested)

    def drain_judges(self, timeout_s: float = 600) -> None:
        """At a search's end: wait for the judges' queued scoring (each at most ``timeout_s``), then
        stop their threads; the phase says what it waits for."""
        if self.vlm is not None:
            self.on_phase("waiting for the judge model")
            self.vlm.drain(timeout=timeout_s)
            if self.text_judges is not None:
                self.text_judges.drain(timeout=timeout_s)
        if self.image_judges is not None:
            self.on_phase("waiting for the image judges")
            self.image_judges.drain(timeout=timeout_s)

    def end_workers(self) -> None:
        """End the image judges' worker process, whatever ended the search (it is started again by a
        later job): a failed search leaves no process holding the judges' models."""
        if self.image_judges is not None:
            self.image_judges.worker.close()

    def resume(self, run_id: int, *, steps: int | None = None, stop_at_step: int | None = None,
               from_status: str = "paused", resume_from: Path | None = None, resume_step: int | None = None,
               claimed: bool = False, **run_options: Any) -> str | None:
        """Relaunch run ``run_id`` in its own run folder and row, to ``stop_at_step`` (None: to the
        full length, the same schedule and seed); returns its final status, or None when
        another worker claimed it first (``Store.claim_run``: ``from_status`` -> running, atomically;
        ``claimed``: this worker claimed it already). ``steps``: the length the run was asked for
        (``RunRequest.max_steps``; None: the row's ``max_steps``, the trainer's own count, which for
        an LLM trainer at an effective batch other than 8 is not the request's).

        A trainer that resumes (``resume_mode == "continue"``) goes on from the state the run paused
        with (or ``resume_from`` at ``resume_step``), its series continuing with true steps; one that
        cannot trains the config again from 0 in the same row (the series replaced)."""
        if not claimed and not self.store.claim_run(run_id, self.worker_id, from_status=from_status):
            return None
        run = self.store.get_run(run_id) or {}
        config = next((c for c in self.store.configs(self.name) if c["id"] == run.get("config_id")), None)
        stage = run.get("stage") or "search"
        self.on_phase(phase_label(self, config) if stage == "search" and config else f"{stage}: {run.get('label')}")
        steps, seed = int(steps or run.get("max_steps") or self.settings.steps), int(run["seed"])
        continues = getattr(self.trainer, "resume_mode", "restart") == "continue"
        later = self.state_past_pause(run, steps, stop_at_step) if continues and resume_from is None else None
        if later is not None:  # it trained past its rung and saved a state there: it goes on from it
            resume_from, resume_step = later
        elif continues and resume_from is None and run.get("pause_step"):
            resume_step = int(run["pause_step"])
            resume_from = self.trainer.paused_state(Path(run.get("output_dir") or ""), resume_step)
            problem = (f"its state of step {resume_step} is gone from {run.get('output_dir')}" if resume_from is None
                       else state_problem(resume_from, run_dir=Path(run["run_dir"]), step=resume_step,
                                          length=int(run.get("max_steps") or steps),  # the trainer's own count
                                          session=self.name, run_id=run_id))
            if problem:  # never another run's state, a damaged one or one at the end (bracket.session.run_state)
                self.store.update_run(run_id, status="failed", pause_step=None,
                                      failure_reason=f"{problem}; it cannot resume")
                return "failed"
        elif not continues and resume_from is None:
            resume_step = None  # a trainer that cannot resume trains the config again from 0, to the next rung
        trainer_config = self.trainer.config_from_dict(run.get("params") or (config or {}).get("params") or {},
                                                       self.space)
        return self._launch(run_id, Path(run["run_dir"]), trainer_config, dataset=run_options.pop("dataset", None),
                            steps=steps, seed=seed, resume_step=resume_step if resume_from else None,
                            resume_from=resume_from, stop_at_step=stop_at_step, **run_options)

    def state_past_pause(self, run: dict[str, Any], steps: int, stop_at_step: int | None) -> tuple[Path, int] | None:
        """The newest complete state paused run ``run`` saved *past* its pause step (it trained on
        before the stop landed, and the trainer saved at its save interval there), at or before the
        step it trained to and before the step this launch stops at: resumed from it, the steps it
        trained past its rung are training kept, not thrown away. None: none such (it resumes from its
        pause's state)."""
        pause, trained = int(run.get("pause_step") or 0), int(run.get("last_step") or 0)
        own = int(run.get("max_steps") or steps)
        limit = trained if stop_at_step is None else min(trained, int(stop_at_step) * own // int(steps) - 1)
        if not pause or limit <= pause or run.get("status") not in ("paused", "running"):
            return None
        found = resumable_state(self.trainer, Path(run.get("output_dir") or ""), run_dir=Path(run["run_dir"]),
                                length=own, session=self.name, run_id=int(run["id"]), at_most=limit)
        return found if found is not None and found[1] > pause else None

    def finish_config(self, config: dict[str, Any]) -> None:
        """Tell the study and the store a search config's value once all its seeds are spent."""
        all_runs = self.store.runs(self.name, with_series=False)  # one read serves both steps below
        runs = [r for r in all_runs if r["config_id"] == config["id"]]
        spent = [r for r in runs if r["status"] in RUN_SPENT]
        if len({r["seed_index"] for r in spent}) < self.settings.seeds:
            return
        value = self.scoreboard.config_values(runs, all_runs).get(config["id"])
        pruned = all(r["status"] == "pruned" for r in spent)
        from optuna.trial import TrialState  # here: opening a session (status) imports no Optuna

        state = TrialState.PRUNED if pruned else (TrialState.COMPLETE if value is not None else TrialState.FAIL)
        self.controller().finish(config["trial_number"], value, state)
        self.store.update_config(config["id"], status="done" if value is not None else "failed", value=value)
