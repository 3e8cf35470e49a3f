"""A session's budget, one object: what it counts in, what it buys, what is spent and left.

A search without halving counts **runs** (``budget`` runs: configs × seeds, plus the
confirmation round's runs); a halving search counts **full runs** of GPU time (every step any
launch trained, in the session's steps, plus a start-up per launch: ``halving.cost``). The plan,
the loop, the snapshot, the forms and the tabs ask this object instead of branching on
``settings.halving`` themselves.

The trainer's facts the cost depends on (``restarts``: it cannot resume, so a promotion trains
its rung again from step 0; the interval the rungs round up to) are decided once when the
session is created into its plan (``bracket.session.loop.trainer_facts.TrainerFacts``) and handed in here
with the settings. What the budget buys is decided without the clock where the settings fix a
launch's start-up (``halving.launch_share``, ``--launch-cost``); otherwise :meth:`Budget.configs` lowers
the count once the session has measured its launches, and says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from bracket.search.halving import cost
from bracket.session.loop.trainer_facts import NO_FACTS, TrainerFacts

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.loop.search_view import SearchView


class BudgetUnit(StrEnum):
    RUNS = "runs"
    FULL_RUNS = "full runs"


@dataclass(frozen=True)
class Budget:
    """The budget of one session (``Budget.of(settings, trainer, facts)``)."""

    unit: BudgetUnit
    #: the budget as given (runs, or full runs)
    total: int
    #: what the search itself may spend (the budget less the confirmation round's runs)
    search: int
    confirm: int
    seeds: int
    #: the configs the plan counts (``SearchSettings.configs_planned``)
    planned: int
    full_steps: int
    #: ``bracket.session.loop.rung_scores.StepRungs`` of a halving search, None without halving
    rungs: Any = None
    #: the trainer's facts, decided at creation (``restarts``: a promoted config trains from step 0)
    facts: TrainerFacts = NO_FACTS
    settings: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, settings: Any, trainer: Any = None, facts: TrainerFacts = NO_FACTS) -> "Budget":
        rungs = None
        halving = settings.halving is not None
        if halving:
            from bracket.session.loop.rung_steps import session_rungs

            rungs = session_rungs(settings, trainer)
        return cls(BudgetUnit.FULL_RUNS if halving else BudgetUnit.RUNS, int(settings.budget),
                   int(settings.search_runs), int(settings.confirm_runs), int(settings.seeds),
                   int(settings.configs_planned(facts)), int(settings.steps), rungs, facts, settings)

    @property
    def restarts(self) -> bool:
        """The trainer trains a promoted config again from step 0 (``TrainerFacts.restarts``)."""
        return self.facts.restarts

    @property
    def halving(self) -> bool:
        return self.unit is BudgetUnit.FULL_RUNS

    @property
    def total_runs(self) -> int:
        """The runs the plan trains to full length or to its rungs (configs × seeds, the confirmation round's)."""
        return self.planned * self.seeds + self.confirm

    # -- spent -------------------------------------------------------------------------------
    def spent(self, view: "SearchView") -> float:
        """What the search has spent, in the budget's unit."""
        return view.full_runs_spent() if self.halving else float(view.spent_runs())

    def exhausted(self, view: Callable[[], "SearchView"]) -> bool:
        """No new run may start: a run budget whose runs are all spent (``view`` read only then). A
        halving search's budget is checked per decision (the scheduler's promotion, :meth:`configs`)."""
        return not self.halving and view().spent_runs() >= self.total_runs

    def finished(self, view: "SearchView") -> bool:
        """Nothing is left to train: the runs the budget buys are spent and no config waits at a rung."""
        return view.spent_runs() >= self.runs_bought(view) and not (self.halving and any(c.open for c in view.configs))

    def label(self, view: "SearchView") -> str:
        """``3/8 runs``; a halving search: ``8 configs, 2.4/4 full runs``."""
        if not self.halving:
            return f"{view.spent_runs()}/{self.total_runs} runs"
        count = len(view.configs)
        return f"{count} config{'s' if count != 1 else ''}, {self.spent(view):.1f}/{self.total} full runs"

    # -- what it buys ------------------------------------------------------------------------
    def configs(self, view: "SearchView") -> tuple[int, str]:
        """The configs the budget buys now and, when fewer than planned, the note that says why:
        the plan's count, until a halving search has a launch's start-up (fixed by the settings or
        measured), then the most whose rungs and launches fit."""
        return self.configs_at(view.launch)

    def configs_at(self, launch: float) -> tuple[int, str]:
        """:meth:`configs` at a launch's start-up of ``launch`` of the session's steps (0: unknown)."""
        if not self.halving or not launch:
            return self.planned, ""
        count = max(1, self.settings.configs_within(launch / self.full_steps, facts=self.facts))
        if count >= self.planned:
            return self.planned, ""
        return count, (f"halving: each launch's start-up (measured) counts against the budget, and every rung is a "
                       f"launch: {self.total} full runs buy {count} configs, not the {self.planned} planned")

    def runs_bought(self, view: "SearchView") -> int:
        """The runs the plan trains as the budget buys it now (:meth:`configs` × seeds + the confirmation round's)."""
        return self.configs(view)[0] * self.seeds + self.confirm

    def plan_text(self, view: "SearchView | None" = None, *, ended: bool = False) -> str:
        """The plan in one line (``SearchSettings.plan``) at the configs the budget buys: the same words
        before Start (Setup, ``view`` None) as after it; a halving search whose launch start-up is
        measured (no ``--launch-cost``) and not measured yet says its count is an upper bound; one whose
        trainer may train past a rung before the stop lands (``TrainerFacts.stops_at_rung`` False) states
        the range of configs it starts (``SearchSettings.configs_if_runs_race`` to the count);
        ``ended``: the search is over, and its plan is the configs ``view`` holds, what it ran."""
        if not self.halving:
            return self.settings.plan()
        if ended and view is not None and self.rungs is not None:
            placed = replace(view, rungs=self.rungs)
            highest = [placed.place(c.id).reached for c in view.configs]
            reached = [sum(1 for h in highest if h >= i) for i in range(len(self.rungs.steps))]
            return self.settings.plan(configs=len(view.configs), facts=self.facts, reached=reached)
        share = self.settings.halving.launch_share
        launch = view.launch if view is not None else float(share or 0) * self.full_steps
        count = self.configs_at(launch)[0]
        at_least = None if self.facts.stops_at_rung else min(count, self.settings.configs_if_runs_race())
        return self.settings.plan(configs=count, up_to=share is None and not launch, facts=self.facts,
                                  at_least=at_least)

    def stops_itself(self, view: "SearchView", config_id: int | None) -> bool:
        """Whether a launch of config ``config_id`` (None: a new config, not proposed yet: whichever the space
        may propose) exits by itself at the rung it is asked to pause at (``TrainerFacts.stops``: the
        command carries its own step limit there), so it is charged that rung, not its full length."""
        if config_id is None or self.facts.stops_at_rung:
            return self.facts.stops_at_rung
        config = next((c for c in view.configs if c.id == config_id), None)
        return config is not None and self.facts.stops(config.row.get("params"))

    def pays(self, view: "SearchView", launches: int, steps_each: float, *, promised: float = 0.0) -> bool:
        """Whether the search's budget pays for ``launches`` more launches that may each train
        ``steps_each`` (the session's steps), each with its start-up, beside every run in flight counted
        to its own end, or to its rung where it stops itself there (:meth:`stops_itself` of its config;
        ``SearchView.full_runs_at_most``), and ``promised`` steps of seeds with no run yet (a config
        another worker reserved, an interrupted run's slot: ``Halving.promised``). The one check every
        halving launch passes before it starts (a new config, a promotion, a seed trained again): a
        trainer that races to its end before the stop at its rung lands then still spends within the
        budget, whatever its speed."""
        more = cost(launches * float(steps_each) + promised, launches, self.full_steps, launch_steps=view.launch)
        at_most = view.full_runs_at_most(to_rungs=lambda run: self.stops_itself(view, run.config_id))
        return at_most + more <= self.search + 1e-9

    def search_steps(self) -> float:
        """The steps (the session's) the search may train: its full runs × the full length."""
        return float(self.search * self.full_steps)
