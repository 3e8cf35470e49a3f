"""Do ratings steer the search? Sessions with a simulated rater vs the same sessions without.

For every taste of :mod:`bench.raters` (a person whose liking disagrees with the loss in a
known way, on its own loss landscape) and every repetition, three real sessions run with the
same seeds (``base_seed``, worker id, trainer noise):

* ``control`` — nobody rates: the search follows the loss alone;
* ``rated``   — the rater acts before every proposal from the first trial on (rates some of
  what "Next unrated" shows, now and then a blind pair), through the app's own
  :class:`~bracket.app.compare.Compare` functions the Compare tab calls (``SessionManager.compare``);
* ``late``    — the same rater, but starting only after half the budget;
* ``oracle``  — nobody rates, and the runs train on the taste itself as their loss (a perfect
  rater of every run, :mod:`bench.oracle`): the upper bound of any rating mechanism.

Per session it records every config's kind, the rater's noise-free dislike of it, the ratings
the rater gave its runs, and the config the session itself would pick at the end (lowest
current mean combined score). Reported, per taste over the repetitions:

* **trials to the rater's optimum**: first trial whose config is within 5 % of the rater's
  optimum (a miss counts as budget + 1); median per mode and the ratio rated ÷ control
  (goal ≤ 0.5);
* **pick within 5 %**: share of repetitions whose final pick is within 5 % of the rater's
  optimum (goal ≥ 80 % with ratings), and the median of the rater's value of the pick ÷ optimum;
* **late ratings change the pick**: share of repetitions where the ``late`` session's final
  pick is a different config from the control's, and how many of those picks are within 5 %;
* **pick rules**: the share within 5 % for other rules of choosing the answer, on the same
  sessions (:func:`pick_rules`: cautious about estimated parts, rated configs only), and the
  share of sessions that trained a config within 5 % at all;
* **proposals move**: share of the ``k`` proposals after the first rating that fall in the
  rater's preferred region (≤ 1.2x the rater's optimum), rated vs the control's proposals at
  the same trial numbers (the two sessions are identical up to the first rating).

The figures are computed from the records by :mod:`bench.steering_summary` (re-exported here);
what the rater's own ratings allow at best is :mod:`bench.rater_ceiling`.

``python -m bench steer`` runs the short plan; ``--full`` the long one.
"""

from __future__ import annotations

import math
import os
import shutil
import time
from pathlib import Path
from typing import Any

from bench import oracle
from bench.common import RESULTS_DIR, Plan, bench_fields, run_sessions, skip_python_probe, write_result
from bench.landscape_trainer import LANDSCAPE_ENV
from bench.raters import TASTES, Rater
from bench.steering_summary import (  # noqa: F401 (re-exported: the figures live there)
    MODES,
    MOVE_WINDOW,
    PREFERRED,
    TARGET,
    pick_ratio,
    picked_params,
    proposals_after,
    summarise,
    trials_to_target,
)

SHORT = Plan(repetitions=2, budget=20)
FULL = Plan(repetitions=10, budget=24)


def apply_variant(mode: str) -> tuple[str, dict[str, float] | None]:
    """``<mode>@human=W`` (the human judge's weight, a session setting): returns the base mode and
    the weights to use (None = the shipped defaults). Nothing of the engine is patched; the
    experiments measured in docs/BENCHMARKS.md section 4 that replaced engine functions or their
    defaults were removed (tag ``experiments-2026-12-01`` keeps them)."""
    base, _, option = mode.partition("@")
    weights = None
    for item in filter(None, option.split(",")):
        key, _, value = item.partition("=")
        if key == "human":
            weights = {"loss": 1.0, "human": float(value)}
        else:
            raise ValueError(f"unknown variant {item!r}")
    return base, weights


def run_session(taste_name: str, mode: str, repetition: int, budget: int, steps: int, workdir: str
                ) -> dict[str, Any]:
    """One session, start to end, with or without the rater; what it tried and what it picked."""
    from bracket.app.manager import SessionManager
    from bracket.session import SearchSettings, Session
    from bracket.session.scoring.run_scores import config_values


    skip_python_probe()
    label, (mode, weights) = mode, apply_variant(mode)
    taste = TASTES[taste_name]
    os.environ[LANDSCAPE_ENV] = oracle.landscape_name(taste_name) if mode == "oracle" else taste.loss_landscape
    fields = bench_fields(Path(workdir))
    name = f"{taste_name}-{label.replace('@', '-').replace('=', '').replace(',', '-')}-{repetition}"
    started = time.time()
    settings = SearchSettings(budget=budget, steps=steps, seeds=1, sample_prompts="",
                              base_seed=1000 + 17 * repetition, algorithm="tpe", warm_start=True,
                              confirm=0,  # measured before the confirmation round existed (bench/noise.py measures it)
                              **({"weights": weights} if weights else {}))
    runs_dir = Path(workdir) / "sessions"
    session = Session.create("demo-cpu", fields, settings, out_dir=runs_dir, name=name,
                             worker_id=f"bench-{repetition}")
    rater = None if mode in ("control", "oracle") else Rater(
        taste, seed=repetition, steps=steps, start_trial=1 if mode == "rated" else budget // 2 + 1)
    events: list[dict[str, Any]] = []
    # no snapshot cache: a person never rates within the app's 0.5 s of a run ending, and a
    # cached view made what the rater saw depend on the machine's load (runs K vs M, §4)
    manager = SessionManager(runs_dir, snapshot_ttl=0.0)
    if rater is not None:
        manager.open(session.folder)  # the app's holder, over the same store the search writes

        def rate_before_the_next() -> None:  # the search loop's hook, before each look for work
            trial = len(session.store.configs(name, stage="search")) + 1
            did = rater.act(manager.compare, trial)
            if did:
                events.append({"trial": trial, "did": did})

        session.before_turn.append(rate_before_the_next)
    status = session.run()
    configs = session.store.configs(name, stage="search")
    runs = [r for r in session.store.runs(name, with_series=False) if r["stage"] == "search"]
    scores = session.scores(runs)
    values = config_values(runs, scores)
    picked_id = min(values, key=values.get) if values else None
    best = rater.best if rater else TASTES[taste_name].optimum(steps)[0]
    taste_of = {c["id"]: taste.value(c["params"], steps) / best for c in configs}
    picks = {rule: taste_of.get(config_id) for rule, config_id in pick_rules(runs, scores, values).items()}
    config_of = {r["id"]: r.get("config_id") for r in runs}
    given: dict[int, list[float]] = {}
    for item in session.store.ratings(name):
        given.setdefault(config_of.get(item["run_id"]), []).append(item["value"])
    trials = [{"kind": c["kind"], "params": c["params"], "taste": taste_of[c["id"]],
               "picked": c["id"] == picked_id, "ratings": given.get(c["id"], [])} for c in configs]
    manager.close()
    session.close()
    shutil.rmtree(runs_dir / name, ignore_errors=True)
    return {"taste": taste_name, "mode": label, "repetition": repetition, "status": status, "budget": budget,
            "seconds": time.time() - started, "trials": trials, "events": events,
            "first_rating_trial": rater.first_rating_trial if rater else None,
            "ratings": rater.ratings if rater else 0, "ratings_again": rater.again if rater else 0,
            "pairs": rater.pairs if rater else 0, "picks": picks}


def pick_rules(runs: list[dict[str, Any]], scores: dict[int, Any], values: dict[int, float]) -> dict[str, int]:
    """Config id each candidate pick rule names at the end of a session (measured side by side
    on the same sessions): ``mean`` (the standings' rule: lowest mean combined score),
    ``cautious1`` / ``cautious2`` (lowest mean + 1 / 2 x the uncertainty of its estimated
    parts: an unrated config's human part is a guess, a rated one's is known), ``rated`` (the
    best rated config, the mean's pick when nothing is rated)."""
    from bracket.session.scoring.run_scores import rated_configs

    spread: dict[int, list[float]] = {}
    for run in runs:
        score = scores.get(run["id"])
        if run.get("config_id") in values and score is not None and score.value is not None:
            spread.setdefault(run["config_id"], []).append(score.uncertainty)
    unsure = {cid: sum(u) / len(u) / math.sqrt(len(u)) for cid, u in spread.items()}
    if not values:
        return {}
    rated = rated_configs(runs, scores) & set(values)
    out = {"mean": min(values, key=lambda c: (values[c], c))}
    for z in (1, 2):
        out[f"cautious{z}"] = min(values, key=lambda c: (values[c] + z * unsure.get(c, 0.0), c))
    out["rated"] = min(rated, key=lambda c: (values[c], c)) if rated else out["mean"]
    return out


def run(*, short: bool = True, plan: Plan | None = None, tastes: list[str] | None = None,
        modes: list[str] | None = None, results_dir: Path | None = None, log=print) -> dict[str, Any]:
    """Run the benchmark and write ``bench/results/steering.json``; returns the summary.

    ``modes`` defaults to :data:`MODES`; ``control`` always runs (the others are compared to it).
    """
    plan = plan or (SHORT if short else FULL)
    tastes = tastes or list(TASTES)
    modes = ["control"] + [m for m in (modes or MODES) if m != "control"]
    tasks = [(t, m, rep, plan.budget, plan.steps) for rep in range(plan.repetitions) for t in tastes for m in modes]
    started = time.time()
    records = run_sessions("steering", tasks, run_session, workers=plan.workers, results_dir=results_dir, log=log,
                           progress_every=6)
    summary = summarise(records)
    data = {"plan": plan.__dict__ | {"short": short}, "seconds": time.time() - started, "target": TARGET,
            "summary": summary, "records": records}
    path = write_result("steering", data, results_dir or RESULTS_DIR)
    log(f"  steering: wrote {path}")
    return data
