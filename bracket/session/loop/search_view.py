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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from bracket.search.halving import Parked, cost
from bracket.session.store.rows import ConfigRow, ConfigState, RunRow, RunState, SeedRuns


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
    #: of each config judged at a rung, its score there from the measured parts other than the
    #: person's (``sampler_values.config_measured``), keyed as ``seen`` (where ``seen`` is its verdict)
    measured: dict[tuple[int, int], float] = field(default_factory=dict)


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
    #: ``RungScores.measured``: a judged config's measured score at the rungs it was judged at
    judged_measured: Mapping[tuple[int, int], float] = field(default_factory=dict)

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
            combined, seen, judged, measured = dict(scores or {}), dict(scores or {}), frozenset[int](), {}
        else:
            combined, seen, judged = dict(scores.scores), dict(scores.seen), frozenset(scores.judged)
            measured = dict(scores.measured)
        view = cls(config_rows, run_rows, int(seeds), int(full_steps), rungs, combined, {}, float(launch), seen, judged,
                   measured)
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

    def runs_as(self, config_id: int) -> SeedRuns:
        """The runs of ``config_id``'s seeds as this view read them: a write of the config's state
        decided on this view lands only while they are still so (``Store.update_config``)."""
        return SeedRuns.of(self.runs, config_id, self.seeds)

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

    @cached_property
    def unstarted(self) -> Mapping[int, tuple[tuple[int, ...], int]]:
        """Config id -> (the seeds of an open halving config with no run — a config another worker has
        just reserved, an interrupted run's slot —, the rung they train to: the highest its other seeds
        reached, 0 with none), for each config that has some and has not ended; empty without rungs.
        Read once per view: every budget decision of ``Halving`` counts them."""
        out: dict[int, tuple[tuple[int, ...], int]] = {}
        if self.rungs is None:
            return out
        for config in self.configs:
            if not config.open:
                continue
            by_seed = self.seed_runs(config.id)
            missing = tuple(i for i in range(self.seeds) if i not in by_seed)
            if not missing or self.places[config.id].finished:
                continue
            rung = max((self.rungs.rung_of(r.pause_step or r.last_step, r.own_steps()) for r in by_seed.values()),
                       default=0)
            out[config.id] = (missing, max(0, rung))
        return out

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
        """The search runs charged to a halving budget (``RunRow.charged``): every run a launch trained,
        whatever became of it — an ``interrupted`` run too (its worker died or it was stopped: the GPU
        time was used, though its slot trains again) — and every run in flight. Setup commands left
        out."""
        return [r for r in self.runs if r.kind != "setup" and r.charged()]

    def search_runs(self) -> list[RunRow]:
        """:meth:`trained` of the search's own seeds (the confirmation round's runs left out): what the
        search's budget (``Budget.search``) pays for."""
        return [r for r in self.trained() if r.seed_index < self.seeds]

    def overshoot_steps(self) -> float:
        """The steps (the session's) paused runs trained past their rungs before the stop landed: measured,
        and charged in :meth:`full_runs_spent` with every other step trained."""
        return sum(r.in_session_steps(r.overshoot(), self.full_steps) for r in self.trained())

    def full_runs_spent(self) -> float:
        """The compute the search's runs used, in full runs (``halving.cost``): **every step any launch
        trained** (GPU time used), in the session's steps, plus a start-up per launch — what the runs
        keep, what they trained past a rung, what a restart threw away, what a killed process or a
        resume cut short trained (``launches.back_to_pause`` keeps it in ``restart_steps``). The
        scheduler's decisions (``Halving.committed``) count the same steps, so the plan and the
        budget's count never part."""
        trained = self.trained()
        steps = sum(r.in_session_steps(r.trained_steps(), self.full_steps) for r in trained)
        return cost(steps, sum(r.launches for r in trained), self.full_steps, launch_steps=self.launch)

    def full_runs_at_most(self, *, to_rungs: Callable[[RunRow], bool] | None = None) -> float:
        """What the search (its own seeds) will have spent, in full runs, if every run in flight trains
        on to its own end before its stop lands (a trainer at any speed may: the session's stop at a
        rung is asked, not assured); ``to_rungs``: the runs it is true of (``Budget.stops_itself`` of their
        config) exit by themselves at the rung they were asked to pause at, so in flight they train to
        that rung at most. The bound every halving launch is checked against (``Budget.pays``)."""
        runs, full = self.search_runs(), self.full_steps
        steps = 0.0
        for r in runs:
            left = r.in_session_steps(r.steps_left_at_most(full), full)
            if left and to_rungs is not None and self.rungs is not None and to_rungs(r):
                kept = r.in_session_steps(r.trained_steps() - r.restart_steps, full)
                left = min(left, max(0.0, self.rungs.goes_to(r, full) - kept))
            steps += r.in_session_steps(r.trained_steps(), full) + left
        # a run in flight may not have counted its launch yet (reserved, claimed): one more start-up each
        launches = sum(r.launches + (1 if r.active else 0) for r in runs)
        return cost(steps, launches, self.full_steps, launch_steps=self.launch)
