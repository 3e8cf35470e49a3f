"""``python -m bench hedge``: is Bracket ever slower than plain TPE where its warm start is wrong (issue 46)?

Four landscape kinds over the real ``sdxl-lora`` space (``bench/hedge_landscapes.py``): the
optimum in another optimizer family at a narrow setting, flat and noisy, a slow starter that
over-fits at the curated rates, and the lr·alpha/dim kind where the warm start leads. Every
strategy runs one config at a time, every config to full length (a diverging run is stopped
after ``DIVERGE_AT`` of its steps), until ``budget`` configs:

* ``bracket`` — the real :class:`bracket.search.controller.SearchController` as shipped;
  ``bracket@<variant>`` — the same with controller options, or without the confirmation round
  (``confirm``: its runs) or ranked by another value of each run (``value``: :func:`run_value`)
  (:data:`VARIANTS`);
* ``optuna-tpe`` — plain Optuna ``TPESampler`` at its defaults; ``tpe-hyperband`` — the same
  with ``HyperbandPruner`` (rungs 1/9 and 1/3, the rung evidence the preset logs);
* ``gp`` — Optuna 5's ``GPSampler`` at its defaults;
* ``auto`` — what optunahub's ``AutoSampler`` runs on this space (:func:`auto_sampler`);
* ``random`` — random search.

**Compute** = steps trained + a start-up per launch (``launch`` of a full run, 5 %), in full
runs of GPU time (``bracket.search.halving.cost``), until a config whose *true* quality is
within 5 % of the optimum has been trained; **trials** = the same in configs. A miss counts
as the budget (reported as ``>budget``). **Pick** = the true quality of the config the session
names ÷ the best true quality trained: for the plain strategies the best single score; for
Bracket what its standings name (``bracket.stats.summarise``: the best mean over a config's
seeds) after its **confirmation round** — as a real session at budget 24 ("search 18 + confirm
6", ``SearchSettings.confirm_runs``) it keeps those runs for re-running its leaders with fresh
seeds in narrowing passes (``bracket.session.loop.confirm.next_step``). Medians over seeds; the
reported figures use seeds never used in development (``--fresh``).
"""

from __future__ import annotations

import math
import random
import statistics
import time
from dataclasses import dataclass
from typing import Any

import optuna
from optuna.trial import TrialState

from bench.halving_landscapes import DIVERGE_AT, FULL_STEPS, LUCK, Curve, RunLog, evidence_kind
from bench.hedge_landscapes import KINDS
from bench.preset_landscapes import Landscape, optimum
from bench.preset_search import preset_space, preset_trainer
from bracket.search.hedge import HedgeRule

TARGET = 1.05
LAUNCH = 0.05
#: development seeds: ``7919 * repetition + 17``; ``--fresh`` ones the same plus this offset, never used
#: while tuning (offset 1000 was an earlier set of fresh seeds, reported once and then retired)
FRESH_OFFSET = 2000
#: bracket variants: name → SearchController options, plus ``confirm`` (runs kept for the
#: confirmation round; default the session's own) and ``value`` (:func:`run_value`)
VARIANTS: dict[str, dict[str, Any]] = {
    "bracket": {},
    "bracket@no-hedge": {"hedge": None},
    "bracket@gp": {"model": "gp"},
    "bracket@look3-f10-e4": {"hedge": HedgeRule(look=3, flat=0.10, explore=4)},
    "bracket@bracket-held": {"hedge": HedgeRule(bracket_held=True)},
    "bracket@no-probe": {"hedge": HedgeRule(probe_decades=0)},
    "bracket@uniform": {"hedge": HedgeRule(families=False)},
    "bracket@no-cut": {"hedge": HedgeRule(diverged_cut=False)},
    "bracket@no-confirm": {"confirm": 0},
    "bracket@best-step": {"value": "best-step"},
}
#: validation evaluations a run logs (every 1/9 of its steps), where ``best-step`` reads its curve
EVAL_STEPS = tuple(FULL_STEPS * k // 9 for k in range(1, 10))
PLAIN = ("optuna-tpe", "tpe-hyperband", "gp", "auto", "random")


@dataclass(frozen=True)
class Plan:
    repetitions: int = 8
    budget: int = 24
    fresh: bool = False
    strategies: tuple[str, ...] = ("bracket", "bracket@no-hedge", "bracket@gp", *PLAIN)
    kinds: tuple[str, ...] = tuple(KINDS)


SHORT = Plan(repetitions=3, strategies=("bracket", "optuna-tpe", "random"))
FULL = Plan()


def auto_sampler(seed: int) -> optuna.samplers.BaseSampler:
    """The sampler optunahub's ``AutoSampler`` (samplers/auto_sampler, read at its registry
    source; not vendored, not downloaded) runs on a single-objective space with a categorical or
    conditional parameter — every Bracket preset space: after one random trial, multivariate TPE
    with the constant liar (GPSampler only where every parameter is numeric and unconditional).
    Its rule, written here, so the benchmark needs no network."""
    return optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=True)


def _sampler(name: str, seed: int) -> optuna.samplers.BaseSampler:
    samplers = optuna.samplers
    if name in ("optuna-tpe", "tpe-hyperband"):
        return samplers.TPESampler(seed=seed)
    if name == "gp":  # conditional knobs (the rate, d_coef, warm-up) fall back to random: said in the docs
        return samplers.GPSampler(seed=seed, warn_independent_sampling=False)
    if name == "auto":
        return auto_sampler(seed)
    return samplers.RandomSampler(seed=seed)


def _event(config: dict, log: RunLog, steps: int, score: float, full: bool, *, index: int,
           confirm: bool = False) -> dict[str, Any]:
    """One run: ``config`` is the index of the config it trained (a confirmation run repeats one)."""
    return {"steps": int(steps), "score": float(score), "true": log.curve.final, "full": full,
            "diverged": log.curve.diverged, "optimizer": str(config.get("optimizer_type")), "config": index,
            "confirm": confirm}


def confirm_runs(budget: int) -> int:
    """The runs a real session of ``budget`` (one seed a config) keeps for its confirmation round."""
    from bracket.session.search_settings import SearchSettings

    return SearchSettings(budget=budget).confirm_runs


def standings_order(events: list[dict[str, Any]]) -> list[int]:
    """Config indices of the full-length, not diverged runs in ``events``, best first, by the
    standings' own rule (``bracket.stats.summarise``: mean over the config's seeds)."""
    from bracket.stats import ConfigScores, summarise

    scores: dict[int, list[float]] = {}
    for e in events:
        if e["full"] and not e["diverged"]:
            scores.setdefault(e["config"], []).append(e["score"])
    report = summarise(ConfigScores(c, str(c), "search", values) for c, values in scores.items())
    return [s.config_id for s in report.summaries if s.n]


def run_value(log: RunLog, value: str = "end") -> float:
    """A full-length run's score: ``end`` — its validation loss at the last step (what the
    session's loss judge scores); ``best-step`` — the lowest of its logged validation losses
    (:data:`EVAL_STEPS`), the value at its best step."""
    if value == "best-step" and not log.curve.diverged:
        return min(log.evidence(step, "validation") for step in EVAL_STEPS)
    return log.evidence(FULL_STEPS, "validation")


def _confirm(land: Landscape, configs: list[dict], events: list[dict[str, Any]], rng: random.Random,
             budget: int, runs: int, value: str) -> None:
    """The session's confirmation round (``bracket.session.loop.confirm``): up to ``runs`` runs
    while the budget lasts, each a fresh seed of a leader, in narrowing passes."""
    from bracket.session.loop.confirm import first_width, next_step

    width = first_width(runs, len(configs))
    handed = 0
    while handed < runs and spent(events) < budget:
        counts: dict[int, int] = {}
        for e in events:
            counts[e["config"]] = counts.get(e["config"], 0) + 1
        step = next_step(standings_order(events), counts, {}, seeds=1, runs_left=runs - handed, width=width)
        if step.action != "run" or step.config_id is None:
            return
        config = configs[step.config_id]
        log = RunLog(Curve(config, land, luck=rng.gauss(0, LUCK)), rng)
        events.append(_event(config, log, FULL_STEPS, run_value(log, value), True, index=step.config_id,
                             confirm=True))
        handed += 1


def run_bracket(land: Landscape, seed: int, budget: int, options: dict[str, Any]) -> list[dict[str, Any]]:
    from bracket.search.controller import ScoredConfig, SearchController
    from bracket.search.warm_order import order_warm_start
    from bracket.session.create import fit_warm_start

    options = dict(options)
    confirm = options.pop("confirm", confirm_runs(budget))
    value = options.pop("value", "end")
    trainer = preset_trainer(land.preset)
    space = preset_space(trainer)
    warm, _ = fit_warm_start(trainer, space)
    study = optuna.create_study(direction="minimize")
    SearchController.enqueue_warm_start(study, space, order_warm_start(warm, space))
    history: list[ScoredConfig] = []
    controller = SearchController(study=study, space=space, seed=seed, history=lambda: history, **options)
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    configs: list[dict] = []
    while spent(events) < budget - confirm:
        proposal = controller.next()
        log = RunLog(Curve(proposal.config, land, luck=rng.gauss(0, LUCK)), rng)
        score = run_value(log, value)
        diverged = log.curve.diverged
        history.append(ScoredConfig(space.searched_params(proposal.config), score, TrialState.COMPLETE,
                                    proposal.kind, diverged=diverged, name=proposal.name, loss=score))
        controller.finish(proposal.trial_number, score)
        events.append(_event(proposal.config, log, round(DIVERGE_AT * FULL_STEPS) if diverged else FULL_STEPS,
                             score, True, index=len(configs)))
        configs.append(proposal.config)
    _confirm(land, configs, events, rng, budget, confirm, value)
    return events


def run_plain(land: Landscape, seed: int, budget: int, name: str) -> list[dict[str, Any]]:
    space = preset_space(preset_trainer(land.preset))
    hyperband = name == "tpe-hyperband"
    pruner = (optuna.pruners.HyperbandPruner(min_resource=FULL_STEPS // 9, max_resource=FULL_STEPS,
                                             reduction_factor=3) if hyperband else optuna.pruners.NopPruner())
    study = optuna.create_study(direction="minimize", sampler=_sampler(name, seed), pruner=pruner,
                                study_name=f"plain-{seed}")
    evidence = evidence_kind(land.preset)
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    rungs = (FULL_STEPS // 9, FULL_STEPS // 3) if hyperband else ()
    while spent(events) < budget:
        trial = study.ask()
        config = space.suggest(trial)
        log = RunLog(Curve(config, land, luck=rng.gauss(0, LUCK)), rng)
        if log.curve.diverged:
            score = log.evidence(FULL_STEPS, "validation")
            study.tell(trial, score)
            events.append(_event(config, log, round(DIVERGE_AT * FULL_STEPS), score, True, index=len(events)))
            continue
        for step in rungs:
            value = log.evidence(step, evidence)
            trial.report(value, step)
            if trial.should_prune():
                study.tell(trial, state=TrialState.PRUNED)
                events.append(_event(config, log, step, value, False, index=len(events)))
                break
        else:
            score = log.evidence(FULL_STEPS, "validation")
            study.tell(trial, score)
            events.append(_event(config, log, FULL_STEPS, score, True, index=len(events)))
    return events


def spent(events: list[dict[str, Any]], launch: float = LAUNCH) -> float:
    """Full runs of GPU time ``events`` cost: steps trained + a start-up per launch."""
    return (sum(e["steps"] for e in events) + len(events) * launch * FULL_STEPS) / (FULL_STEPS * (1 + launch))


def run_session(kind: str, strategy: str, repetition: int, budget: int, fresh: bool) -> dict[str, Any]:
    land = KINDS[kind]
    seed = (FRESH_OFFSET if fresh else 0) + 7919 * repetition + 17
    if strategy.startswith("bracket"):
        events = run_bracket(land, seed, budget, VARIANTS[strategy])
    else:
        events = run_plain(land, seed, budget, strategy)
    return {"kind": kind, "strategy": strategy, "repetition": repetition, "events": events}


def to_target(events: list[dict[str, Any]], best: float, launch: float = LAUNCH) -> tuple[float, int] | None:
    """(compute in full runs, trials) when the first within-5 % config had been trained, or None."""
    for n, event in enumerate(events, 1):
        if event["full"] and not event["diverged"] and event["true"] <= TARGET * best:
            return spent(events[:n], launch), n
    return None


def pick_ratio(events: list[dict[str, Any]]) -> float:
    """True quality of the config the standings name (best mean over its full-length runs) ÷ the
    best true quality trained; a run without a ``config`` index is a config of its own."""
    events = [e if "config" in e else {**e, "config": -1 - n} for n, e in enumerate(events)]
    full = [e for e in events if e["full"] and not e["diverged"]]
    if not full:
        return math.inf
    picked = standings_order(full)[0]
    return next(e["true"] for e in full if e["config"] == picked) / min(e["true"] for e in full)


def summarise(records: list[dict[str, Any]], plan: Plan) -> dict[str, Any]:
    space = preset_space(preset_trainer("sdxl-lora"))
    out: dict[str, Any] = {}
    for kind in plan.kinds:
        best, share = optimum(space, KINDS[kind])
        row: dict[str, Any] = {"_optimum": best, "_share": share}
        for strategy in plan.strategies:
            own = [r["events"] for r in records if r["kind"] == kind and r["strategy"] == strategy]
            hits = [to_target(e, best) for e in own]
            row[strategy] = {
                "compute": statistics.median([h[0] if h else plan.budget for h in hits]),
                "trials": statistics.median([h[1] if h else plan.budget for h in hits]),
                "found": sum(h is not None for h in hits), "sessions": len(own),
                "pick": statistics.median([pick_ratio(e) for e in own]),
                "pick_within_1pct": sum(pick_ratio(e) <= 1.01 for e in own) / max(1, len(own)),
            }
        out[kind] = row
    return out


def ratios(summary: dict[str, Any], strategy: str, other: str, key: str) -> dict[str, float]:
    return {kind: row[strategy][key] / row[other][key] for kind, row in summary.items()
            if strategy in row and other in row}


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def run(plan: Plan = FULL, *, log=print) -> dict[str, Any]:
    started = time.time()
    records = []
    for kind in plan.kinds:
        for strategy in plan.strategies:
            for repetition in range(plan.repetitions):
                records.append(run_session(kind, strategy, repetition, plan.budget, plan.fresh))
            log(f"  {kind} {strategy}: {plan.repetitions} sessions ({time.time() - started:.0f} s)")
    summary = summarise(records, plan)
    return {"plan": plan.__dict__, "summary": summary, "records": records, "wall_s": time.time() - started}


def table(data: dict[str, Any]) -> str:
    """The docs' table: median compute (trials) per kind and strategy, then the goal ratios."""
    summary, budget = data["summary"], data["plan"]["budget"]
    strategies = list(data["plan"]["strategies"])
    lines = ["| kind | " + " | ".join(strategies) + " |", "|---" * (len(strategies) + 1) + "|"]
    for kind, row in summary.items():
        cells = []
        for s in strategies:
            r = row[s]
            missed = r["found"] * 2 <= r["sessions"] and r["compute"] >= budget
            compute = f">{budget}" if missed else f"{r['compute']:.1f}"
            cells.append(f"{compute} / {r['trials']:g} ({r['found']}/{r['sessions']})")
        lines.append(f"| {kind} (share {row['_share']:.0%}) | " + " | ".join(cells) + " |")
    lines.append("")
    for s in strategies:
        if not s.startswith("bracket"):
            continue
        picks = [summary[k][s]["pick_within_1pct"] for k in summary]
        pick = (f"pick within 1 % of the best trained in {statistics.mean(picks):.0%} of sessions ("
                + ", ".join(f"{k} {p:.0%}" for k, p in zip(summary, picks)) + ")")
        if "optuna-tpe" not in strategies:
            lines.append(f"{s}: {pick}")
            continue
        c = ratios(summary, s, "optuna-tpe", "compute")
        t_tpe = ratios(summary, s, "optuna-tpe", "trials")
        t_rnd = ratios(summary, s, "random", "trials") if "random" in strategies else {}
        lines.append(f"{s}: compute ÷ plain TPE geo-mean {geomean(c.values()):.2f}, per kind "
                     + ", ".join(f"{k} {v:.2f}" for k, v in c.items())
                     + f"; trials ÷ plain TPE {geomean(t_tpe.values()):.2f}"
                     + (f", ÷ random {geomean(t_rnd.values()):.2f}" if t_rnd else "")
                     + f"; {pick}")
    return "\n".join(lines)
