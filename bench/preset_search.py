"""Search efficiency over the real preset spaces (issue 19), in process.

Each strategy runs the real search code — :class:`bracket.search.controller.SearchController`
on the preset's session space (``Trainer.session_space``), the preset's baseline and curated
configs fitted with ``bracket.session.create.fit_warm_start``, the learning-rate/d_coef
bracket, TPE on current scores — against a landscape of ``bench/preset_landscapes.py``
instead of a trainer: one config at a time, its observed value the landscape's true loss
with noise; a config whose step is past the landscape's divergence limit is marked
diverged, as the session's divergence stop marks such a run. No subprocess, store or judge
(``bench/search_efficiency.py`` measures those over the demo space), so hundreds of
sessions take minutes.

Strategies:

* ``bracket`` — as shipped: baseline, curated, bracket, then TPE (controller defaults);
* ``bracket@no-shapes`` — the same with TPE from the first proposal after the bracket, without
  the shape draws (``shapes=None``, ``bracket.search.shapes``): what shipped before them;
* ``bracket@no-skip`` — the same without skipping a queued warm-start config whose family
  diverged at its step or lower (``skip_diverged=False``, ``bracket.search.skip_rule``);
* ``bracket@fixed-bracket`` — the same with the bracket before the warm start's evidence
  counted (half a decade each way, ``bracket_rule="fixed"``);
* ``bracket@preset-order`` — the same with the preset's warm-start order (without
  ``bracket.search.warm_order``: what shipped before);
* ``bracket+past`` — the same, a second session: the two best configs of a ``bracket``
  session on the *shifted* landscape (the same model on another dataset, every best step
  0.3 decades higher; ``preset_landscapes.shifted``) join the warm start after the baseline,
  as ``--warm-start-from`` does;
* ``optuna-tpe`` — plain ``optuna.samplers.TPESampler`` at its defaults (10 random start-up
  trials), no warm start, the reference;
* ``random`` — random search, run for twice the budget so its median is observed.

Metric: median over repetitions of the first trial whose config is within 5 % of the
landscape's optimum (a miss counts as budget + 1). Summary: per landscape the ratios
bracket ÷ random and bracket ÷ optuna-tpe, and their geometric means.
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

from bench import common
from bench.preset_landscapes import LANDSCAPES, Landscape, diverges, optimum, quality, shifted

STRATEGIES = ("bracket", "bracket@no-shapes", "bracket@no-skip", "bracket@fixed-bracket", "bracket@preset-order",
              "bracket+past", "optuna-tpe", "random")
TARGET = 1.05


@dataclass(frozen=True)
class Plan(common.Plan):
    #: random search runs this many times the budget (its median is then not censored)
    random_factor: int = 2
    #: sessions run one by one in this process by default (each takes well under a second)
    workers: int = 0

    def budget_for(self, strategy: str) -> int:
        return self.budget * (self.random_factor if strategy == "random" else 1)


SHORT = Plan(repetitions=3, budget=24)
FULL = Plan(repetitions=8, budget=32)


def preset_trainer(preset: str):
    from bracket.registry import get_preset

    return get_preset(preset).trainer_factory({})


def preset_space(trainer):
    from bench.preset_landscapes import STEPS
    from bracket.trainer.base import WARMUP_SHARE

    return trainer.session_space({}, steps=STEPS, warmup_share=WARMUP_SHARE)


def run_bracket(land: Landscape, budget: int, seed: int, *, past: list | None = None,
                controller_options: dict | None = None, order: bool = True) -> list[tuple[dict, float, float]]:
    """One Bracket session: [(config, observed, true)] in trial order; ``order=False`` keeps
    the preset's warm-start order (no ``order_warm_start``)."""
    from bracket.search.controller import ScoredConfig, SearchController
    from bracket.search.warm_order import order_warm_start
    from bracket.session.create import fit_past, fit_warm_start

    trainer = preset_trainer(land.preset)
    space = preset_space(trainer)
    warm, notes = fit_warm_start(trainer, space)
    if past:
        warm[1:1] = fit_past(space, past, notes)
    if order:
        warm = order_warm_start(warm, space)
    study = optuna.create_study(direction="minimize")
    SearchController.enqueue_warm_start(study, space, warm)
    history: list[ScoredConfig] = []
    controller = SearchController(study=study, space=space, seed=seed, history=lambda: history,
                                  **(controller_options or {}))
    validation = bool(trainer.validation_tags)  # a session carries the raw loss only where it is held out
    rng = random.Random(seed)
    trials = []
    for _ in range(budget):
        proposal = controller.next()
        true = quality(proposal.config, land)
        observed = true * (1 + rng.gauss(0, land.noise))
        history.append(ScoredConfig(space.searched_params(proposal.config), observed, TrialState.COMPLETE,
                                    proposal.kind, diverged=diverges(proposal.config, land),
                                    loss=observed if validation else None))
        controller.finish(proposal.trial_number, observed)
        trials.append((proposal.config, observed, true))
    return trials


def run_plain(land: Landscape, budget: int, seed: int, sampler: str) -> list[tuple[dict, float, float]]:
    space = preset_space(preset_trainer(land.preset))
    inner = optuna.samplers.TPESampler(seed=seed) if sampler == "tpe" else optuna.samplers.RandomSampler(seed=seed)
    study = optuna.create_study(direction="minimize", sampler=inner)
    rng = random.Random(seed)
    trials = []
    for _ in range(budget):
        trial = study.ask()
        config = space.suggest(trial)
        true = quality(config, land)
        observed = true * (1 + rng.gauss(0, land.noise))
        study.tell(trial, observed)
        trials.append((config, observed, true))
    return trials


def past_configs(land: Landscape, budget: int, seed: int) -> list:
    """The two best configs (by observed value) of a Bracket session on the shifted landscape."""
    from bracket.search.configs import NamedConfig

    earlier = run_bracket(shifted(land), budget, seed + 7919)
    best = sorted(earlier, key=lambda t: t[1])[:2]
    return [NamedConfig(f"past-{i}", dict(c), "earlier session") for i, (c, _, _) in enumerate(best, 1)]


def run_strategy(land_name: str, name: str, repetition: int, budget: int, options: dict | None = None
                 ) -> dict[str, Any]:
    """One session of strategy ``name`` (or a Bracket variant with controller ``options``) on
    a landscape: the true loss of each trial, in order."""
    land = next(land for land in LANDSCAPES + tuple(_EXTRA.values()) if land.name == land_name)
    seed = 1000 + 17 * repetition
    if name == "bracket":
        trials = run_bracket(land, budget, seed)
    elif name == "bracket+past":
        trials = run_bracket(land, budget, seed, past=past_configs(land, budget, seed))
    elif name == "optuna-tpe":
        trials = run_plain(land, budget, seed, "tpe")
    elif name == "random":
        trials = run_plain(land, budget, seed, "random")
    elif name == "bracket@preset-order":
        trials = run_bracket(land, budget, seed, order=False)
    elif name == "bracket@no-shapes":
        trials = run_bracket(land, budget, seed, controller_options={"shapes": None})
    elif name == "bracket@no-skip":
        trials = run_bracket(land, budget, seed, controller_options={"skip_diverged": False})
    elif name == "bracket@fixed-bracket":
        trials = run_bracket(land, budget, seed, controller_options={"bracket_rule": "fixed"})
    else:
        trials = run_bracket(land, budget, seed, controller_options=options)
    return {"landscape": land_name, "strategy": name, "repetition": repetition, "budget": budget,
            "true": [true for _, _, true in trials]}


#: landscapes passed to :func:`run` that are not in LANDSCAPES (tests), by name
_EXTRA: dict[str, Landscape] = {}


def run(plan: Plan = SHORT, *, strategies: tuple[str, ...] = STRATEGIES, landscapes: tuple[Landscape, ...] = LANDSCAPES,
        variants: dict[str, dict] | None = None, results_dir=None, log=print) -> dict[str, Any]:
    """Every (landscape, strategy, repetition); returns the summary (and per-landscape rows).

    ``variants`` maps a name to SearchController options (e.g. ``{"n_startup_trials": 10}``):
    extra Bracket strategies for tuning."""
    started = time.time()
    _EXTRA.update({land.name: land for land in landscapes if land not in LANDSCAPES})
    names = list(strategies) + list(variants or {})
    tasks = [(land.name, name, rep, plan.budget_for(name), (variants or {}).get(name))
             for land in landscapes for name in names for rep in range(plan.repetitions)]
    records = common.run_sessions("preset_search", tasks, run_strategy, workers=plan.workers, workdir=False,
                                  results_dir=results_dir, log=log)
    out: dict[str, Any] = {"plan": plan.__dict__, "landscapes": {}}
    for land in landscapes:
        space = preset_space(preset_trainer(land.preset))
        best, share = optimum(space, land)
        row: dict[str, Any] = {"optimum": best, "hit_share": share, "story": land.story, "preset": land.preset}
        for name in names:
            limit = plan.budget_for(name)
            counts = [trials_to_target(r["true"], best, limit) for r in records
                      if r["landscape"] == land.name and r["strategy"] == name]
            row[name] = {"median": statistics.median(counts), "counts": counts,
                         "found": sum(c <= limit for c in counts)}
        random_expected = math.ceil(math.log(0.5) / math.log(1 - share)) if 0 < share < 1 else 1
        row["random_expected"] = random_expected
        row["floor"] = baseline_floor(land, space, best)
        out["landscapes"][land.name] = row
    out["summary"] = summarise(out["landscapes"], [n for n in names if n not in ("random",)])
    out["wall_s"] = time.time() - started
    return out


def baseline_floor(land: Landscape, space, best: float) -> int:
    """The smallest median any search that trains the preset's baseline first can reach: 1
    when the baseline is within 5 % of the optimum, else 2."""
    from bracket.session.create import fit_warm_start

    warm, _ = fit_warm_start(preset_trainer(land.preset), space)
    baseline = space.complete(warm[0][1].knobs)
    return 1 if quality(baseline, land) <= TARGET * best else 2


def trials_to_target(true: list[float], best: float, budget: int) -> int:
    """The first trial whose true loss is within 5 % of the optimum (a miss counts as budget + 1)."""
    return next((n for n, value in enumerate(true, 1) if value <= TARGET * best), budget + 1)


def summarise(rows: dict[str, dict], names: list[str]) -> dict[str, Any]:
    """Geometric means of each strategy's median ÷ random's (observed, and expected from the
    hit share — noise-free) and ÷ optuna-tpe's."""
    summary: dict[str, Any] = {}
    floor = [r["floor"] / r["random_expected"] for r in rows.values() if "floor" in r]
    if floor:  # what a search that trains the baseline first cannot beat
        summary["baseline-first floor"] = {"vs_random_expected_geomean": _geomean(floor),
                                           "vs_random_expected_max": max(floor)}
    for name in names:
        vs_random = [r[name]["median"] / r["random"]["median"] for r in rows.values() if "random" in r]
        vs_tpe = [r[name]["median"] / r["optuna-tpe"]["median"] for r in rows.values() if "optuna-tpe" in r]
        vs_expected = [r[name]["median"] / r["random_expected"] for r in rows.values()]
        summary[name] = {
            "vs_random_expected_geomean": _geomean(vs_expected), "vs_random_expected_max": max(vs_expected),
            "vs_random_geomean": _geomean(vs_random), "vs_random_max": max(vs_random) if vs_random else None,
            "vs_tpe_geomean": _geomean(vs_tpe),
            "worse_than_tpe": [k for k, r in rows.items() if "optuna-tpe" in r
                               and r[name]["median"] > r["optuna-tpe"]["median"]],
        }
    return summary


def _geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def print_result(data: dict[str, Any]) -> None:
    rows = data["landscapes"]
    names = [k for k in next(iter(rows.values())) if isinstance(next(iter(rows.values()))[k], dict)]
    print(f"  {'landscape':<22} " + " ".join(f"{n:>14}" for n in names) + "  random-expected")
    for land, row in rows.items():
        print(f"  {land:<22} " + " ".join(f"{row[n]['median']:>9g} {row[n]['found']:>2}/{len(row[n]['counts']):<2}"
                                          for n in names) + f"  {row['random_expected']:>6}  floor {row.get('floor')}")
    for name, s in data["summary"].items():
        if "vs_random_geomean" not in s:
            print(f"  {name}: ÷random expected geomean {s['vs_random_expected_geomean']:.2f} "
                  f"(max {s['vs_random_expected_max']:.2f})")
            continue
        print(f"  {name}: ÷random geomean {s['vs_random_geomean']:.2f} (max {s['vs_random_max']:.2f}), ÷random "
              f"expected {s['vs_random_expected_geomean']:.2f} (max {s['vs_random_expected_max']:.2f}), "
              f"÷optuna-tpe geomean {s['vs_tpe_geomean']:.2f}; worse than optuna-tpe on {s['worse_than_tpe']}")
    print(f"  wall {data['wall_s']:.0f} s")


if __name__ == "__main__":  # pragma: no cover
    print_result(run(SHORT))
