"""A run's launches: what a relaunch of a paused run keeps of the earlier ones.

A run paused at a rung (``bracket.search.halving``) is resumed in the same run folder and
recorded in the same run row, so its loss series must go on with *true* steps. The new
launch's event files are read alone (the earlier launches' files stay in the folder, and a
trainer that counts its steps from 1 again after a resume — sd-scripts without
``--skip_until_initial_step`` — would otherwise overwrite them); its steps are moved on by the
resumed step when they start again at 1, and appended to the stored points up to that step.
A launch that trains again from 0 (``resume_mode == "restart"``) replaces the series, and the
steps the earlier launches trained go to the row's ``restart_steps`` (spent all the same: the
halving budget counts them, ``rung_scores.full_runs_spent``).

Each launch also notes, in ``<run_dir>/logs/launches.jsonl``, when its first steps were
logged and how long it ran, from which :func:`startup_steps` measures a session's start-up
per launch (model load, caches) in steps: what a halving search's budget charges a launch.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Series = list[tuple[int, float]]
LAUNCHES_FILE = "launches.jsonl"
#: a launch counts for the start-up estimate when it trained at least this many steps after its first
MIN_TIMED_STEPS = 3


def _points(values: Any) -> Series:
    return [(int(step), float(value)) for step, value in (values or [])]


@dataclass
class Launch:
    """This launch of run ``run``: the earlier launches' points it continues and their files."""

    #: the step the resumed state holds; None: the run starts at 0 (a first launch, or a restart)
    resume_step: int | None = None
    #: the stored series up to ``resume_step`` (empty without a resume)
    loss_before: Series = field(default_factory=list)
    eval_before: Series = field(default_factory=list)
    #: event files already there before this launch: never read again
    old_event_files: tuple[Path, ...] = ()
    #: launches before this one
    launches_before: int = 0
    #: seconds the earlier launches trained
    duration_before: float = 0.0
    #: the steps the earlier launches trained that are thrown away, this launch's restart
    #: included (the row's ``restart_steps``: a launch from 0 after others throws theirs away)
    restart_steps: int = 0

    #: (steps logged, seconds since the launch) when its first steps were seen
    first_seen: tuple[int, float] | None = None

    def saw(self, steps: int, seconds: float) -> None:
        """The reader found this launch's first ``steps`` steps ``seconds`` after it started."""
        if self.first_seen is None and steps > 0:
            self.first_seen = (steps, seconds)

    def keep(self, run_dir: Path, steps: int, seconds: float | None) -> None:
        """Note this launch's timing in ``<run_dir>/logs/launches.jsonl`` (best effort)."""
        if self.first_seen is None or not seconds:
            return
        record = {"first_steps": self.first_seen[0], "first_s": round(self.first_seen[1], 3), "steps": steps,
                  "seconds": round(float(seconds), 3)}
        try:
            with (Path(run_dir) / "logs" / LAUNCHES_FILE).open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
        except OSError:
            pass

    @classmethod
    def of(cls, run: Mapping[str, Any], logging_dir: Path | None, tfevents_glob: str,
           resume_step: int | None) -> "Launch":
        old = tuple(sorted(p for p in Path(logging_dir).glob(tfevents_glob) if p.is_file())) \
            if logging_dir is not None and Path(logging_dir).is_dir() else ()
        launches = int(run.get("launches") or 0)
        thrown = int(run.get("restart_steps") or 0)
        if not resume_step:
            trained = max(int(run.get("last_step") or 0), int(run.get("pause_step") or 0)) if launches else 0
            return cls(old_event_files=old, launches_before=launches, restart_steps=thrown + trained)
        keep = int(resume_step)
        # what it trained past the state it resumes from is trained again: charged as thrown away
        thrown += max(0, int(run.get("last_step") or 0) - keep) if launches else 0
        return cls(resume_step=keep, old_event_files=old, launches_before=launches,
                   loss_before=[p for p in _points(run.get("loss")) if p[0] <= keep],
                   eval_before=[p for p in _points(run.get("eval_loss")) if p[0] <= keep],
                   duration_before=float(run.get("duration_s") or 0.0), restart_steps=thrown)

    def gap(self) -> bool:
        """This launch resumes a state past the stored series' end (a paused run's series end at its
        rung, and it trained on and saved a later state before the stop landed): :meth:`fill` it."""
        return bool(self.resume_step) and max((s for s, _ in self.loss_before), default=0) < int(self.resume_step or 0)

    def fill(self, points: Sequence[tuple[int, float]], eval_points: Sequence[tuple[int, float]] = ()) -> None:
        """Join the earlier launches' points between the stored series' end and the resumed step
        (read back from their event files) to the series this launch continues."""
        keep = int(self.resume_step or 0)
        for before, more in ((self.loss_before, points), (self.eval_before, eval_points)):
            end = max((s for s, _ in before), default=0)
            before.extend(sorted({s: v for s, v in _points(more) if end < s <= keep}.items()))

    def true_steps(self, points: Sequence[tuple[int, float]]) -> Series:
        """This launch's points at their true steps: moved on by the resumed step when the
        trainer counted from 1 again, and only those after it."""
        points = _points(points)
        if not self.resume_step or not points:
            return points
        offset = self.resume_step if min(step for step, _ in points) <= self.resume_step else 0
        return [(step + offset, value) for step, value in points if step + offset > self.resume_step]

    def joined(self, points: Sequence[tuple[int, float]], *, eval_loss: bool = False) -> Series:
        """The run's whole series: the earlier launches' up to the resumed step, then this one's."""
        return (self.eval_before if eval_loss else self.loss_before) + self.true_steps(points)


def up_to(points: Sequence[tuple[int, float]], step: int) -> Series:
    """The points at or before ``step`` (a paused run's series ends at its pause)."""
    return [(s, v) for s, v in _points(points) if s <= step]


def back_to_pause(run: Mapping[str, Any]) -> dict[str, Any]:
    """The values that put ``run``, a resume cut short (its process killed, its worker gone), back
    at the state it resumed from: paused at its ``pause_step``, its series up to that step. What the
    cut launch trained (as far as its row recorded) is lost with it and trained again, but it was
    trained: it goes to ``restart_steps``, so the row is still charged every step (``RunRow.trained_steps``
    before and after are equal)."""
    step = int(run["pause_step"])
    thrown = max(0, int(run.get("restart_steps") or 0) + int(run.get("last_step") or 0) - step)
    return {"status": "paused", "pid": None, "last_step": step, "loss": up_to(run.get("loss") or [], step),
            "eval_loss": up_to(run.get("eval_loss") or [], step), "restart_steps": thrown or None}


def _startup_ratios(run_dir: Path | str) -> list[float]:
    """Each timed launch's start-up in its own run's steps (``launches.jsonl`` of ``run_dir``)."""
    try:
        lines = (Path(run_dir) / "logs" / LAUNCHES_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    ratios: list[float] = []
    for line in lines:
        try:
            record = json.loads(line)
            timed = int(record["steps"]) - int(record["first_steps"])
            step_s = (float(record["seconds"]) - float(record["first_s"])) / timed if timed > 0 else 0.0
            startup = float(record["first_s"]) - int(record["first_steps"]) * step_s
        except (ValueError, KeyError, TypeError):
            continue
        if timed >= MIN_TIMED_STEPS and step_s > 0:
            ratios.append(max(0.0, startup / step_s))
    return ratios


def startup_steps(run_dirs: Sequence[Path | str], scales: Sequence[float] | None = None) -> float:
    """A launch's start-up (from its start to its first step, less that step's own time) in
    steps of training, the median over the launches noted in ``run_dirs``; 0 until measured.
    ``scales``: per run, a step of its own in the steps it is counted in (1 without)."""
    ratios = [ratio * (scales[i] if scales else 1.0)
              for i, run_dir in enumerate(run_dirs) for ratio in _startup_ratios(run_dir)]
    return statistics.median(ratios) if ratios else 0.0


def launch_steps(runs: Sequence[Mapping[str, Any]], full_steps: int, share: float | None) -> float:
    """A launch's start-up in steps of training, as a halving search counts it against its
    budget: ``share`` of ``full_steps`` where the settings fix it (``SearchSettings.launch_share``),
    else measured over the launches of ``runs`` (:func:`startup_steps`; 0 until measured), each
    in the session's steps (a run of ``max_steps`` steps of its own is ``full_steps`` of them)."""
    if share is not None:
        return float(share) * int(full_steps)
    timed = [r for r in runs if r.get("run_dir")]
    return startup_steps([r["run_dir"] for r in timed],
                         [int(full_steps) / int(r.get("max_steps") or full_steps) for r in timed])
