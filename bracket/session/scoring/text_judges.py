"""The judges of LLM runs' answers: held-out prompts in, task metrics and LLM-judge verdicts out.

For a session whose trainer writes text samples:

1. before a run trains, :func:`write_heldout` puts the held-out prompts and references of the
   session's fixed eval split into the run folder (``bracket.judge.references``); the
   trainer's post-run generation step answers them beside the sample prompts;
2. when the run is done, :meth:`TextJudges.after_run` scores its answers with the task judge
   at once (cheap, no model: ``judges["task"]`` of the run record), and, when a judge model
   server is configured (the session's judge settings, as for the VLM judge), queues the
   LLM-as-judge on one background thread: the rubric score of every answer
   (``judges["llm_judge"]``) and pairwise verdicts against up to ``pairs_per_run`` earlier
   runs, in random order (``judges["llm_pairs"]``), which ``bracket.session.scoring.run_scores`` fits
   with the human judge's Bradley-Terry model.

A run paused at a rung of a halving search is judged the same way on the answers its
generation step made from the paused adapter (``RunPipeline.judge_rung``; into
:func:`rung_folder`, left out of the run's final answers): :meth:`TextJudges.judge_rung` keeps
the task judge's record and the LLM judge's (its pairwise verdicts against other runs' answers
at the same step) as ``judges["at_step"][step]``, which ``bracket.session.loop.rung_scores`` reads
(``bracket.session.scoring.rung_verdicts``). Only when a text judge weighs in
(:meth:`TextJudges.needs_answers`): the generation costs GPU time.

A server that fails leaves the run unscored by the LLM judge (its reason is stored); it never
fails the run or the search, and the key is never logged.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from bracket.judge.base import JudgeResult
from bracket.judge.llm_judge import LlmJudge
from bracket.judge.references import PROMPTS_FILE, read_answers, write_heldout_prompts
from bracket.judge.server import JudgeServerConfig
from bracket.judge.task import score_task
from bracket.session.scoring.run_scores import effective_weights, judge_record, verdicts_at
from bracket.session.scoring.rung_verdicts import RungVerdicts, store_at_step
from bracket.session.store import Store

log = logging.getLogger(__name__)

#: earlier runs each new run is compared with by the LLM judge (each comparison: one request
#: per held-out prompt)
DEFAULT_PAIRS_PER_RUN = 2
#: a run's answers at its rungs: ``<run_dir>/rungs/step-<step>/``
RUNGS_FOLDER = "rungs"


def rung_folder(run_dir: Path, step: int) -> Path:
    """Where the generation step of a run paused at ``step`` writes its answers."""
    return Path(run_dir) / RUNGS_FOLDER / f"step-{int(step)}"


def final_answers(run_dir: Path) -> list[dict[str, Any]]:
    """A finished run's held-out answers (those made at its rungs left out)."""
    return read_answers(Path(run_dir), leave_out=Path(run_dir) / RUNGS_FOLDER)


def write_heldout(trainer: Any, run_dir: Path) -> Path | None:
    """Write the held-out prompts of a text-sample trainer's run (None for other trainers or
    dataset formats without references)."""
    split_file = getattr(trainer, "eval_split_file", None)
    if getattr(trainer, "sample_kind", "") != "text" or split_file is None:
        return None
    return write_heldout_prompts(split_file(Path(run_dir)), getattr(trainer, "dataset_format", "alpaca"), run_dir)


class TextJudges:
    """Task metrics now, and the LLM-as-judge on a background thread, for each finished LLM run
    (and each run paused at a rung); ``on_scored`` is called (in that thread) once the judge's
    record of a run is stored."""

    def __init__(self, store: Store, session: str, config: JudgeServerConfig | None, *,
                 pairs_per_run: int = DEFAULT_PAIRS_PER_RUN, rng: random.Random | None = None,
                 on_scored: Callable[[], None] | None = None) -> None:
        self.store, self.session, self.on_scored = store, session, on_scored
        self.judge = LlmJudge(config) if config is not None else None
        self.pairs_per_run = max(0, int(pairs_per_run))
        self._rng = rng or random.Random()
        self._pool: ThreadPoolExecutor | None = None
        self._futures: list[Future] = []
        self._rungs = RungVerdicts()
        self._lock = threading.Lock()  # the run's judges are read, changed and written by two threads

    def after_run(self, run_id: int) -> None:
        """Score a done run's held-out answers (task judge), then queue the LLM judge."""
        run = self.store.get_run(run_id)
        if run is None or not run.get("run_dir"):
            return
        answers = final_answers(Path(run["run_dir"]))
        if not answers:
            return  # no held-out prompts (completion format) or the generation step failed
        self._update(run_id, task=judge_record(score_task(answers)))
        if self.judge is not None:
            self._futures.append(self._submit(self._judge, run_id, answers))

    # -- at a rung ----------------------------------------------------------------------------
    def needs_answers(self, run: Mapping[str, Any], step: int, weights: Mapping[str, float] | None) -> bool:
        """Whether paused ``run`` should answer its held-out prompts at ``step``: the session wrote
        them into its folder, the task judge or (with a judge server) the LLM judge weighs above
        0, and it has no task verdict for that step yet (one is kept: a session reopened)."""
        chosen = effective_weights(weights)
        wanted = chosen.get("task", 0.0) > 0 or (self.judge is not None and chosen.get("llm_judge", 0.0) > 0)
        return (wanted and bool(run.get("run_dir")) and (Path(run["run_dir"]) / PROMPTS_FILE).is_file()
                and (verdicts_at(run, step).get("task") or {}).get("score") is None)

    def judge_rung(self, run_id: int, step: int, folder: Path, failure: str = "") -> None:
        """Score the answers run ``run_id`` made at ``step`` in ``folder`` (the task judge now, the
        LLM judge queued), kept for that step; none there (``failure``: why) is kept as no data."""
        answers = read_answers(Path(folder))
        if not answers:
            reason = failure or f"no held-out answers at step {int(step)}"
            log.warning("run %s has no held-out answers at step %s: %s", run_id, step, reason)
            self._update(run_id, int(step), task=judge_record(JudgeResult.no_data(reason)))
            return
        self._update(run_id, int(step), task=judge_record(score_task(answers)))
        if self.judge is not None:
            future = self._submit(self._judge, run_id, answers, int(step))
            self._futures.append(future)
            self._rungs.add(future)

    def wait_rungs(self, timeout: float, stop: Callable[[], bool] = lambda: False) -> bool:
        """Wait (at most ``timeout`` seconds, not past ``stop()``) for the LLM judge's queued rung
        verdicts; whether they are all stored (:meth:`RungVerdicts.wait`)."""
        return self._rungs.wait(timeout, stop)

    def rungs_pending(self) -> bool:
        return self._rungs.pending()

    # -- the thread ---------------------------------------------------------------------------
    def _submit(self, *call: Any) -> Future:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bracket-llm-judge")
        return self._pool.submit(*call)

    def _update(self, run_id: int, step: int | None = None, **records: Any) -> None:
        """Keep ``records`` in run ``run_id``'s judges (for ``step`` when given)."""
        with self._lock:
            if step is not None:
                store_at_step(self.store, run_id, step, **records)
                return
            run = self.store.get_run(run_id) or {}
            judges = dict(run.get("judges") or {})
            judges.update(records)
            self.store.update_run(run_id, judges=judges)

    def _opponents(self, run_id: int, step: int | None = None) -> list[tuple[int, list[dict[str, Any]]]]:
        """Up to ``pairs_per_run`` other runs of the session with held-out answers, and those
        answers: done runs' final ones, or with ``step`` the ones made at that step."""
        runs = [r for r in self.store.runs(self.session, with_series=False)
                if r["id"] != run_id and r.get("kind") != "setup" and r.get("run_dir")]
        if step is None:
            runs = [r for r in runs if r.get("status") == "done" and (r.get("judges") or {}).get("task")]
        else:
            runs = [r for r in runs if (verdicts_at(r, step).get("task") or {}).get("score") is not None]
        self._rng.shuffle(runs)
        found = [(r["id"], final_answers(Path(r["run_dir"])) if step is None
                  else read_answers(rung_folder(Path(r["run_dir"]), step))) for r in runs]
        return [(other, answers) for other, answers in found if answers][: self.pairs_per_run]

    def _judge(self, run_id: int, answers: list[dict[str, Any]], step: int | None = None) -> None:
        assert self.judge is not None
        try:
            rubric = self.judge.score_answers(answers)
            pairs: list[dict[str, Any]] = []
            for other, theirs in self._opponents(run_id, step):
                try:
                    pairs += self.judge.compare(run_id, answers, other, theirs, rng=self._rng)
                except RuntimeError as error:
                    log.warning("LLM judge could not compare runs %s and %s: %s", run_id, other, error)
                    break
            self._update(run_id, step, llm_judge=judge_record(rubric), llm_pairs=pairs)
        except Exception as error:  # noqa: BLE001 - a judge never fails the search
            log.warning("LLM judge failed on run %s: %s", run_id, self.judge.server.redact(str(error)))
            self._update(run_id, step, llm_judge=judge_record(JudgeResult.no_data(
                self.judge.server.redact(f"LLM judge failed: {type(error).__name__}"))))
        if self.on_scored is not None:
            self.on_scored()

    def drain(self, timeout: float | None = None) -> None:
        """Wait for the queued judging (at the end of a session), then stop the thread."""
        wait(self._futures, timeout=timeout)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        self._futures = []
