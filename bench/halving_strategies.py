"""The strategies of the successive-halving benchmark, one session each (``bench/halving.py``).

Every session trains one config at a time (one worker) until it has spent ``cap`` full-run
equivalents at the dearest start-up cost measured, and returns its *events*: one per launch,
with the steps it trained, the config, the rung it reached, the score there and the config's
true full-length quality. Costs under any start-up cost are computed from the events after the
fact (``bench.halving.spent``), so one run serves the sensitivity table.

* ``bracket`` — Bracket as today: the real :class:`SearchController` on the preset's space
  (warm start, LR bracket, shape draws, TPE), every config trained to full length;
* ``halving`` — the same controller for new configs, ``bracket.search.halving.promotions``
  for promotion (asynchronous; a promoted config *resumes*: it trains only the steps between
  its rungs), TPE seeing the rungs through a history ``view`` (see :func:`history_view`);
* ``restart-asha`` — the same, but a promoted config trains again from step 0 (the peer's
  two-rung design, rungs 1/3 and full);
* ``tpe-hyperband`` — plain Optuna TPE with its ``HyperbandPruner`` (min resource 1/9 of the
  steps, reduction factor 3), ``trial.report`` at the rung steps, a pruned trial stops there;
* ``optuna-tpe`` / ``random`` — plain Optuna TPE / random search, full runs.

A config past its landscape's divergence limit is stopped by the divergence monitor after
``DIVERGE_AT`` of its steps in every strategy (its score is then its 3x loss).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import optuna
from optuna.trial import TrialState

from bench.halving_landscapes import DIVERGE_AT, FULL_STEPS, LUCK, Curve, RunLog
from bench.preset_landscapes import Landscape
from bench.preset_search import preset_space, preset_trainer
from bracket.search.halving import Parked, Rungs, promotions, search_values

#: the dearest start-up cost the sessions are run for, as a share of a full run's steps
MAX_LAUNCH_SHARE = 0.10
#: views of the rungs TPE can be given (:func:`history_view`)
VIEWS = ("top", "lexi", "rung0")


@dataclass
class Tried:
    """A config a session tried: its Optuna trial, knobs, kind, run log and highest rung."""

    cid: int
    trial: int
    config: dict
    params: dict
    kind: str
    log: RunLog
    reached: int = -1
    diverged: bool = False


def _event(steps: int, c: Tried, rung: int, score: float, full: bool) -> dict[str, Any]:
    return {"steps": int(steps), "cid": c.cid, "rung": rung, "score": float(score), "full": full,
            "true": c.log.curve.final}


def _new_log(config: dict, land: Landscape, rng: random.Random) -> RunLog:
    return RunLog(Curve(config, land, luck=rng.gauss(0, LUCK)), rng)


def _over(events: list[dict], cap: float) -> bool:
    steps = sum(e["steps"] for e in events)
    launch = MAX_LAUNCH_SHARE * FULL_STEPS
    return (steps + len(events) * launch) / (FULL_STEPS + launch) >= cap


def history_view(configs: list[Tried], scores: dict[tuple[int, int], float], eta: int, top: int, view: str):
    """What TPE (and the bracket, the shape draws) see of a halving session, never mixing a
    short run's loss with a full run's:

    * ``top`` — the highest rung that ``eta`` configs have reached: their scores there are
      COMPLETE, the configs below it PRUNED (TPE counts them bad);
    * ``lexi`` — every config COMPLETE, valued by the rung it reached first, then its rank
      quantile there (``bracket.search.halving.search_values``): Optuna's own order of pruned
      trials (the further, the better; then the value at that step) without intermediate values;
    * ``rung0`` — every config COMPLETE with its score at the smallest rung.
    """
    from bracket.search.controller import ScoredConfig

    counts = [sum(1 for (_, r) in scores if r == k) for k in range(top + 1)]
    level = max((k for k in range(top + 1) if counts[k] >= eta), default=0)
    lexi = search_values(scores, top) if view == "lexi" else {}
    out = []
    for c in configs:
        if c.reached < 0:
            out.append(ScoredConfig(c.params, None, TrialState.RUNNING, c.kind))
            continue
        if c.diverged:  # its 3x loss; worst of all in the rank view
            value = top + 1.0 if view == "lexi" else scores[(c.cid, 0)]
            out.append(ScoredConfig(c.params, value, TrialState.COMPLETE, c.kind, diverged=True))
            continue
        if view == "rung0":
            value = scores[(c.cid, 0)]
        elif view == "lexi":
            value = lexi[c.cid]
        elif c.reached >= level:
            value = scores[(c.cid, level)]
        else:
            out.append(ScoredConfig(c.params, None, TrialState.PRUNED, c.kind))
            continue
        out.append(ScoredConfig(c.params, value, TrialState.COMPLETE, c.kind))
    return out


def run_halving(land: Landscape, seed: int, cap: float, *, rungs: Rungs, evidence: str, restart: bool = False,
                view: str = "top", warm_full: bool = False, leader: bool = False,
                controller_options: dict | None = None) -> list[dict[str, Any]]:
    """One Bracket session with asynchronous successive halving (``restart``: promoted
    configs train again from step 0; ``warm_full``: the baseline trains to full length at
    once, its scores at every rung on the way recorded; ``leader``: the best so far at a rung
    goes on before a cohort, ``promotions(leader=True)``)."""
    from bracket.search.controller import SearchController
    from bracket.search.warm_order import order_warm_start
    from bracket.session.create import fit_warm_start

    trainer = preset_trainer(land.preset)
    space = preset_space(trainer)
    warm, _ = fit_warm_start(trainer, space)
    study = optuna.create_study(direction="minimize")
    SearchController.enqueue_warm_start(study, space, order_warm_start(warm, space))
    steps_at = rungs.steps(FULL_STEPS)
    top = len(steps_at) - 1
    configs: list[Tried] = []
    scores: dict[tuple[int, int], float] = {}
    controller = SearchController(study=study, space=space, seed=seed, **(controller_options or {}),
                                  history=lambda: history_view(configs, scores, rungs.eta, top, view))
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    while not _over(events, cap):
        parked = [Parked(c.cid, c.reached, finished=c.diverged or c.reached == top) for c in configs]
        chosen = promotions(parked, scores, rungs, leader=leader)
        if chosen:
            c = configs[chosen[0].config_id]
            to = chosen[0].to_rung
            start = 0 if restart else steps_at[c.reached]
            score = c.log.evidence(steps_at[to], "validation" if to == top else evidence)
            c.reached = to
            scores[(c.cid, to)] = score
            events.append(_event(steps_at[to] - start, c, to, score, to == top))
            continue
        proposal = controller.next()
        c = Tried(len(configs), proposal.trial_number, proposal.config,
                    space.searched_params(proposal.config), proposal.kind, _new_log(proposal.config, land, rng))
        configs.append(c)
        c.diverged = c.log.curve.diverged
        if warm_full and c.kind == "baseline" and not c.diverged:
            for rung, step in enumerate(steps_at):
                scores[(c.cid, rung)] = c.log.evidence(step, "validation" if rung == top else evidence)
            c.reached = top
            controller.finish(proposal.trial_number, scores[(c.cid, 0)])
            events.append(_event(FULL_STEPS, c, top, scores[(c.cid, top)], True))
            continue
        steps = round(DIVERGE_AT * FULL_STEPS) if c.diverged else steps_at[0]
        score = c.log.evidence(steps_at[0], "validation" if top == 0 else evidence)
        c.reached = 0
        scores[(c.cid, 0)] = score
        controller.finish(proposal.trial_number, score)
        events.append(_event(steps, c, 0, score, top == 0 or c.diverged))
    return events


def run_bracket(land: Landscape, seed: int, cap: float) -> list[dict[str, Any]]:
    """Bracket as today: every config trained to full length (a diverging one stopped early)."""
    from bracket.search.controller import ScoredConfig, SearchController
    from bracket.search.warm_order import order_warm_start
    from bracket.session.create import fit_warm_start

    trainer = preset_trainer(land.preset)
    space = preset_space(trainer)
    warm, _ = fit_warm_start(trainer, space)
    study = optuna.create_study(direction="minimize")
    SearchController.enqueue_warm_start(study, space, order_warm_start(warm, space))
    history: list[ScoredConfig] = []
    controller = SearchController(study=study, space=space, seed=seed, history=lambda: history)
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    while not _over(events, cap):
        proposal = controller.next()
        c = Tried(len(events), proposal.trial_number, proposal.config, space.searched_params(proposal.config),
                    proposal.kind, _new_log(proposal.config, land, rng))
        diverged = c.log.curve.diverged
        score = c.log.evidence(FULL_STEPS, "validation")
        history.append(ScoredConfig(c.params, score, TrialState.COMPLETE, c.kind, diverged=diverged))
        controller.finish(proposal.trial_number, score)
        steps = round(DIVERGE_AT * FULL_STEPS) if diverged else FULL_STEPS
        events.append(_event(steps, c, 0, score, True))
    return events


def run_plain(land: Landscape, seed: int, cap: float, *, sampler: str, evidence: str,
              hyperband: bool = False) -> list[dict[str, Any]]:
    """Plain Optuna: TPE or random search at their defaults, full runs; with ``hyperband``,
    TPE with the HyperbandPruner reporting the rung evidence at 1/9 and 1/3 of the steps."""
    space = preset_space(preset_trainer(land.preset))
    samplers = optuna.samplers
    inner = samplers.TPESampler(seed=seed) if sampler == "tpe" else samplers.RandomSampler(seed=seed)
    pruner = (optuna.pruners.HyperbandPruner(min_resource=FULL_STEPS // 9, max_resource=FULL_STEPS,
                                             reduction_factor=3) if hyperband else optuna.pruners.NopPruner())
    # a fixed name: HyperbandPruner assigns trials to brackets by a hash of it
    study = optuna.create_study(direction="minimize", sampler=inner, pruner=pruner,
                                study_name=f"plain-{seed}")
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    rung_steps = (FULL_STEPS // 9, FULL_STEPS // 3) if hyperband else ()
    while not _over(events, cap):
        trial = study.ask()
        config = space.suggest(trial)
        c = Tried(len(events), trial.number, config, {}, "search", _new_log(config, land, rng))
        if c.log.curve.diverged:
            score = c.log.evidence(FULL_STEPS, "validation")
            study.tell(trial, score)
            events.append(_event(round(DIVERGE_AT * FULL_STEPS), c, 0, score, True))
            continue
        for rung, step in enumerate(rung_steps):
            value = c.log.evidence(step, evidence)
            trial.report(value, step)
            if trial.should_prune():
                study.tell(trial, state=TrialState.PRUNED)
                events.append(_event(step, c, rung, value, False))
                break
        else:
            score = c.log.evidence(FULL_STEPS, "validation")
            study.tell(trial, score)
            events.append(_event(FULL_STEPS, c, len(rung_steps), score, True))
    return events
