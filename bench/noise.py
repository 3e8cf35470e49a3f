"""Noise: does the session's own answer survive diffusion-like loss noise?

The landscapes ``diffusion-lora`` and ``diffusion-overfit`` of ``bench/landscape_trainer.py``
have the noise of diffusion training (per-step loss CV ~0.6 from timestep sampling, 2 %
per-seed offsets of the true loss, a validation loss with 0.5 % measurement noise) and
over-fitting (the best step of a high rate comes before the end). Each repetition runs one
real session per *variant* — the same seeds in every variant — with Bracket's three answers to
noise switched on or off:

* **validation** (issue 18, part 1): a held-out validation split (the bench dataset has 24
  images, so the automatic split is on) and the loss judge scoring its loss;
* **confirm** (part 2): the confirmation round (automatic share: a quarter of the budget);
* **step** (part 3): the pick is a (config, step) pair at the config's best step, not the
  config at its last step.

Variants: ``all``, ``all-validation``, ``all-confirm``, ``all-step`` and ``none``. Measured
per session, at the end of the budget (N runs):

* **picked ÷ best@N** — true held-out loss of what the session recommends (its best config,
  at the step it names) ÷ the best true loss among the configs it tried (each at its true
  best step): did it recognise the best it had? (goal ≤ 1.01);
* **picked ÷ optimum**, and **trials to ≤ 1.05×** (runs until a config within 5 % of the
  landscape's optimum was tried; a miss counts as N + 1);
* **named step vs true best step** of the picked config.

``python -m bench noise`` (short: 3 repetitions, budget 24) or ``--full`` (20 repetitions).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from bench.common import Plan, bench_fields, median, read_records, run_sessions, skip_python_probe, write_result
from bench.landscape_trainer import LANDSCAPE_ENV, LANDSCAPES, optimum, quality, quality_at, true_best_step

NOISE_LANDSCAPES = ("diffusion-lora", "diffusion-overfit")
#: variant -> (validation, confirm, step)
VARIANTS = {
    "all": (True, True, True),
    "all-validation": (False, True, True),
    "all-confirm": (True, False, True),
    "all-step": (True, True, False),
    "none": (False, False, False),
}
TARGET = 1.05
DATASET_IMAGES = 24


SHORT = Plan(repetitions=3, budget=24)
FULL = Plan(repetitions=20, budget=24)


def run_session(landscape: str, variant: str, repetition: int, budget: int, steps: int, workdir: str
                ) -> dict[str, Any]:
    """One session of ``variant`` on ``landscape``; returns what it tried and what it picked."""
    from bracket.session import SearchSettings, Session
    from bracket.session.scoring import step_curves
    from bracket.session.scoring.run_scores import config_values, score_runs

    skip_python_probe()
    os.environ[LANDSCAPE_ENV] = landscape
    validation, confirm, step = VARIANTS[variant]
    shape = LANDSCAPES[landscape]
    fields = bench_fields(Path(workdir), images=DATASET_IMAGES)
    name = f"{landscape}-{variant}-{repetition}"
    started = time.time()
    settings = SearchSettings(budget=budget, steps=steps, seeds=1, sample_prompts="",
                              base_seed=1000 + 17 * repetition, validation_split=None if validation else 0.0,
                              confirm=None if confirm else 0)
    session = Session.create("demo-cpu", fields, settings, out_dir=Path(workdir) / "sessions", name=name,
                             worker_id=f"bench-{repetition}")  # the controller's seed mixes in the worker id
    status = session.run()
    runs = [r for r in session.store.runs(name) if r["stage"] == "search"]
    configs = {c["id"]: c for c in session.store.configs(name, stage="search")}
    session.close()
    shutil.rmtree(Path(workdir) / "sessions" / name, ignore_errors=True)
    values = config_values(runs, score_runs(runs))
    picked_id = min(values, key=lambda c: (values[c], c)) if values else None
    record: dict[str, Any] = {"landscape": landscape, "variant": variant, "repetition": repetition,
                              "status": status, "budget": budget, "seconds": time.time() - started,
                              "runs": [{"config_id": r["config_id"], "seed_index": r["seed_index"],
                                        "quality": quality(shape, configs[r["config_id"]]["params"], steps)}
                                       for r in runs],
                              "validated": any(r["eval_loss"] for r in runs)}
    if picked_id is not None:
        params = configs[picked_id]["params"]
        curve = step_curves([r for r in runs if r["config_id"] == picked_id]).get(picked_id)
        named = (curve.best_step if step and curve is not None and curve.best_step else steps)
        record.update(picked_quality=quality_at(shape, params, named, steps), named_step=named,
                      true_step=true_best_step(shape, params, steps),
                      picked_seeds=sum(1 for r in runs if r["config_id"] == picked_id))
    return record


def summarise(records: list[dict[str, Any]], steps: int = 100) -> dict[str, Any]:
    """Per landscape and variant: the medians of the module docstring."""
    out: dict[str, Any] = {}
    for landscape in sorted({r["landscape"] for r in records}):
        best, best_params = optimum(LANDSCAPES[landscape], steps)
        table: dict[str, Any] = {"optimum": best, "optimum_params": best_params}
        for variant in VARIANTS:
            mine = [r for r in records if r["landscape"] == landscape and r["variant"] == variant
                    and r.get("picked_quality") is not None]
            if not mine:
                continue
            ratios, to_optimum, trials, exact, off = [], [], [], 0, []
            for r in mine:
                tried = min(run["quality"] for run in r["runs"])
                ratios.append(r["picked_quality"] / tried)
                to_optimum.append(r["picked_quality"] / best)
                hit = next((i + 1 for i, run in enumerate(r["runs"]) if run["quality"] <= TARGET * best), None)
                trials.append(hit if hit is not None else r["budget"] + 1)
                exact += r["named_step"] == r["true_step"]
                off.append(abs(r["named_step"] - r["true_step"]))
            table[variant] = {
                "repetitions": len(mine),
                "picked_vs_best_tried": median(ratios),
                "picked_vs_best_tried_mean": sum(ratios) / len(ratios),
                "within_1pct": sum(x <= 1.01 for x in ratios) / len(ratios),
                "picked_vs_optimum": median(to_optimum),
                "median_trials_to_target": median([float(t) for t in trials]),
                "reached": sum(t <= r["budget"] for t, r in zip(trials, mine)),
                "named_step_exact": exact / len(mine),
                "named_step_median_off": median([float(o) for o in off]),
                "true_steps": sorted({r["true_step"] for r in mine}),
                "picked_one_seed": sum(r.get("picked_seeds", 1) < 2 for r in mine) / len(mine),
                "validated": all(r["validated"] for r in mine),
            }
        out[landscape] = table
    return out


def run(*, short: bool = True, plan: Plan | None = None, results_dir: Path | None = None, log=print
        ) -> dict[str, Any]:
    """Run every variant on every noise landscape, side by side; write and return the JSON."""
    plan = plan or (SHORT if short else FULL)
    tasks = [(ls, v, rep, plan.budget, plan.steps) for rep in range(plan.repetitions)
             for ls in NOISE_LANDSCAPES for v in VARIANTS]
    started = time.time()
    records = run_sessions("noise", tasks, run_session, workers=plan.workers, results_dir=results_dir, log=log,
                           # once, before the workers share it
                           prepare=lambda folder: bench_fields(folder, images=DATASET_IMAGES))
    summary = summarise(records, plan.steps)
    data = {"plan": plan.__dict__ | {"short": short}, "seconds": time.time() - started, "target": TARGET,
            "summary": summary, "records": records}
    log(f"  noise: wrote {write_result('noise', data, results_dir)}")
    return data


def summarise_records(path: Path, plan: Plan) -> dict[str, Any]:
    """The result of a (possibly partial) ``noise.records.jsonl``, counting only complete
    repetitions (the sessions are written in task order, repetition by repetition)."""
    records = read_records(path)
    per_rep = len(NOISE_LANDSCAPES) * len(VARIANTS)
    complete = records[: len(records) // per_rep * per_rep]
    done = Plan(repetitions=len(complete) // per_rep, budget=plan.budget, steps=plan.steps, workers=plan.workers)
    return {"plan": done.__dict__ | {"short": False, "from_records": str(path)}, "target": TARGET,
            "summary": summarise(complete, plan.steps), "records": complete}


def tables(data: dict[str, Any]) -> str:
    """Markdown tables of a noise result, for docs/BENCHMARKS.md."""
    lines = []
    plan = data["plan"]
    for landscape, table in data["summary"].items():
        p = table["optimum_params"]
        lines.append(f"\n**{landscape}** — optimum {table['optimum']:.4f} ({p['optimizer_type']}, lr "
                     f"{p['learning_rate']:.2g}, {p['lr_scheduler']}, warmup {p['lr_warmup_steps']}), "
                     f"{plan['repetitions']} repetitions, budget {plan['budget']}\n")
        head = ["variant", "picked ÷ best tried (median)", "≤ 1.01 in", "picked ÷ optimum", "trials to ≤1.05×",
                "named step = true best step", "winner with one seed"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for variant in VARIANTS:
            row = table.get(variant)
            if not row:
                continue
            lines.append("| " + " | ".join([
                variant, f"{row['picked_vs_best_tried']:.3f}", f"{row['within_1pct']:.0%}",
                f"{row['picked_vs_optimum']:.3f}", f"{row['median_trials_to_target']:g} ({row['reached']}/"
                f"{row['repetitions']})",
                f"{row['named_step_exact']:.0%} (median off {row['named_step_median_off']:g})",
                f"{row['picked_one_seed']:.0%}"]) + " |")
    return "\n".join(lines)
