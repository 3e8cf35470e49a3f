"""The confirmation round: before the search ends, the top configs are re-run with fresh seeds.

A search that ranks configs by one run each picks lucky seeds: on a noisy loss (diffusion
training loss jumps by tens of percent per step, and two seeds of one config differ by more
than many config changes do), the best single run is often a good config on a good day.
So the last ``confirm`` runs of the budget (``SearchSettings.confirm_runs``; "search 18 +
confirm 6" in the plan) are spent in narrowing **passes** over the current leaders:

* pass 1: the top ``k`` configs by mean score each get one more run with a fresh seed;
* pass 2: the top ``ceil(k / 2)`` of the new ranking get another, and so on down to the
  leader, which gets what is left.

``k`` is the widest first pass the confirmation runs pay for (:func:`first_width`: 6 runs
buy the top 4 at 2 seeds, then the top 2 at 3). Every pass ranks by the mean over all runs
of a config, so a config whose one good run was luck drops out, and one that enters the top
of the ranking late still gets its runs. A pass starts only when the previous one has
finished, with several workers too (each slot is reserved under the session's row lock,
:func:`reserve_confirmation`). Confirmation runs are ordinary runs of their config in the
search stage (seed index ``seeds`` and up, seed ``base_seed + index``), so the scores
normalise them with the rest and the leaderboard's mean and confidence interval include them.

This is separate from finals (``bracket.session.finals``): finals train the best configs
*longer*; the confirmation round trains them *again*, at the search's length, inside the budget.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa

from bracket.session.pipeline import RunPipeline
from bracket.session.store.schema import RUN_ACTIVE, RUN_SPENT, runs_table, sessions_table

#: how many passes a plan may step through before it gives up (a guard, never reached)
MAX_PASSES = 1000


def passes_cost(width: int) -> int:
    """Runs that passes of width ``width``, ``ceil(width/2)``, … down to 2 cost (1 run per config)."""
    cost, n = 0, width
    while n >= 2:
        cost += n
        n = math.ceil(n / 2)
    return cost or width


def first_width(confirm_runs: int, n_configs: int) -> int:
    """The widest first pass that ``confirm_runs`` pay for (at most ``n_configs``, at least 1)."""
    width = 1
    for candidate in range(2, max(2, n_configs) + 1):
        if passes_cost(candidate) <= confirm_runs:
            width = candidate
    return min(width, max(1, n_configs))


@dataclass(frozen=True)
class Step:
    """What the confirmation round does next: ``run`` config ``config_id``, ``wait`` for runs
    still training, or ``done`` (no confirmation runs left)."""

    action: Literal["run", "wait", "done"]
    config_id: int | None = None
    #: the pass the run belongs to (1: the first)
    pass_number: int = 0


def next_step(ranking: Sequence[int], counts: Mapping[int, int], active: Mapping[int, int], *, seeds: int,
              runs_left: int, width: int) -> Step:
    """The next confirmation run, from plain data.

    ``ranking``: config ids, best mean first (only configs with a finished score);
    ``counts``: runs per config that are finished or training; ``active``: runs per config
    still training; ``seeds``: runs per config in the search; ``runs_left``: confirmation
    runs not yet handed out; ``width``: the first pass's width.
    """
    if runs_left <= 0 or not ranking:
        return Step("done")
    n = max(1, width)
    for number in range(1, MAX_PASSES):
        target = seeds + number
        needing = [c for c in ranking[:n] if counts.get(c, 0) < target]
        if needing:
            return Step("run", needing[0], number)
        if any(active.get(c, 0) for c in ranking):
            return Step("wait", pass_number=number)  # the next pass ranks on this pass's results
        n = max(1, math.ceil(n / 2))
    return Step("done")


def confirmation_state(pipeline: RunPipeline) -> tuple[list[int], dict[int, int], dict[int, int], int]:
    """(ranking, counts, active, confirmation runs handed out) of a session, from the store."""
    seeds = pipeline.settings.seeds
    runs = pipeline.scoreboard.stage_runs("search")
    values = pipeline.scoreboard.config_values(runs)
    configs = {c["id"] for c in pipeline.store.configs(pipeline.name, stage="search")}
    ranking = [c for c in sorted(values, key=lambda c: (values[c], c)) if c in configs]
    counts: dict[int, int] = {}
    active: dict[int, int] = {}
    handed_out = 0
    for run in runs:
        if run["status"] not in RUN_SPENT + RUN_ACTIVE or run["config_id"] is None:
            continue  # an interrupted run gives its slot back
        counts[run["config_id"]] = counts.get(run["config_id"], 0) + 1
        if run["status"] in RUN_ACTIVE:
            active[run["config_id"]] = active.get(run["config_id"], 0) + 1
        if (run["seed_index"] or 0) >= seeds:
            handed_out += 1
    return ranking, counts, active, handed_out


#: what :func:`reserve_confirmation` answers: ``("run", config, seed_index, run_id)`` or ``(action, None, None, None)``
Reservation = (tuple[Literal["run"], dict[str, Any], int, int]
               | tuple[Literal["wait", "done"], None, None, None])


def reserve_confirmation(pipeline: RunPipeline) -> Reservation:
    """Reserve the next confirmation run under the session's row lock.

    Returns ``("run", config, seed_index, run_id)`` with the run recorded as pending for
    this worker, or ``("wait", None, None, None)`` / ``("done", None, None, None)``.
    """
    settings, store, name = pipeline.settings, pipeline.store, pipeline.name
    with store.engine.begin() as c:
        c.execute(sa.select(sessions_table.c.name).where(sessions_table.c.name == name).with_for_update())
        ranking, counts, active, handed_out = confirmation_state(pipeline)
        step = next_step(ranking, counts, active, seeds=settings.seeds,
                         runs_left=settings.confirm_runs - handed_out,
                         width=first_width(settings.confirm_runs, settings.configs_planned(pipeline.facts)))
        if step.action != "run":
            return step.action, None, None, None
        config = next(x for x in store.configs(name, stage="search") if x["id"] == step.config_id)
        taken = {r["seed_index"] for r in store.runs(name, with_series=False)
                 if r["config_id"] == config["id"] and r["status"] in RUN_SPENT + RUN_ACTIVE}
        seed_index = next(i for i in range(settings.seeds, settings.seeds + MAX_PASSES) if i not in taken)
        seed = settings.base_seed + seed_index
        result = c.execute(runs_table.insert().values(
            session=name, config_id=config["id"], kind=config["kind"], stage="search",
            label=f"{config['name']} seed {seed} (confirm, pass {step.pass_number})", seed=seed, seed_index=seed_index,
            params_json=json.dumps(config["params"], default=str), status="pending", worker=pipeline.worker_id,
            max_steps=settings.steps, started_at=time.time()))
        return "run", config, seed_index, int(result.inserted_primary_key[0])


def confirm_step(pipeline: RunPipeline, *, wait_s: float) -> bool:
    """Train the next confirmation run through ``pipeline``, or wait ``wait_s`` for other
    workers' runs of this pass; False when the confirmation round has nothing left to do."""
    reserved = reserve_confirmation(pipeline)
    if reserved[0] == "done":
        return False
    if reserved[0] == "wait":
        pipeline.on_phase("confirm: waiting for this pass's runs on other workers")
        pipeline.control.wait(wait_s)
        return True
    _, config, seed_index, run_id = reserved
    pipeline.train(config, seed_index, run_id=run_id)
    pipeline.finish_config(config)
    return True
