"""The read model of a search: its configs, runs, rung scores, places and launch cost, as plain data.

:meth:`SearchView.build` is pure: it takes the store's rows (and the scoring's inputs) and
returns a frozen view; nothing in it trains, writes or builds a loop. Every reader of a
search's state asks it: the loop's scheduler (``bracket.session.scheduling``) decides on it,
the budget (``bracket.session.loop.budget``) counts on it, the sampler's history (a halving search's
values) and the app's rung views (``bracket.app.rung_grid``), the snapshot (``status``, the
report) read it.

``bracket.session.loop.search_reading`` reads one for a session from its store (now, or once per
store change).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bracket.search.halving import Parked, cost
from bracket.session.store.rows import ConfigRow, ConfigState, RunRow, RunState


@dataclass(frozen=True)
class RungScores:
    """Every config's scores at the rungs it reached but the last, keyed ``(config_id, rung)``
    (``rung_scores.rung_scores``)."""

    #: the combined score's mean over its seeds (lower is better): promotions, places, notes
    scores: dict[tuple[int, int], float]
    #: what the sampler sees there (``sampler_values`` of the runs cut at the rung); equal to
    #: ``scores`` while nobody judged a run at that rung
    seen: dict[tuple[int, int], float]
    #: the configs with a run judged (rated, or chosen blind) at some rung
    judged: frozenset[int]


@dataclass(frozen=True)
class SearchView:
    """One search at one moment: its search-stage configs and runs, typed; with halving its rungs,
    each config's place and score at each rung; ``launch``: a launch's start-up in the session's
    steps (the settings' share, else measured from the launches, 0 until measured)."""

    configs: tuple[ConfigRow, ...]
    runs: tuple[RunRow, ...]
    seeds: int
    full_steps: int
    #: ``bracket.session.loop.rung_scores.StepRungs`` of a halving search; None without halving
    rungs: Any = None
    scores: Mapping[tuple[int, int], float] = field(default_factory=dict)
    places: Mapping[int, Parked] = field(default_factory=dict)
    launch: float = 0.0
    #: what the sampler sees of each config at each rung (``rung_scores.RungScores.seen``: the
    #: person's verdicts and their predictions once a run there is judged); ``scores`` when empty
    seen: Mapping[tuple[int, int], float] = field(default_factory=dict)
    #: the configs with a run judged at some rung
    judged: frozenset[int] = frozenset()

    # -- building ----------------------------------------------------------------------------
    @classmethod
    def build(cls, configs: Sequence[Mapping[str, Any]], runs: Sequence[Mapping[str, Any]], *, seeds: int,
              full_steps: int, rungs: Any = None,
              scores: RungScores | Mapping[tuple[int, int], float] | None = None,
              launch: float = 0.0) -> "SearchView":
        """The view of ``configs`` and ``runs`` (every stage: the search's are kept); with ``rungs``
        each config's place, with ``scores`` (``rung_scores.rung_scores`` of the same rows, or
        its ``scores`` mapping alone) its score at each rung and what the sampler sees there."""
        config_rows = tuple(ConfigRow.of(c) for c in configs if (c.get("stage") or "search") == "search")
        run_rows = tuple(RunRow.of(r) for r in runs if (r.get("stage") or "search") == "search")
        if scores is None or isinstance(scores, Mapping):
            combined, seen, judged = dict(scores or {}), dict(scores or {}), frozenset[int]()
        else:
            combined, seen, judged = dict(scores.scores), dict(scores.seen), frozenset(scores.judged)
        view = cls(config_rows, run_rows, int(seeds), int(full_steps), rungs, combined, {}, float(launch), seen, judged)
        if rungs is None:
            return view
        return replace(view, places={c.id: view.place(c.id) for c in config_rows})

    # -- reading -----------------------------------------------------------------------------
    def config(self, config_id: int) -> ConfigRow:
        return next(c for c in self.configs if c.id == config_id)

    def seed_runs(self, config_id: int) -> dict[int, RunRow]:
        """Seed index -> the newest search run of that seed of ``config_id`` (interrupted runs and
        confirmation runs, whose seed index is past the seeds, left out)."""
        out: dict[int, RunRow] = {}
        for run in self.runs:
            if run.config_id == config_id and run.seed_index < self.seeds and run.status is not RunState.INTERRUPTED:
                out[run.seed_index] = run
        return out

    def place(self, config_id: int) -> Parked:
        """Where a config stands on the rungs: the lowest rung all its seeds reached (-1: not all
        seeds have a run), whether one trains now, whether one ended (failed, diverged)."""
        by_seed = self.seed_runs(config_id)
        rungs = self.rungs
        reached = min((rungs.rung_of(r.reached_step(), r.own_steps())
                       if r.status in (RunState.DONE, RunState.PAUSED) else -1
                       for r in by_seed.values()), default=-1) if rungs is not None else -1
        if len(by_seed) < self.seeds:
            reached = -1
        return Parked(config_id, reached, running=any(r.active for r in by_seed.values()),
                      finished=any(r.ended for r in by_seed.values()))

    def active(self) -> bool:
        """A search run trains now (on any worker)."""
        return any(r.active for r in self.runs if r.kind != "setup")

    def open_configs(self, state: ConfigState) -> list[ConfigRow]:
        return [c for c in self.configs if c.status is state]

    # -- what the budget has bought ----------------------------------------------------------
    def spent_runs(self) -> int:
        """Search runs that count against a run budget (``RunRow.spends_budget``)."""
        return sum(1 for r in self.runs if r.kind != "setup" and r.spends_budget())

    def trained(self) -> list[RunRow]:
        """The search runs some launch trained and that stand (setup commands left out; an
        ``interrupted`` run, whose worker died before it paused or ended, does not spend budget:
        its slot trains again, ``bracket.session.recovery``)."""
        return [r for r in self.runs if r.kind != "setup" and r.launches and r.status is not RunState.INTERRUPTED]

    def overshoot_steps(self) -> float:
        """The steps (the session's) paused runs trained past their rungs before the stop landed: measured,
        and charged in :meth:`full_runs_spent` with every other step trained."""
        return sum(r.in_session_steps(r.overshoot(), self.full_steps) for r in self.trained())

    def full_runs_spent(self) -> float:
        """The compute the search's runs used, in full runs (``halving.cost``): every step the
        standing runs trained, in the session's steps, restarts' thrown-away steps included, plus a
        start-up per launch. What a killed process trained is lost with it and not charged — an
        interrupted run, the part of a resume cut short (``launches.back_to_pause``) — just as the
        scheduler's decisions (``Halving.committed``) do not count it: the two agree, so the plan
        and the budget's count never part."""
        trained = self.trained()
        steps = sum(r.in_session_steps(r.trained_steps(), self.full_steps) for r in trained)
        return cost(steps, sum(r.launches for r in trained), self.full_steps, launch_steps=self.launch)
