"""``python -m bench halving``: does successive halving reach the same answer at a fraction of the
GPU time (issue 38)? Side by side in one run, over the same landscapes and seeds.

Strategies (``bench/halving_strategies.py``): Bracket as today (every config to full length);
Bracket with asynchronous successive halving (promoted configs resume) at several reduction
factors and smallest rungs; restart-ASHA (the peer's two rungs, promoted configs restart);
plain Optuna TPE with its HyperbandPruner; plain Optuna TPE; random search. Landscapes: the
preset landscapes with time (``bench/halving_landscapes.py``).

**Cost** = steps trained + a start-up per launch (``launch`` × a full run's steps: model load,
caches; 5 % by default, 0 and 10 % shown), in full-run equivalents (a fresh full run = 1),
never trials. **Metrics**, per landscape, median over repetitions:

* ``compute`` — cost until a config whose true full-length quality is within 5 % of the
  optimum has been *trained to full length* (a config that only reached a rung does not
  count: the person gets the full-length run); a miss counts as the cap;
* ``pick`` — the true quality of the session's pick ÷ the optimum at equal compute (half the
  cap and the cap): the config with the best full-length score, or, before any config reached
  full length, the best score at the highest rung reached;
* the Spearman between each rung's evidence and the full-length quality over random configs.

Summary: per strategy the geometric mean over landscapes of its median compute ÷ Bracket's
today, its worst landscape, and its pick ÷ today's pick; the goals of the issue.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from bench import common
from bench.halving_landscapes import FULL_STEPS, evidence_kind, spearman_table
from bench.halving_strategies import run_bracket, run_halving, run_plain
from bench.preset_landscapes import LANDSCAPES, Landscape, optimum
from bench.preset_search import preset_space, preset_trainer
from bracket.search.halving import Rungs, cost

TARGET = 1.05
LAUNCHES = (0.0, 0.05, 0.10)
DEFAULT_LAUNCH = 0.05
#: name → (kind, options); halving names are ``halving-<eta>-<smallest>[@view]``; ``+baseline``:
#: the preset's baseline trains to full length at once (the rest halve); ``@leader``: the best so
#: far at a rung goes on before a cohort (``promotions(leader=True)``)
STRATEGIES: dict[str, tuple[str, dict[str, Any]]] = {
    "bracket": ("bracket", {}),
    "halving-3-1/9": ("halving", {"eta": 3, "smallest": 1 / 9}),
    "halving-3-1/3": ("halving", {"eta": 3, "smallest": 1 / 3}),
    "halving-2-1/4": ("halving", {"eta": 2, "smallest": 1 / 4}),
    "halving-3-1/3@lexi": ("halving", {"eta": 3, "smallest": 1 / 3, "view": "lexi"}),
    "halving-3-1/3+baseline": ("halving", {"eta": 3, "smallest": 1 / 3, "warm_full": True}),
    "halving-3-1/3@leader": ("halving", {"eta": 3, "smallest": 1 / 3, "leader": True}),
    "restart-asha": ("halving", {"eta": 3, "smallest": 1 / 3, "restart": True}),
    "tpe-hyperband": ("hyperband", {}),
    "optuna-tpe": ("tpe", {}),
    "random": ("random", {}),
}
#: the landscapes of the default run: slow starters, late decay, over-fitting rates, both evidences
DEFAULT_LANDSCAPES = ("sdxl-rate-low", "sdxl-prodigy-decay", "sdxl-short-warmup", "flux-rate-high",
                      "wan-rate-low", "llm-rate-high", "llm-qlora-33b", "sd35-near-curated")


@dataclass(frozen=True)
class Plan:
    repetitions: int
    #: each session runs until it has spent this many full-run equivalents (at a 10 % start-up)
    cap: float
    landscapes: tuple[str, ...] = DEFAULT_LANDSCAPES
    strategies: tuple[str, ...] = tuple(STRATEGIES)
    #: random configs per landscape for the rung-vs-full Spearman
    spearman_samples: int = 150
    launch: float = DEFAULT_LAUNCH
    extra: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)


SHORT = Plan(repetitions=10, cap=16)
QUICK = Plan(repetitions=1, cap=4, landscapes=("sdxl-rate-low", "wan-rate-low"),
             strategies=("bracket", "halving-3-1/9", "tpe-hyperband", "random"), spearman_samples=40)
FULL = Plan(repetitions=12, cap=24, landscapes=tuple(land.name for land in LANDSCAPES))


def _land(name: str) -> Landscape:
    return next(land for land in LANDSCAPES if land.name == name)


def run_session(land_name: str, strategy: str, repetition: int, cap: float,
                spec: tuple[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """One session; its events (steps, rung, score, true quality per launch)."""
    land = _land(land_name)
    kind, options = spec or STRATEGIES[strategy]
    seed = 3000 + 31 * repetition
    evidence = evidence_kind(land.preset)
    if kind == "bracket":
        events = run_bracket(land, seed, cap)
    elif kind == "halving":
        options = dict(options)
        rungs = Rungs(options.pop("eta"), options.pop("smallest"))
        events = run_halving(land, seed, cap, rungs=rungs, evidence=options.pop("evidence", evidence), **options)
    elif kind == "hyperband":
        events = run_plain(land, seed, cap, sampler="tpe", evidence=evidence, hyperband=True)
    else:
        events = run_plain(land, seed, cap, sampler=kind, evidence=evidence)
    return {"landscape": land_name, "strategy": strategy, "repetition": repetition, "events": events}


def spent(events: list[dict[str, Any]], launch: float) -> list[float]:
    """The cumulative cost after each event, in full-run equivalents (``bracket.search.halving.cost``)."""
    out, steps = [], 0
    for n, event in enumerate(events, 1):
        steps += event["steps"]
        out.append(cost(steps, n, FULL_STEPS, launch_steps=launch * FULL_STEPS))
    return out


def compute_to_target(events: list[dict[str, Any]], best: float, launch: float, cap: float) -> float | None:
    """The cost at which a within-5 % config has been trained to full length (None: not by ``cap``)."""
    for event, paid in zip(events, spent(events, launch)):
        if paid > cap + 1e-9:
            return None
        if event["full"] and event["true"] <= TARGET * best:
            return paid
    return None


def pick_true(events: list[dict[str, Any]], launch: float, compute: float) -> float | None:
    """The true quality of the session's pick after ``compute``: the best full-length score,
    else the best score at the highest rung reached."""
    latest: dict[int, tuple[int, float, float]] = {}
    for event, paid in zip(events, spent(events, launch)):
        if paid > compute + 1e-9:
            break
        rung = math.inf if event["full"] else event["rung"]
        latest[event["cid"]] = (rung, event["score"], event["true"])
    if not latest:
        return None
    rung, _, true = min(latest.values(), key=lambda v: (-v[0], v[1]))
    return true


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarise_landscape(records: list[dict[str, Any]], names: list[str], best: float, plan: Plan
                        ) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for name in names:
        own = [r["events"] for r in records if r["strategy"] == name]
        entry: dict[str, Any] = {}
        for launch in LAUNCHES:
            reached = [compute_to_target(e, best, launch, plan.cap) for e in own]
            entry[f"compute@{launch:g}"] = _median([plan.cap if c is None else c for c in reached])
            entry[f"found@{launch:g}"] = sum(c is not None for c in reached)
        for share in (0.5, 1.0):
            picks = [pick_true(e, plan.launch, share * plan.cap) for e in own]
            entry[f"pick@{share:g}"] = _median([p / best for p in picks if p is not None])
        entry["repetitions"] = len(own)
        entry["configs"] = _median([len({ev["cid"] for ev in e}) for e in own])
        entry["full_runs"] = _median([sum(ev["full"] for ev in e) for e in own])
        row[name] = entry
    return row


def summarise(landscapes: dict[str, dict[str, Any]], names: list[str], plan: Plan,
              evidence: dict[str, str] | None = None) -> dict[str, Any]:
    """Per strategy, over landscapes: compute ÷ today's (geometric mean, worst), ÷ plain TPE and
    ÷ TPE + Hyperband, at each start-up cost; also split by the rung evidence the landscape's
    preset has (``evidence``: landscape → validation / smoothed); pick ÷ today's pick; goals."""
    out: dict[str, Any] = {}
    for name in names:
        entry: dict[str, Any] = {}
        for launch in LAUNCHES:
            key = f"compute@{launch:g}"
            ratios = {land: row[name][key] / row["bracket"][key] for land, row in landscapes.items()}
            entry[f"vs_bracket@{launch:g}"] = _geomean(list(ratios.values()))
            entry[f"worst@{launch:g}"] = max(ratios.values())
            entry[f"worst_landscape@{launch:g}"] = max(ratios, key=ratios.get)
            for kind in sorted(set((evidence or {}).values())):
                entry[f"vs_bracket_{kind}@{launch:g}"] = _geomean(
                    [ratio for land, ratio in ratios.items() if evidence[land] == kind])
            for other in ("optuna-tpe", "tpe-hyperband"):
                if other in names:
                    entry[f"vs_{other}@{launch:g}"] = _geomean(
                        [row[name][key] / row[other][key] for row in landscapes.values()])
        picks = [row[name]["pick@1"] / row["bracket"]["pick@1"] for row in landscapes.values()
                 if row[name]["pick@1"] and row["bracket"]["pick@1"]]
        entry["pick_vs_bracket"] = _geomean(picks)
        entry["pick_vs_optimum"] = _geomean([row[name]["pick@1"] for row in landscapes.values()
                                             if row[name]["pick@1"]])
        entry["pick_vs_bracket_worst"] = max(picks) if picks else None
        launch = f"{plan.launch:g}"
        entry["meets_goals"] = bool(
            entry[f"vs_bracket@{launch}"] <= 0.4 and entry[f"worst@{launch}"] <= 1.1
            and (entry["pick_vs_bracket"] or math.inf) <= 1.01
            and all(entry.get(f"vs_{o}@{launch}", 0) <= 1.0 for o in ("optuna-tpe", "tpe-hyperband")))
        out[name] = entry
    return out


def run(plan: Plan = SHORT, *, results_dir=None, log=print) -> dict[str, Any]:
    started = time.time()
    specs = {**{n: STRATEGIES[n] for n in plan.strategies}, **plan.extra}
    names = list(specs)
    if "bracket" not in names:
        raise ValueError("the halving benchmark compares with 'bracket' (today): keep it among the strategies")
    tasks = [(land, name, rep, plan.cap, specs[name]) for land in plan.landscapes for name in names
             for rep in range(plan.repetitions)]
    records = common.run_sessions("halving", tasks, run_session, workers=0, workdir=False,
                                  results_dir=results_dir, log=log)
    out: dict[str, Any] = {"plan": {k: v for k, v in plan.__dict__.items() if k != "extra"} | {
        "extra": {k: [v[0], v[1]] for k, v in plan.extra.items()}}, "full_steps": FULL_STEPS, "landscapes": {}}
    for land_name in plan.landscapes:
        land = _land(land_name)
        space = preset_space(preset_trainer(land.preset))
        best, share = optimum(space, land)
        row = summarise_landscape([r for r in records if r["landscape"] == land_name], names, best, plan)
        row["_optimum"], row["_hit_share"], row["_evidence"] = best, share, evidence_kind(land.preset)
        row["_spearman"] = spearman_table(land, space, (1 / 9, 1 / 4, 1 / 3), samples=plan.spearman_samples)
        out["landscapes"][land_name] = row
    strategies = {k: {n: v for n, v in row.items() if not n.startswith("_")}
                  for k, row in out["landscapes"].items()}
    out["summary"] = summarise(strategies, names, plan,
                               {k: row["_evidence"] for k, row in out["landscapes"].items()})
    out["wall_s"] = time.time() - started
    return out
