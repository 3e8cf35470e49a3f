"""``Halving``: asynchronous successive halving as a scheduler (the rule is ``bracket.search.halving``).

New configs train to the first rung (``stop_at_step``) and pause there, their state saved. The
loop asks, in this order (``bracket.session.loop.search_loop``):

1. a config with a seed that has no run (interrupted, or a dead worker's): that seed trains to
   the rung its config stands at (:meth:`Halving.target`: within the reserve);
2. :meth:`Halving.resumes` — ``halving.promotions`` on every config's place and rung score (the
   view's ``places`` and ``scores``), each the budget pays for (:meth:`Halving.affordable`: the
   steps trained and in flight on every worker, seeds reserved with no run yet, the first rung of
   the configs to come, the way to full length for one; with ``restarts`` a promotion trains its
   rung from step 0). The loop claims the first whose paused runs it gets, under the row lock;
3. a new config (while the budget buys one), to the first rung.

The rungs are in the session's steps; a run's trainer may count its own (an LLM trainer's
optimizer steps at its effective batch): it pauses at the same share of its length and every run
is read in its own steps (``StepRungs.step_in``, ``StepRungs.rung_of``). A run paused at a rung is
judged there (``RunPipeline.judge_rung``) and the scheduler waits for those verdicts (bounded)
before the config's place is recorded.

When no new config can be bought the rule is *closing* (the best of a rung goes on even past the
budget while no config has gone past that rung, so a search ends with a full-length run); when
nothing is left, configs still paused are *stopped*, with the reason (:meth:`Halving.closing`). A
config's ``rung``, ``rung_state`` and ``rung_note`` are written as things happen (:meth:`Halving.record`,
also from :meth:`Halving.settle` when a worker died between a run's pause and its config's row), only
while its runs are as the view read them (``Scheduler.write``). The confirmation round and finals
rank only configs with full-length runs.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Collection, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from bracket.search.halving import Promotion, cost, promotions, share_label, stopped_reason, top_count
from bracket.session.loop.rung_steps import restart_note
from bracket.session.scheduling.base import Scheduler, Work
from bracket.session.store.rows import ConfigState, RungState, RunRow, RunState

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.loop.search_view import SearchView
    from bracket.session.store.rows import ConfigRow

log = logging.getLogger(__name__)


class Halving(Scheduler):
    name = "halving"
    pauses = True

    @property
    def rungs(self) -> Any:
        return self.budget.rungs

    def label(self, rung: int) -> str:
        return share_label(self.rungs.fractions()[rung])

    def stop_at(self, rung: int) -> int | None:
        """The step a run trains to for ``rung``: None for the last (its full length)."""
        return self.rungs.steps[rung] if rung < len(self.rungs.steps) - 1 else None

    def first_stop(self) -> int | None:
        return self.stop_at(0)

    # -- told --------------------------------------------------------------------------------
    def begin(self, view: "SearchView") -> None:
        note = restart_note(self.hooks.trainer, self.hooks.trainer_name)
        if note:
            self.hooks.add_note(note)
        for run in view.runs:
            if run.status is RunState.PAUSED:
                self.hooks.pipeline.judge_rung(run.id)  # judged there before: kept, not asked again

    def started(self, work: Work, view: "SearchView", *, new: bool) -> None:
        if new:
            self.hooks.store.update_config(work.config_id, rung_state=RungState.RUNNING,
                                           rung_note=f"running to {self.label(0)}")
        elif work.runs:
            self.hooks.store.update_config(work.config_id, status=ConfigState.RUNNING,
                                           rung_state=RungState.PROMOTED, rung_note=work.note)

    def trained(self, config: "ConfigRow") -> None:
        self.hooks.pipeline.wait_for_rung_verdicts()
        self.record(config.id)

    def settle(self, config: "ConfigRow", view: "SearchView") -> None:
        place = view.places.get(config.id)
        if self.unpaid(config, view):
            self.stop_unpaid(config, view)
        elif config.status is ConfigState.RUNNING and place is not None and not place.running:
            self.record(config.id)

    def stop_unpaid(self, config: "ConfigRow", view: "SearchView") -> None:
        """Stop ``config``, whose killed seed the budget cannot train again (:meth:`keeps_reserve`), never left open."""
        from optuna.trial import TrialState

        reason = ("stopped: a seed's run was interrupted and the budget cannot pay for it to train again and "
                  "still take the best config to full length")
        if not self.write(config, view, also={"worker": config.row.get("worker")}, status=ConfigState.STOPPED,
                          rung_state=RungState.STOPPED, rung_note=reason, value=None):
            return  # another worker settled it, took it over or started its seed first
        self.report(config, view.scores, reason=reason)  # its runs are as ``view`` read them
        self.hooks.controller().finish(config.trial_number, None, TrialState.PRUNED)

    def bought(self, view: "SearchView") -> tuple[int, str]:
        """The configs the budget buys (``Budget.configs``), and never one it cannot pay for: a new
        config's first rung, beside every step trained and in flight and the way to full length for
        one config, must fit. Where runs cost more than the plan counted (a trainer whose saved state
        never completes trains to full length; runs trained past their rung) the plan is redone:
        no more configs than that, said once in the notes."""
        count, note = super().bought(view)
        if len(view.configs) >= count:
            return count, note
        if not self.budget.pays(view, view.seeds, self.reach(0, view), promised=self.promised(view)):
            # a new config may race to full length before the stop at its rung lands (``Budget.stops_itself``)
            return len(view.configs), (
                f"halving: a new config starts only while the budget pays for it to train to full length (a "
                f"trainer may go past its rung before the stop lands): the plan is redone, {self.budget.total} "
                f"full runs buy {len(view.configs)} configs, not {count}")
        if self.keeps_reserve(view, view.seeds * self.way(-1, 0), 0):
            return count, note
        spent = (sum(self.committed(r) for r in self.search_runs(view)) + self.unstarted(view)) / self.rungs.steps[-1]
        return len(view.configs), (
            f"halving: the runs cost more than the plan counted ({spent:.1f} full runs trained or in flight for "
            f"{len(view.configs)} configs): the plan is redone, {self.budget.total} full runs buy "
            f"{len(view.configs)} configs, not {count}")

    def search_runs(self, view: "SearchView") -> list[RunRow]:
        """The runs charged to the search's budget or training now (``SearchView.search_runs``)."""
        return view.search_runs()

    def unstarted(self, view: "SearchView", *, but: int | None = None) -> float:
        """The session's steps promised to seeds with no run row yet — a config another worker has
        just reserved (``distributed.reserve_config``), whose runs it has not started; an interrupted
        run's slot — each to the rung its config stands at (:meth:`seeds_to_start`). Every budget
        decision counts them beside the runs', all under the session's row lock, so a promotion
        never spends the first rung of a config reserved before it."""
        return sum(len(seeds) * (self.rungs.steps[-1] if stop is None else stop)
                   for seeds, stop in self.unstarted_seeds(view, but=but))

    def unstarted_seeds(self, view: "SearchView", *, but: int | None = None) -> Iterator[tuple[list[int], int | None]]:
        """:meth:`seeds_to_start` of every config that has some (``but`` left out), from the view's
        ``unstarted`` (read once per view however many decisions ask)."""
        for config_id, (seeds, rung) in view.unstarted.items():
            if config_id != but:
                yield list(seeds), self.stop_at(rung)

    def busy(self, view: "SearchView") -> bool:
        """A search run trains on some worker (a resume too), or a config is still open for a live one."""
        return view.active() or super().busy(view)

    # -- decided -----------------------------------------------------------------------------
    def target(self, config: "ConfigRow", view: "SearchView") -> tuple[list[int], int | None] | None:
        start, paid = self.start_paid(config, view)
        return start if paid else None  # nothing to train, or each may race to its full length past the budget

    def start_paid(self, config: "ConfigRow", view: "SearchView") -> tuple[tuple[list[int], int | None] | None, bool]:
        """(:meth:`seeds_to_start` of ``config`` unless a run of it trains now, whether the budget pays for each)."""
        place = view.places.get(config.id)
        start = None if place is None or place.running else self.seeds_to_start(config, view)
        paid = start is not None and self.budget.pays(view, len(start[0]), self.reach_step(start[1], view, config.id),
                                                      promised=self.promised(view, but=config.id))
        if paid and start is not None and any(r.config_id == config.id for r in view.runs):  # a killed seed's
            stop = start[1] or self.rungs.steps[-1]  # bought as a new config is (``bought`` asked for those)
            paid = self.keeps_reserve(view, len(start[0]) * stop, self.rungs.rung_of(stop), but=config.id)
        return start, paid

    def keeps_reserve(self, view: "SearchView", steps: float, rung: int, *, but: int | None = None) -> bool:
        """Whether ``steps`` more (a launch leaving a config at ``rung``) fit beside all trained (killed launches
        too), in flight and promised (``but``'s not) and one config's way to full from :meth:`highest`/``rung``."""
        trained = sum(self.committed(r) for r in self.search_runs(view)) + self.unstarted(view, but=but)
        reserve = view.seeds * self.way(max(self.highest(view), rung, 0), len(self.rungs.steps) - 1)
        return trained + steps + reserve <= self.budget.search_steps() + 1e-9

    def highest(self, view: "SearchView") -> int:
        """The highest rung a run that stands reached or trains to now (-1: none); killed or failed ones count not."""
        return max((self.rungs.rung_of(self.committed(r)) for r in self.search_runs(view)
                    if r.status is not RunState.INTERRUPTED and not r.ended), default=-1)

    def seeds_to_start(self, config: "ConfigRow", view: "SearchView") -> tuple[list[int], int | None] | None:
        """(the seeds of open ``config`` with no run, the step they train to: its rung's), None when
        it has none or it ended (``SearchView.unstarted``)."""
        start = view.unstarted.get(config.id)
        return None if start is None else (list(start[0]), self.stop_at(start[1]))

    def unpaid(self, config: "ConfigRow", view: "SearchView") -> bool:
        """``config`` has seeds without a run (an interrupted one's slot) that the budget cannot pay to train."""
        start, paid = self.start_paid(config, view)
        return start is not None and not paid

    def promised(self, view: "SearchView", *, but: int | None = None) -> float:
        """:meth:`unstarted` at their worst, as ``Budget.pays`` counts a launch: each seed with no run
        row yet (a config another worker reserved, an interrupted run's slot; ``but``'s left out) trains as
        far as its launch may (:meth:`reach_step`), after its start-up."""
        return sum(len(seeds) * (self.reach_step(self.stop_at(rung), view, config_id) + view.launch)  # a launch each
                   for config_id, (seeds, rung) in view.unstarted.items() if config_id != but)

    def resumes(self, view: "SearchView") -> Iterator[Work]:
        # every config counts at the rungs it reached (those gone on too); a stopped one stays a
        # candidate: a rating that lifts it into the top share promotes it
        left = self.bought(view)[0] - len(view.configs)  # configs the budget still buys
        closing = left <= 0  # no new config will come
        for promotion in promotions(list(view.places.values()), view.scores, self.rungs, closing=closing):
            if not self.affordable(promotion, view, configs_left=left, closing=closing):
                continue
            paused = tuple(r.id for r in view.seed_runs(promotion.config_id).values() if r.status is RunState.PAUSED)
            if paused:
                yield Work(promotion.config_id, self.stop_at(promotion.to_rung), runs=paused, note=promotion.reason)

    def committed(self, run: RunRow) -> float:
        """The session's steps ``run`` has trained, or trains to now: one in flight counts to the
        rung it goes to (in its own steps' share); the steps a restart threw away count too."""
        full = self.rungs.steps[-1]
        trained = run.in_session_steps(run.trained_steps(), full)
        if not run.active:
            return trained
        return max(trained, self.rungs.goes_to(run, full) + run.in_session_steps(run.restart_steps, full))

    def reach(self, to_rung: int, view: "SearchView", config_id: int | None = None) -> int:
        """:meth:`reach_step` of a launch of ``config_id`` (None: a new config) asked to train to ``to_rung``."""
        return self.reach_step(self.stop_at(to_rung), view, config_id)

    def reach_step(self, stop: int | None, view: "SearchView", config_id: int | None = None) -> int:
        """The session's steps from 0 a launch of config ``config_id`` (None: a new one) asked to stop at ``stop``
        (None: its end) may train: its full length (it may race past its rung before the stop lands), or that
        step where its command carries its own step limit there (``Budget.stops_itself``)."""
        last = self.rungs.steps[-1]
        return (stop or last) if self.budget.stops_itself(view, config_id) else last

    def way(self, rung: int, to_rung: int) -> int:
        """The session's steps a config at ``rung`` (-1: none yet) trains to reach ``to_rung``: the
        steps between, or with ``restarts`` the whole of each rung on the way (each from step 0)."""
        steps = self.rungs.steps
        if self.budget.restarts:
            return sum(steps[max(0, rung + 1):to_rung + 1])
        return steps[to_rung] - (steps[rung] if rung >= 0 else 0)

    def affordable(self, promotion: Promotion, view: "SearchView", *, configs_left: int = 0,
                   closing: bool = True) -> bool:
        """Whether the budget pays for ``promotion``: the steps trained and in flight (every worker's,
        each run in flight to the rung it goes to; a seed whose run is yet to start, :meth:`unstarted`),
        the promotion's, the first rung of the configs
        still to come and, while no config is at or on its way to full length, the rest of the way
        there for one, within the search's full runs. When no new config can come and none has gone
        past its rung, the best config of the rung goes on whenever its own steps fit (so a search
        ends with a full-length run where the budget allows one; never past the budget); the closing
        rule's wider share than the top ``1/eta`` also pays each launch's start-up."""
        steps, seeds, last = self.rungs.steps, view.seeds, len(self.rungs.steps) - 1
        rung = promotion.to_rung - 1
        # whatever else is planned: each resumed run may train on to its full length before its stop lands
        start = 0 if self.budget.restarts else steps[rung]
        if not self.budget.pays(view, seeds, self.reach(promotion.to_rung, view, promotion.config_id) - start,
                                promised=self.promised(view)):
            return False
        highest = self.highest(view)
        trained = sum(self.committed(r) for r in self.search_runs(view)) + self.unstarted(view)
        ahead = max(highest, promotion.to_rung)
        finish = seeds * self.way(ahead, last)
        need = seeds * self.way(rung, promotion.to_rung)
        budget = self.budget.search_steps()
        fits = trained + need + max(0, configs_left) * seeds * steps[0] + finish <= budget
        ranked = sorted((value, cid) for (cid, r), value in view.scores.items() if r == rung)
        best = bool(ranked) and ranked[0][1] == promotion.config_id
        if best and closing and highest <= rung:
            return trained + need <= budget
        place = next(i for i, (_, cid) in enumerate(ranked) if cid == promotion.config_id)
        if not fits or not closing or place < len(ranked) // self.rungs.eta:
            return fits
        spent = view.full_runs_spent()  # its start-up per launch: the view's (0 until measured)
        return spent + seeds * cost(need // seeds, 1, steps[-1], launch_steps=view.launch) \
            <= self.budget.search + 1e-9

    # -- recorded ----------------------------------------------------------------------------
    def record(self, config_id: int) -> None:
        """Write where config ``config_id`` stands (its rung, rung state and note); at full length, finish it."""
        view = self.hooks.view()
        row = view.config(config_id)
        place = view.places[config_id]
        last = len(self.rungs.steps) - 1
        if place.running:
            return
        self.report(row, view.scores)
        self.renote_paused(view, but=config_id)
        if place.finished or place.reached == last:
            values: dict[str, Any] = {"rung": place.reached if place.reached >= 0 else None}
            if place.reached == last:
                values |= {"rung_state": RungState.FULL, "rung_note": row.rung_note or "trained to full length"}
            else:  # a run failed or was disqualified: the config goes no further (not "running" any more)
                ended = [r for r in view.seed_runs(config_id).values() if r.ended]
                values |= {"rung_state": RungState.STOPPED,
                           "rung_note": "stopped: " + "; ".join(f"run {r.id} {r.status}" for r in ended)}
            if self.write(row, view, **values):
                self.hooks.pipeline.finish_config(row.row)
            return
        if place.reached >= 0:
            self.write(row, view, status=ConfigState.PAUSED, rung=place.reached, rung_state=RungState.PAUSED,
                       rung_note=self.paused_note(config_id, place.reached, view.scores))

    def paused_note(self, config_id: int, rung: int, scores: Mapping[tuple[int, int], float]) -> str:
        """``paused at 1/3: 2 of 3, top 1 goes on``: a config's place at the rung it waits at."""
        return stopped_reason(config_id, rung, scores, self.rungs).replace("stopped at", "paused at", 1)

    def renote_paused(self, view: "SearchView", *, but: int) -> None:
        """Bring the notes of the configs waiting at a rung (but ``but``) up to their place there now.
        Written only where the place changed, and only while the config still waits there."""
        for config in view.configs:
            if config.id == but or config.status is not ConfigState.PAUSED \
                    or config.rung_state is not RungState.PAUSED or config.rung is None:
                continue
            note = self.paused_note(config.id, config.rung, view.scores)
            if note != config.rung_note:
                self.hooks.store.update_config(config.id, rung_note=note, only_if={
                    "status": ConfigState.PAUSED, "rung_state": RungState.PAUSED, "rung": config.rung})

    def closing(self, view: "SearchView") -> None:
        """Nothing more will be promoted: configs still paused are stopped, with the reason (each only
        while its runs are as ``view`` read them); one whose seeds all trained to full length, full."""
        from optuna.trial import TrialState

        for config in view.configs:
            if config.status not in (ConfigState.PAUSED, ConfigState.STOPPED):
                continue
            reached = view.places[config.id].reached
            if reached == len(self.rungs.steps) - 1:  # its full record was lost: never stopped
                self.record(config.id)
                continue
            if config.status is ConfigState.STOPPED and reached < 0:
                continue  # stopped before any rung (``stop_unpaid``): it keeps its reason
            reason = self.why_stopped(config.id, reached, view.scores, leader=reached >= self.highest(view))
            if config.status is ConfigState.STOPPED:  # stopped by an earlier end (before +N runs): its place now
                if reason != config.rung_note:
                    self.write(config, view, rung_note=reason)
                continue
            # no value: a score at a rung ranks among that rung's configs only, never against full runs
            if not self.write(config, view, status=ConfigState.STOPPED, rung_state=RungState.STOPPED,
                              rung_note=reason, value=None):
                continue  # another worker at the end of the search stops it, or resumed it since
            self.report(config, view.scores, reason=reason)
            self.hooks.controller().finish(config.trial_number, None, TrialState.PRUNED)

    def why_stopped(self, config_id: int, rung: int, scores: Mapping[tuple[int, int], float], *,
                    leader: bool = False) -> str:
        """``stopped_reason``; in the rung's top share (or ``leader``: the top rung's best), the budget stopped it."""
        reason = stopped_reason(config_id, rung, scores, self.rungs)
        ranked = sorted((value, cid) for (cid, r), value in scores.items() if r == rung and math.isfinite(value))
        place = next((i for i, (_, cid) in enumerate(ranked, start=1) if cid == config_id), None)
        if place is not None and (place <= top_count(len(ranked), self.rungs.eta) or leader and place == 1):
            reason += ", but the budget is spent"
        return reason

    def report(self, config: "ConfigRow", scores: Mapping[tuple[int, int], float], *, reason: str = "") -> None:
        """Tell the stored study the config's rung scores as intermediate values at the rung steps
        (``trial.report``: optuna-dashboard draws each curve) and, when stopped, why. Best effort."""
        from bracket.optuna_access.private import study_storage, trial_id

        study = self.hooks.controller().study
        try:
            trial = study.trials[config.trial_number]
            if trial.state.is_finished():
                return
            storage = study_storage(study)
            for (config_id, rung), value in sorted(scores.items()):
                if config_id == config.id:
                    storage.set_trial_intermediate_value(trial_id(trial), self.rungs.steps[rung], float(value))
            if reason:
                storage.set_trial_user_attr(trial_id(trial), "stopped_reason", reason)
        except Exception:  # noqa: BLE001 - the study's curves never stop a search
            log.warning("could not report rung scores of %s", config.name, exc_info=True)


def sampler_history(view: "SearchView", full_values: Mapping[int, float], searched_params: Any,
                    rated: Collection[int] = (), judged: Mapping[int, tuple[float, float]] | None = None) -> list[Any]:
    """The search configs as the sampler sees them in a halving search, never mixing a short run's
    score with a full run's: one value per scored config (``halving.search_values``: the rung it
    reached first, then its rank among the configs at that rung by what the sampler sees there,
    ``view.seen``), COMPLETE; a config not scored yet RUNNING (FAIL when it failed).
    ``full_values``: the full-length configs' values; ``rated``: the configs a person judged;
    ``judged``: config id -> (verdict, measured score) at one rung, kept with the config."""
    from optuna.trial import TrialState

    from bracket.search.halving import search_values
    from bracket.search.types import ScoredConfig

    last = len(view.rungs.steps) - 1
    scores = {**(view.seen or view.scores), **{(cid, last): value for cid, value in full_values.items()}}
    values = search_values(scores, last)
    history = []
    for config in view.configs:
        params = searched_params(config.row["params"])
        if config.id in values:
            verdict, measured = (judged or {}).get(config.id, (None, None))
            history.append(ScoredConfig(params, values[config.id], TrialState.COMPLETE, kind=config.kind,
                                        name=config.name, rated=config.id in rated, verdict=verdict,
                                        measured=measured))
        elif config.status in (ConfigState.RUNNING, ConfigState.PAUSED, ConfigState.FAILED):
            state = TrialState.FAIL if config.status is ConfigState.FAILED else TrialState.RUNNING
            history.append(ScoredConfig(params, None, state, config.kind))
    return history
