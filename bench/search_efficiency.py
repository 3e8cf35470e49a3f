"""Search efficiency: how many trials each strategy needs to find a near-optimal config.

Every trial is a real run of a real session (see ``bench/common.py``) on one of the
synthetic landscapes of ``bench/landscape_trainer.py``, whose noise-free optimum is known.
The strategies, all with one seed per config and the same budget:

* ``bracket``  — Bracket as shipped: the demo trainer's baseline, its three curated
  configs, the learning-rate bracket of the best of them (two configs), then TPE
  (``SearchSettings()`` defaults, ``algorithm="tpe"``);
* ``tpe-cold`` — the same TPE without the warm start (``warm_start=False``);
* ``random``   — random search from trial 1 (``algorithm="random"``, ``warm_start=False``),
  run for ``random_budget_factor`` x the budget so that its median trials-to-target is
  observed rather than cut off at the budget (random search's trials are independent, so a
  longer run changes nothing else). The summary also gives the *expected* median of random
  search, ``ceil(ln 0.5 / ln(1 - p))`` with ``p`` the share of the space within 5 % of the
  optimum (:func:`random_hit_share`, a Monte Carlo estimate over the demo space);
* ``grid``     — a coarse grid a person might write: 4 optimizers (AdamW, RAdam, SGD,
  Adagrad) x 8 learning rates spaced half a decade over 1e-5..3e-2, cosine, 5 warmup
  steps — 32 points, enqueued into the session's study in a random order per repetition
  (so its trials-to-target is the expected position of a good point, not an artefact of
  the order).

Per (landscape, strategy, repetition) it records each trial's config and its *true*
quality (the landscape's noise-free final loss). Reported, over the repetitions:

* **trials to target**: the first trial whose config is within 5 % of the landscape's true
  optimum (quality <= 1.05 x optimum); median, and how many repetitions never got there;
* **best after n** (n = 3, 8, 16, 32): the best true quality among the first n trials,
  as a ratio to the optimum (1.00 = optimal), median over repetitions;
* **picked after n**: the true quality of the config the session itself would recommend
  after n trials (lowest current score, with the noise the session sees) — what a person
  actually gets;
* **baseline by 3**: the fraction of repetitions whose best of the first 3 trials is at
  least as good as the demo trainer's baseline config.

``run(short=True)`` is the quick version used by ``python -m bench``; ``--full`` runs more
repetitions and a longer budget. Results go to ``bench/results/search_efficiency.json``.
"""

from __future__ import annotations

import math
import os
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import common
from bench.common import bench_fields, median, read_records, run_sessions, skip_python_probe, write_result
from bench.landscape_trainer import LANDSCAPE_ENV, LANDSCAPES, LR_RANGE, optimum, quality

STRATEGIES = ("bracket", "tpe-cold", "random", "grid")
TARGET = 1.05
CHECKPOINTS = (3, 8, 16, 32)
GRID_OPTIMIZERS = ("AdamW", "RAdam", "SGD", "Adagrad")


@dataclass(frozen=True)
class Plan(common.Plan):
    #: random search runs this many times the budget (its median is then not censored)
    random_budget_factor: int = 2

    def budget_for(self, strategy: str) -> int:
        return self.budget * (self.random_budget_factor if strategy == "random" else 1)


SHORT = Plan(repetitions=4, budget=16)
FULL = Plan(repetitions=20, budget=32)


def grid_points() -> list[dict[str, Any]]:
    """The coarse grid (32 points)."""
    low, high = (math.log10(v) for v in LR_RANGE)
    rates = [10 ** (low + (high - low) * i / 7) for i in range(8)]
    return [{"optimizer_type": o, "learning_rate": float(f"{lr:.3g}"), "lr_scheduler": "cosine",
             "lr_warmup_steps": 5, "batch_size": 16} for o in GRID_OPTIMIZERS for lr in rates]


def settings_for(strategy: str, budget: int, steps: int, repetition: int, *, lr_bracket: bool = True):
    from bracket.session import SearchSettings

    # confirm=0: this benchmark measures the search itself (every slot a new config); the
    # confirmation round is measured by bench/noise.py
    return SearchSettings(budget=budget, steps=steps, seeds=1, sample_prompts="", base_seed=1000 + 17 * repetition,
                          algorithm="random" if strategy == "random" else "tpe",
                          warm_start=strategy == "bracket", lr_bracket=lr_bracket, confirm=0, validation_split=0.0)


def apply_variant(strategy: str) -> str:
    """The one tuning variant, ``bracket@nobracket`` (no learning-rate bracket: a session
    setting that :func:`run_trial_set` applies); returns the base strategy. Nothing of the
    engine is patched: the variants that replaced the controller's or the loss judge's defaults
    (``@startup=N``, ``@univariate``, ``@multivariate``, ``@noexplore``, ``@slope=W``) were
    removed; their runs are in docs/BENCHMARKS.md and in the tag ``experiments-2026-12-01``."""
    base, _, option = strategy.partition("@")
    if option and option != "nobracket":
        raise ValueError(f"unknown variant {option!r}")
    return base


def run_trial_set(landscape: str, strategy: str, repetition: int, budget: int, steps: int, workdir: str
                  ) -> dict[str, Any]:
    """One session, start to end; returns every config's params, kind, score and true quality."""
    from bracket.search.configs import NamedConfig
    from bracket.search.controller import SearchController
    from bracket.session import Session
    from bracket.session.scoring.run_scores import config_values, score_runs

    skip_python_probe()
    label, strategy = strategy, apply_variant(strategy)
    os.environ[LANDSCAPE_ENV] = landscape
    shape = LANDSCAPES[landscape]
    fields = bench_fields(Path(workdir))
    name = f"{landscape}-{label.replace('@', '-').replace('=', '')}-{repetition}"
    started = time.time()
    settings = settings_for(strategy, budget, steps, repetition,
                            lr_bracket=strategy == "bracket" and not label.endswith("@nobracket"))
    session = Session.create("demo-cpu", fields, settings, out_dir=Path(workdir) / "sessions", name=name,
                             worker_id=f"bench-{repetition}")  # the controller's seed mixes in the worker id
    if strategy == "grid":
        points = grid_points()
        random.Random(repetition).shuffle(points)
        named = [("curated", NamedConfig(f"grid-{i}", p, "coarse grid")) for i, p in enumerate(points[:budget])]
        SearchController.enqueue_warm_start(session.store.study(name), session.space, named)
    status = session.run()
    configs = session.store.configs(name, stage="search")
    runs = session.store.runs(name)
    session.close()
    shutil.rmtree(Path(workdir) / "sessions" / name, ignore_errors=True)
    trials = [{"kind": c["kind"], "params": c["params"], "value": c["value"],
               "quality": quality(shape, c["params"], steps)} for c in configs]
    picked: dict[int, float] = {}
    for n in CHECKPOINTS:
        if n > len(configs):
            break
        ids = {c["id"] for c in configs[:n]}
        subset = [r for r in runs if r.get("config_id") in ids]
        values = config_values(subset, score_runs(subset))
        if values:
            best_id = min(values, key=values.get)
            picked[n] = next(t["quality"] for c, t in zip(configs, trials) if c["id"] == best_id)
    return {"landscape": landscape, "strategy": label, "repetition": repetition, "status": status,
            "budget": budget, "seconds": time.time() - started, "trials": trials, "picked": picked}


def trials_to_target(qualities: list[float], best: float) -> int | None:
    return next((i + 1 for i, q in enumerate(qualities) if q <= TARGET * best), None)


def random_hit_share(landscape: str, steps: int = 100, samples: int = 100_000, seed: int = 0) -> float:
    """The share of the demo space (as random search samples it: log-uniform rate, uniform
    choices) whose configs are within 5 % of the landscape's optimum."""
    from bench.landscape_trainer import OPTIMIZERS, SCHEDULERS, WARMUPS

    shape = LANDSCAPES[landscape]
    best, _ = optimum(shape, steps)
    rng = random.Random(seed)
    low, high = (math.log10(v) for v in LR_RANGE)
    hits = sum(quality(shape, {"optimizer_type": rng.choice(OPTIMIZERS), "learning_rate": 10 ** rng.uniform(low, high),
                               "lr_scheduler": rng.choice(SCHEDULERS), "lr_warmup_steps": rng.choice(WARMUPS)},
                       steps) <= TARGET * best for _ in range(samples))
    return hits / samples


def expected_random_median(share: float) -> float | None:
    """Median trials-to-target of random search when each trial hits with probability ``share``."""
    if share <= 0.0:
        return None
    if share >= 1.0:
        return 1.0
    return float(math.ceil(math.log(0.5) / math.log(1.0 - share)))


def summarise(records: list[dict[str, Any]], budget: int, steps: int) -> dict[str, Any]:
    """Per landscape and strategy: the figures of the module docstring."""
    from bracket.trainer.demo.adapter import DemoLoRA

    baseline = DemoLoRA({}).baseline_config().knobs
    out: dict[str, Any] = {}
    for landscape in sorted({r["landscape"] for r in records}):
        shape = LANDSCAPES[landscape]
        best, best_params = optimum(shape, steps)
        base_q = quality(shape, baseline, steps)
        table: dict[str, Any] = {"optimum": best, "optimum_params": best_params, "baseline_ratio": base_q / best}
        for strategy in sorted({r["strategy"] for r in records}, key=_strategy_order):
            mine = [r for r in records if r["landscape"] == landscape and r["strategy"] == strategy]
            if not mine:
                continue
            hits = [trials_to_target([t["quality"] for t in r["trials"]], best) for r in mine]
            budgets = [int(r.get("budget", budget)) for r in mine]
            found = sorted(h for h in hits if h is not None)
            ordered = sorted(h if h is not None else b + 1 for h, b in zip(hits, budgets))
            mid = median([float(h) for h in ordered])
            row: dict[str, Any] = {
                "repetitions": len(mine), "found": len(found), "budget": max(budgets),
                "median_trials_to_target": mid if mid <= max(budgets) else None,
                "trials_to_target": hits,
            }
            for n in CHECKPOINTS:
                if n > budget:
                    continue
                row[f"best_after_{n}"] = median([min(t["quality"] for t in r["trials"][:n]) / best for r in mine])
                picks = [r["picked"].get(n, r["picked"].get(str(n))) for r in mine]
                picks = [p for p in picks if p is not None]
                row[f"picked_after_{n}"] = median([p / best for p in picks]) if picks else None
            row["baseline_by_3"] = sum(min(t["quality"] for t in r["trials"][:3]) <= base_q * (1 + 1e-9)
                                       for r in mine) / len(mine)
            row["mean_session_seconds"] = sum(r["seconds"] for r in mine) / len(mine)
            table[strategy] = row
        ratio = _ratio(table.get("bracket"), table.get("random"))
        table["bracket_vs_random_trials"] = ratio
        share = random_hit_share(landscape, steps)
        table["random_hit_share"] = share
        table["random_expected_median"] = expected = expected_random_median(share)
        ours = table.get("bracket")
        if ours and expected:
            table["bracket_vs_random_expected"] = (ours["median_trials_to_target"] or ours["budget"] + 1) / expected
        out[landscape] = table
    return out


def _strategy_order(name: str) -> tuple[int, str]:
    base = name.partition("@")[0]
    return (STRATEGIES.index(base) if base in STRATEGIES else len(STRATEGIES), name)


def _ratio(ours: dict | None, theirs: dict | None) -> float | None:
    """Median trials-to-target of ours / theirs (a miss counts as that strategy's budget + 1)."""
    if not ours or not theirs:
        return None
    a = ours["median_trials_to_target"] or ours["budget"] + 1
    b = theirs["median_trials_to_target"] or theirs["budget"] + 1
    return a / b


def run(*, short: bool = True, plan: Plan | None = None, landscapes: list[str] | None = None,
        strategies: list[str] | None = None, results_dir: Path | None = None, log=print) -> dict[str, Any]:
    """Run the benchmark and write its JSON; returns the summary."""
    plan = plan or (SHORT if short else FULL)
    landscapes = landscapes or list(LANDSCAPES)
    strategies = strategies or list(STRATEGIES)
    tasks = [(ls, st, rep, plan.budget_for(st), plan.steps)
             for rep in range(plan.repetitions) for ls in landscapes for st in strategies]
    started = time.time()
    records = run_sessions("search_efficiency", tasks, run_trial_set, workers=plan.workers,
                           results_dir=results_dir, log=log)
    summary = summarise(records, plan.budget, plan.steps)
    data = {"plan": plan.__dict__ | {"short": short}, "seconds": time.time() - started,
            "target": TARGET, "summary": summary, "records": records}
    path = write_result("search_efficiency", data, results_dir)
    log(f"  search efficiency: wrote {path}")
    return data


def summarise_records(path: Path, budget: int, steps: int = 100) -> dict[str, Any]:
    """The summary of a (possibly partial) ``search_efficiency.records.jsonl``."""
    return summarise(read_records(path), budget, steps)
