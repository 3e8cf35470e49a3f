"""Per-run loss summaries kept across processes, so a cold read scores no series.

Scoring a run needs its loss series only for two numbers that never change once the run
has ended: the loss judge's per-run summary (``bracket.judge.loss.loss_summary``: final
smoothed loss, late slope, final validation loss, or why it was disqualified) and the loss
at each step the run left samples (``bracket.session.scoring.best_step.loss_by_step``, for the best
step). Reading and decoding 2000 series and summarising them takes seconds; ``status``, the
Results tab and a restarted app each did it again. :class:`KeptSummaries` keeps both per
finished run in ``<session>/views/run_summaries.json``, so every later process (and every
later read in this one) reads no series of a run it has summarised.

* **Keyed per run** on what changes when a run's series could: its ``finished_at``, status
  and last step (the executor writes the series with them, ``bracket.session.process.execute``),
  whether the validation loss was used, and :data:`FORMAT` (bumped when a summary's
  computation changes). A run that ends again, moves its last step or changes status is
  summarised again from its series; the cross-run parts (normalisation, ratings,
  comparisons, the VLM, weights) are never kept here: they are computed on every read.
* **Only facts of one run** are kept, so the standings (``bracket.standings``) stay the one
  computation of the answer; they are fed these summaries instead of the series.
* The file is plain JSON, written atomically when something new was summarised; a
  damaged or foreign file is ignored; a read-only folder is read, never written.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bracket.judge.base import JudgeResult
from bracket.session.scoring.best_step import loss_by_step, sampled_steps
from bracket.session.scoring.run_scores import SummaryCache, judge_record, stored_judge

#: bump when what a summary holds, or how it is computed, changes
FORMAT = 1
SUMMARY_FILE = Path("views") / "run_summaries.json"


class KeptSummaries(SummaryCache):
    """A :class:`~bracket.session.scoring.run_scores.SummaryCache` kept in a file between processes,
    holding each finished run's step losses (``step_losses``) beside its loss summary."""

    def __init__(self, path: Path | None = None, *, writable: bool = True) -> None:
        super().__init__()
        self.path = path
        self.writable = writable and path is not None
        self._kept: dict[str, dict[str, Any]] | None = None  # run id (text) -> entry; loaded on first use
        self._dirty = False
        self._lock = threading.Lock()

    # -- what a run's entry is kept under ------------------------------------------------
    def _key(self, run: Mapping[str, Any]) -> list[Any] | None:
        if run.get("finished_at") is None:
            return None
        return [FORMAT, run["finished_at"], run.get("status"), run.get("last_step"), self.use_validation]

    def _entries(self) -> dict[str, dict[str, Any]]:
        if self._kept is None:
            kept: dict[str, dict[str, Any]] = {}
            if self.path is not None:
                try:
                    data = json.loads(self.path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    data = None
                if isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("runs"), dict):
                    kept = data["runs"]
            self._kept = kept
        return self._kept

    def _entry(self, run: Mapping[str, Any]) -> dict[str, Any] | None:
        key = self._key(run)
        entry = self._entries().get(str(run["id"])) if key is not None else None
        return entry if isinstance(entry, dict) and entry.get("key") == key else None

    # -- SummaryCache ------------------------------------------------------------------------
    def has(self, run: Mapping[str, Any]) -> bool:
        with self._lock:
            return self._entry(run) is not None

    def loss_summary(self, run: Mapping[str, Any]) -> JudgeResult:
        with self._lock:
            entry = self._entry(run)
        if entry is not None:
            return stored_judge(entry["summary"]) or JudgeResult.no_data("not normalised yet")
        summary = super().loss_summary(run)
        self._remember(run, summary)
        return summary

    # -- step losses (the best step) --------------------------------------------------------
    def step_losses(self, run: Mapping[str, Any], steps: Sequence[int]) -> dict[str, Any] | None:
        """What ``loss_by_step`` needs of a run at ``steps``, kept (see ``bracket.session.scoring.best_step``),
        or None when it is not kept or was kept for other steps."""
        with self._lock:
            entry = self._entry(run)
        if entry is None or "training" not in entry or not set(steps) <= set(entry["at"]):
            return None
        return {"validation": [tuple(p) for p in entry["validation"]],
                "training": [tuple(p) for p in entry["training"]]}

    def remember(self, run: Mapping[str, Any]) -> None:
        """Keep what ``run`` (a finished run with its ``loss`` and ``eval_loss`` series) gives."""
        if "loss" in run and self._key(run) is not None:
            self._remember(run, None)

    def _remember(self, run: Mapping[str, Any], summary: JudgeResult | None) -> None:
        key = self._key(run)
        if key is None or "loss" not in run:
            return
        with self._lock:
            entry = self._entry(run) or {"key": key}
        if "summary" not in entry:
            if summary is None:
                summary = super().loss_summary(run)
            entry["summary"] = judge_record(summary)
        if "training" not in entry and run.get("status") == "done":
            at = sampled_steps(run)
            table, basis = loss_by_step(run, at)
            training, _ = loss_by_step(run, at, validation=False)
            entry.update(at=at, validation=sorted(table.items()) if basis == "validation" else [],
                         training=sorted(training.items()))
        with self._lock:
            self._entries()[str(run["id"])] = entry
            self._dirty = True

    def save(self) -> None:
        """Write the kept summaries when something new was summarised (never in a read-only folder)."""
        with self._lock:
            if not (self._dirty and self.writable and self.path is not None):
                return
            data = json.dumps({"format": FORMAT, "runs": self._entries()})
            self._dirty = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            partial.write_text(data, encoding="utf-8")
            os.replace(partial, self.path)
        except OSError:  # a read-only folder, a full disk: scores stay right, only not faster next time
            pass
