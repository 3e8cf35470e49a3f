"""Typed rows: a run and a config as the search reads them, with their states as ``StrEnum``.

The store keeps plain strings (``"paused"``); a ``StrEnum`` member *is* its string, so a row
read back compares equal either way and nothing stored changes. :class:`RunRow` and
:class:`ConfigRow` are frozen copies of the columns the search decides on, with the facts
derived from them as methods — one definition each (where a run stands, the steps it trained,
whether it spends the budget). The full row (series, judges, samples) stays in ``row`` for the
scoring, which reads it as before. docs/ARCHITECTURE.md's glossary says what each word means.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypedDict

from bracket.errors import StoreError


class RunState(StrEnum):
    """A run's ``status`` column."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    PRUNED = "pruned"
    DISQUALIFIED = "disqualified"
    #: stopped at a rung of a halving search, its state saved to resume from
    PAUSED = "paused"
    #: left running by a process that died (or stopped now): its slot is trained again
    INTERRUPTED = "interrupted"


class ConfigState(StrEnum):
    """A config's ``status`` column."""

    RUNNING = "running"
    PAUSED = "paused"
    DONE = "done"
    FAILED = "failed"
    STOPPED = "stopped"


class RungState(StrEnum):
    """A config's ``rung_state`` column in a halving search."""

    RUNNING = "running"
    PROMOTED = "promoted"
    PAUSED = "paused"
    STOPPED = "stopped"
    FULL = "full"


#: a run training now or about to
ACTIVE = frozenset({RunState.PENDING, RunState.RUNNING})
#: a run over, its slot spent (``interrupted`` is not: the slot trains again)
SPENT = frozenset({RunState.DONE, RunState.FAILED, RunState.PRUNED, RunState.DISQUALIFIED})
#: a run that ends its config on the rungs: it cannot go on
ENDED = frozenset({RunState.FAILED, RunState.PRUNED, RunState.DISQUALIFIED})


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        raise StoreError(f"The session's store is damaged (a number column holds {value!r}).") from None


def _state(kind: type[StrEnum], value: Any, what: str) -> Any:
    try:
        return kind(value)
    except ValueError:
        raise StoreError(f"The session's store is damaged (a {what} state {value!r} is not one of "
                         f"{', '.join(kind)}).") from None


@dataclass(frozen=True)
class RunRow:
    """One run's row, typed; ``row`` is the stored mapping it came from (for the scoring)."""

    id: int
    config_id: int | None
    status: RunState
    stage: str = "search"
    kind: str = ""
    seed_index: int = 0
    last_step: int = 0
    pause_step: int = 0
    #: the run's own length in its trainer's steps (0: unknown)
    max_steps: int = 0
    #: steps earlier launches trained and a restart threw away (the budget is charged for them)
    restart_steps: int = 0
    launches: int = 0
    worker: str = ""
    run_dir: str = ""
    row: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> "RunRow":
        return cls(id=int(row["id"]), config_id=row.get("config_id"), status=_state(RunState, row["status"], "run"),
                   stage=str(row.get("stage") or "search"), kind=str(row.get("kind") or ""),
                   seed_index=_int(row.get("seed_index")), last_step=_int(row.get("last_step")),
                   pause_step=_int(row.get("pause_step")), max_steps=_int(row.get("max_steps")),
                   restart_steps=_int(row.get("restart_steps")), launches=_int(row.get("launches")),
                   worker=str(row.get("worker") or ""), run_dir=str(row.get("run_dir") or ""), row=row)

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    def own_steps(self) -> int | None:
        """The run's own length (its trainer's steps); None when unknown."""
        return self.max_steps or None

    def spends_budget(self) -> bool:
        """Counts against a run budget: spent, or paused at a rung or resuming from one."""
        return self.status in SPENT or (bool(self.pause_step) and (self.status is RunState.PAUSED or self.active))

    def reached_step(self) -> int:
        """The step up to which the run has trained and been recorded: a finished run's last step,
        a paused (or resuming) one's pause step, else 0."""
        if self.status is RunState.DONE:
            return self.last_step
        if self.status is RunState.PAUSED or self.active:
            return self.pause_step
        return 0

    def trained_steps(self) -> int:
        """Every step the run's launches trained, in its own steps: where it stands (a paused run's
        pause step, a finished one's last) plus what a restart threw away. A restart in flight stands
        at its ``last_step``: its ``pause_step`` is the launch's it threw away."""
        if self.restart_steps and self.active:
            return self.restart_steps + self.last_step
        return self.restart_steps + max(self.last_step, self.pause_step)

    def charged(self) -> bool:
        """GPU time of it is charged to a halving budget: a launch of it trained (whatever became of
        it: kept, paused, failed, thrown away by a restart or lost with a killed process) or trains now."""
        return self.launches > 0 or self.active

    def steps_left_at_most(self, full_steps: int) -> int:
        """The steps (its own) a run in flight may still train: to its own end, whatever step it was
        asked to stop at (a trainer may race past its rung before the stop lands); 0 when not in flight."""
        if not self.active:
            return 0
        standing = self.trained_steps() - self.restart_steps
        return max(0, (self.max_steps or int(full_steps)) - standing)

    def overshoot(self) -> int:
        """The steps a paused run trained past its pause step before its stop landed (its own steps): charged
        (:meth:`trained_steps`) and, once it resumes from the pause, charged as thrown away."""
        return max(0, self.last_step - self.pause_step) if self.status is RunState.PAUSED and self.pause_step else 0

    def in_session_steps(self, steps: float, full_steps: int) -> float:
        """``steps`` of this run's own in the session's steps (a run of ``max_steps`` is ``full_steps``)."""
        return steps * int(full_steps) / (self.max_steps or int(full_steps))


@dataclass(frozen=True)
class SeedRuns:
    """A config's runs of its search seeds (a confirmation round's left out) as a decision read them:
    run id -> what a run's place on the rungs is derived from (status, pause step, last step,
    launches). A write guarded by it (``Store.update_config``'s ``runs_as``) lands only while the
    runs are still so: a config's state written from an older view never undoes what another worker
    did with its runs since (claimed one to resume it, trained it on, recorded it)."""

    config_id: int
    seeds: int
    marks: Mapping[int, tuple[str, int, int, int]]

    @classmethod
    def of(cls, runs: Iterable[RunRow], config_id: int, seeds: int) -> "SeedRuns":
        return cls(config_id, seeds, {r.id: (str(r.status), r.pause_step, r.last_step, r.launches) for r in runs
                                      if r.config_id == config_id and r.stage == "search" and r.seed_index < seeds})

    def holds(self, rows: Iterable[Mapping[str, Any]]) -> bool:
        """Whether ``rows`` (the store's runs of the config, read now) are still the runs read."""
        return SeedRuns.of((RunRow.of(r) for r in rows), self.config_id, self.seeds).marks == self.marks


@dataclass(frozen=True)
class ConfigRow:
    """One config's row, typed; ``row`` is the stored mapping it came from."""

    id: int
    status: ConfigState
    trial_number: int = 0
    kind: str = ""
    stage: str = "search"
    name: str = ""
    worker: str = ""
    rung: int | None = None
    rung_state: RungState | None = None
    rung_note: str = ""
    row: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> "ConfigRow":
        rung_state = row.get("rung_state")
        return cls(id=int(row["id"]), status=_state(ConfigState, row["status"], "config"),
                   trial_number=_int(row.get("trial_number")),
                   kind=str(row.get("kind") or ""), stage=str(row.get("stage") or "search"),
                   name=str(row.get("name") or ""), worker=str(row.get("worker") or ""),
                   rung=None if row.get("rung") is None else _int(row["rung"]),
                   rung_state=_state(RungState, rung_state, "rung") if rung_state else None,
                   rung_note=str(row.get("rung_note") or ""), row=row)

    @property
    def open(self) -> bool:
        """Still tried: training now or waiting at a rung."""
        return self.status in (ConfigState.RUNNING, ConfigState.PAUSED)


class RunUpdate(TypedDict, total=False):
    """The keywords ``Store.update_run`` takes (a run's writable columns; JSON ones by their plain name)."""

    status: str
    exit_code: int | None
    failure_reason: str
    log_tail: str
    pid: int | None
    pid_create_time: float | None
    worker: str
    label: str
    params: Mapping[str, Any]
    run_dir: str
    output_dir: str
    max_steps: int | None
    last_step: int | None
    started_at: float | None
    finished_at: float | None
    duration_s: float | None
    judges: Mapping[str, Any]
    loss: Sequence[Any]
    eval_loss: Sequence[Any]
    samples: Sequence[Any]
    launches: int | None
    pause_step: int | None
    restart_steps: int | None


class ConfigUpdate(TypedDict, total=False):
    """The keywords ``Store.update_config`` takes."""

    status: str
    value: float | None
    worker: str
    name: str
    params: Mapping[str, Any]
    rung: int | None
    rung_state: str | None
    rung_note: str | None


class SessionUpdate(TypedDict, total=False):
    """The keywords ``Store.update_session`` takes."""

    status: str
    stop_requested: str
    notes: Sequence[str]
    settings: Mapping[str, Any]
    fields: Mapping[str, str]
    study_name: str


def checked(update: type, values: Mapping[str, Any], what: str) -> Mapping[str, Any]:
    """``values`` when every key is one ``update`` (a TypedDict above) names, else a ``TypeError`` as
    Python gives for an unexpected keyword: a typo never becomes a silently ignored or a new column."""
    unknown = sorted(set(values) - set(update.__annotations__))
    if unknown:
        raise TypeError(f"{what}() got an unexpected keyword argument {unknown[0]!r}")
    return values
