"""The search phase's one loop: a worker takes work, trains it, tells the scheduler, until done.

Each turn (``SearchLoop.run``): a pause takes effect; a stop ends the loop; a run budget that is
spent ends it; dead workers' runs are recovered; then :meth:`SearchLoop.next_work` looks, in this
order, for

1. an open config with seeds to train (``Scheduler.target``): this worker's, or a dead worker's,
   taken over (``WorkerProtocol.claim``); an open config with nothing to train and nothing in
   flight is settled from its runs' rows (``Scheduler.settle``: a worker killed between a run's
   end and its config's row leaves the config right on the next turn of any worker);
2. a resume (``Scheduler.resumes``), decided under the session's row lock on a view read inside
   it, its paused runs claimed (``Store.claim_run``): two workers never resume on the same view;
3. a new config from the controller (``WorkerProtocol.reserve``) while the budget buys one
   (``Scheduler.config_limit``, asked again under the session's row lock on a view read inside it:
   ``WorkerProtocol.reserve``), the proposals the controller skipped noted after the lock.

Without work: while another worker trains (``Scheduler.busy``) it waits, to take over if that
worker dies; else the scheduler closes (``Scheduler.closing``), the confirmation round runs
(``bracket.session.loop.confirm``), and the loop ends. Every decision reads the search's view fresh
(``search_reading.fresh_view``). ``before_turn``: callables the session runs before each look for
work (a benchmark's simulated rater, ``bench/steering.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bracket.session.loop.confirm import confirm_step
from bracket.session.loop.search_reading import fresh_view
from bracket.session.loop.search_view import SearchView
from bracket.session.scheduling import Hooks, Scheduler, Work, scheduler_for
from bracket.session.store.rows import ConfigRow, RunState

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.loop.budget import Budget

WAITING = "waiting for other workers"


def session_scheduler(session: Any) -> Scheduler:
    """The scheduler of ``session`` (its budget names the rule), with the session's parts as hooks."""
    preset = session.parts.preset
    hooks = Hooks(store=session.store, pipeline=session.pipeline, view=lambda: fresh_view(session),
                  add_note=session.add_note, controller=session.controller, trainer=session.trainer,
                  trainer_name=preset.trainer_script or preset.display_name)
    return scheduler_for(session.budget, hooks)


class SearchLoop:
    """The search phase of one session on this worker (the session's parts; it imports no ``Session``)."""

    def __init__(self, session: Any, scheduler: Scheduler, *, wait_s: float,
                 before_turn: Sequence[Callable[[], None]] = ()) -> None:
        self.session = session
        self.scheduler = scheduler
        self.budget: Budget = scheduler.budget
        self.wait_s = wait_s
        self.before_turn = before_turn

    def view(self) -> SearchView:
        return fresh_view(self.session)

    def run(self) -> None:
        s, control = self.session, self.session.control
        self.scheduler.begin(self.view())
        while not control.halted:
            control.wait_while_paused(s.changed)  # the view shows the run finished before the pause
            if control.stop_requested() or self.budget.exhausted(self.view):
                return
            s.worker.recover()
            for hook in self.before_turn:
                hook()
            taken = self.next_work()
            if taken is None:
                view = self.view()
                if self.scheduler.busy(view):  # other live workers train the rest: wait, to take over if one dies
                    if s.phase != WAITING:  # the view shows our last run, once
                        s.phase = WAITING
                        s.changed()
                    control.wait(self.wait_s)
                    continue
                self.scheduler.closing(view)
                if s.settings.confirm_runs and confirm_step(s.pipeline, wait_s=self.wait_s):
                    continue
                return
            self.train(*taken)

    def next_work(self) -> tuple[Work, ConfigRow] | None:
        s, scheduler = self.session, self.scheduler
        me = s.worker.worker_id
        view = self.view()
        workers = s.worker.workers()
        for config in view.configs:
            if not config.open:
                continue
            owner = config.worker
            if owner and owner != me and s.worker.is_alive(workers.get(owner)):
                continue
            target = scheduler.target(config, view)
            if target is None:
                scheduler.settle(config, view)
                continue
            if owner != me and not s.worker.claim(config.id, owner):
                continue  # another worker took this orphan over first
            seeds, stop_at = target
            return Work(config.id, stop_at, seeds=tuple(seeds)), config
        if scheduler.pauses:
            # decided and claimed under the session's row lock, on a view read inside it: two workers
            # never resume on the same view (one paused run, or the last of the budget, twice)
            with s.worker.deciding():
                resumed = self._resume()
            if resumed is not None:
                scheduler.started(resumed[0], view, new=False)
                return resumed
        limit = scheduler.config_limit(view)
        if len(view.configs) >= limit:  # no new config will come: the budget bought them all
            return None
        controller = s.controller()
        # what the budget buys is asked again under the session's row lock, on a view read inside it
        # (as a promotion is decided): a promotion claimed since ``view`` was read is counted, and the
        # new config is counted by every decision after it (``Halving.unstarted``)
        config_id = s.worker.reserve(lambda: scheduler.bought(self.view())[0], controller.next)
        skipped, controller.skipped = controller.skipped, []
        for note in skipped:  # noted after the session's row lock is released
            s.add_note(note)
        if config_id is None:
            return None
        config = ConfigRow.of(next(c for c in s.store.configs(s.name, stage="search") if c["id"] == config_id))
        work = Work(config_id, scheduler.first_stop(), seeds=tuple(range(s.settings.seeds)))
        scheduler.started(work, view, new=True)
        return work, config

    def _resume(self) -> tuple[Work, ConfigRow] | None:
        """The first resume the scheduler offers whose paused runs this worker claims."""
        s, view = self.session, self.view()
        for work in self.scheduler.resumes(view):
            claimed = tuple(run_id for run_id in work.runs if s.store.claim_run(run_id, s.worker.worker_id))
            if claimed:
                return replace(work, runs=claimed), view.config(work.config_id)
        return None

    def train(self, work: Work, config: ConfigRow) -> None:
        s, control = self.session, self.session.control
        row = {**config.row, "worker": s.worker.worker_id}
        for seed_index in work.seeds:
            control.wait_while_paused(s.changed)  # a pause takes effect between runs, seeds included
            if control.stop_requested() or self.budget.exhausted(self.view):
                break
            s.pipeline.train(row, seed_index, stop_at_step=work.stop_at)
        for index, run_id in enumerate(work.runs):
            if control.stop_requested():  # the runs claimed and not resumed wait again
                for left in work.runs[index:]:
                    s.store.update_run(left, status=RunState.PAUSED)
                break
            # claimed in next_work; the session's length, as the run was asked for
            s.pipeline.resume(run_id, steps=s.settings.steps, stop_at_step=work.stop_at, claimed=True)
        self.scheduler.trained(config)
