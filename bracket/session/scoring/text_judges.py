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

A server that fails leaves the run unscored by the LLM judge (its reason is stored); it never
fails the run or the search, and the key is never logged.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from bracket.judge.base import JudgeResult
from bracket.judge.llm_judge import LlmJudge
from bracket.judge.references import read_answers, write_heldout_prompts
from bracket.judge.server import JudgeServerConfig
from bracket.judge.task import score_task
from bracket.session.scoring.run_scores import judge_record
from bracket.session.store import Store

log = logging.getLogger(__name__)

#: earlier runs each new run is compared with by the LLM judge (each comparison: one request
#: per held-out prompt)
DEFAULT_PAIRS_PER_RUN = 2


def write_heldout(trainer: Any, run_dir: Path) -> Path | None:
    """Write the held-out prompts of a text-sample trainer's run (None for other trainers or
    dataset formats without references)."""
    split_file = getattr(trainer, "eval_split_file", None)
    if getattr(trainer, "sample_kind", "") != "text" or split_file is None:
        return None
    return write_heldout_prompts(split_file(Path(run_dir)), getattr(trainer, "dataset_format", "alpaca"), run_dir)


class TextJudges:
    """Task metrics now, and the LLM-as-judge on a background thread, for each finished LLM run;
    ``on_scored`` is called (in that thread) once the judge's record of a run is stored."""

    def __init__(self, store: Store, session: str, config: JudgeServerConfig | None, *,
                 pairs_per_run: int = DEFAULT_PAIRS_PER_RUN, rng: random.Random | None = None,
                 on_scored: Callable[[], None] | None = None) -> None:
        self.store, self.session, self.on_scored = store, session, on_scored
        self.judge = LlmJudge(config) if config is not None else None
        self.pairs_per_run = max(0, int(pairs_per_run))
        self._rng = rng or random.Random()
        self._pool: ThreadPoolExecutor | None = None
        self._futures: list[Future] = []

    def after_run(self, run_id: int) -> None:
        """Score a done run's held-out answers (task judge), then queue the LLM judge."""
        run = self.store.get_run(run_id)
        if run is None or not run.get("run_dir"):
            return
        answers = read_answers(Path(run["run_dir"]))
        if not answers:
            return  # no held-out prompts (completion format) or the generation step failed
        self._update(run_id, task=judge_record(score_task(answers)))
        if self.judge is not None:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bracket-llm-judge")
            self._futures.append(self._pool.submit(self._judge, run_id, answers))

    def _update(self, run_id: int, **records: Any) -> None:
        run = self.store.get_run(run_id) or {}
        judges = dict(run.get("judges") or {})
        judges.update(records)
        self.store.update_run(run_id, judges=judges)

    def _opponents(self, run_id: int) -> list[dict[str, Any]]:
        """Up to ``pairs_per_run`` earlier done runs of the session with held-out answers."""
        runs = [r for r in self.store.runs(self.session, with_series=False)
                if r["id"] != run_id and r.get("status") == "done" and r.get("kind") != "setup"
                and (r.get("judges") or {}).get("task")]
        self._rng.shuffle(runs)
        return runs[: self.pairs_per_run]

    def _judge(self, run_id: int, answers: list[dict[str, Any]]) -> None:
        assert self.judge is not None
        try:
            rubric = self.judge.score_answers(answers)
            pairs: list[dict[str, Any]] = []
            for other in self._opponents(run_id):
                theirs = read_answers(Path(other["run_dir"]))
                try:
                    pairs += self.judge.compare(run_id, answers, other["id"], theirs, rng=self._rng)
                except RuntimeError as error:
                    log.warning("LLM judge could not compare runs %s and %s: %s", run_id, other["id"], error)
                    break
            self._update(run_id, llm_judge=judge_record(rubric), llm_pairs=pairs)
        except Exception as error:  # noqa: BLE001 - a judge never fails the search
            log.warning("LLM judge failed on run %s: %s", run_id, self.judge.server.redact(str(error)))
            self._update(run_id, llm_judge=judge_record(JudgeResult.no_data(
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
