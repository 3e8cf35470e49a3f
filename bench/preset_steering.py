"""Simulated raters over the real sdxl-lora space (issue 43, item 9), in process.

``bench/steering.py`` measures ratings through whole sessions over the demo space; this one
asks the same questions over the space people really search — the sdxl-lora preset's session
space, its warm start and the real controller (as ``bench/preset_search.py``) — and through
the real scoring and answer path: every trial's run gets a loss series from a landscape of
``bench/preset_landscapes.py``, :func:`bracket.session.scoring.score_runs` scores the runs
(loss judge, human judge, estimates from similar configs), the sampler sees the configs'
current scores (``sampler_history``), and the answer is :func:`bracket.standings.build_standings`'s
winner. No subprocess or store, so a session takes seconds.

A **taste** is a second landscape over the same space — what the rater likes, which differs
from the loss the runs train on in a known way (:data:`TASTES`). In ``rated`` mode the rater
acts before each proposal from trial 2 on, as in ``bench/raters.py``: with probability 0.7 it
rates the first two runs "Next unrated" offers (:func:`bracket.app.rating_queue.rate_next`
with the sampler's readings, as Compare calls it; 1–10 from :func:`bench.raters.rating_of`,
σ 0.6 points, rounded), and with probability 0.3 makes one blind choice from "Next pair"
(:func:`bracket.judge.pairs.informative_pairs`, a logistic choice on the taste gap).
``control`` is the same session (same seeds) unrated.

Per session and taste:

* **pick within 5 %**: the answer's config is within 5 % of the rater's optimum *among the
  configs the session trained* — for the standings' winner (``pick``) and, side by side on the
  same sessions, for the rule before the evidence order (``pick_mean``: the lowest mean
  combined score). Goal: 9 in 10 with ratings.
* **trials to the rater's optimum**: the first trial whose config is within 5 % of the taste's
  optimum over the whole space (a miss counts as budget + 1); the ratio of the medians rated ÷
  control. Goal ≤ 0.7 where the taste differs from the loss.

Two raters: ``busy`` (opens "Next unrated" before 7 of 10 proposals and rates 2 runs) and
``sparse`` (half of them, 1 run: about half the configs end up rated, so the estimates of the
unrated ones matter). ``--choices consistent``: the rater's blind choices as reliable as the
perception behind its ratings (``bench.preset_ceiling``). Beside the winner, each rated session
records the pick after two closing acts of the rater (``bench.preset_closing``: settling a tie
at the top by blind choices, one more look at "Next unrated"); ``bench.preset_ceiling`` says
what the judgements given allow at best.

``python -m bench.preset_steering [--rater busy|sparse] [--repetitions N] [--budget B] [--seed-offset K]
[--workers N] [--oracle] [--no-focus] [--choices bench|consistent]``.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench import common
from bench.preset_closing import CHOICES, chooser, settle
from bench.preset_closing import closing as closing_look
from bench.preset_landscapes import LANDSCAPES, Landscape, diverges, quality, sample
from bench.raters import rating_of

TARGET = 1.05
MODES = ("control", "rated")
#: the perfect rater (opt-in, ``--oracle``): the sampler sees the taste itself for every config,
#: the most any rating rule can give this search (its trials ÷ control is the ceiling)
ORACLE = "oracle"
WEIGHTS = {"loss": 1.0, "human": 2.0}
#: the rated sessions without the focus draws (opt-in, ``--no-focus``): what the rule adds, same seeds
NO_FOCUS = "rated@no-focus"


def _land(name: str) -> Landscape:
    return next(land for land in LANDSCAPES if land.name == name)


@dataclass(frozen=True)
class Taste:
    """What a rater likes (``surface``) over the loss landscape the runs train on (``loss``)."""

    name: str
    loss: Landscape
    surface: Landscape
    story: str

    def value(self, config: dict[str, Any]) -> float:
        """How much the rater dislikes ``config`` (lower is better); a run that diverged on the
        loss looks broken whatever the taste (3x its own worst-case scale)."""
        if diverges(config, self.loss):
            return 3.0 * quality(config, self.surface) + 3.0
        return quality(config, self.surface)


TASTES: dict[str, Taste] = {t.name: t for t in (
    Taste("softer", _land("sdxl-rate-low"), replace(_land("sdxl-rate-low"), name="taste-softer", step_star=5e-6),
          "likes an effective step 4x below the loss optimum (the loss-best samples look overcooked)"),
    Taste("adafactor-look", _land("sdxl-rate-low"),
          replace(_land("sdxl-rate-low"), name="taste-adafactor", family={"adam": 1.10, "adafactor": 0.95,
                                                                          "prodigy": 1.12}, step_star=6e-5),
          "likes what Adafactor does at a 3x higher step; the loss prefers the Adam family lower"),
    Taste("bolder", _land("sdxl-prodigy-decay"),
          replace(_land("sdxl-prodigy-decay"), name="taste-bolder", step_star=1.5e-4, family={"adam": 1.0,
                  "adafactor": 1.05, "prodigy": 1.10}, decay_for=("adam",)),
          "likes Adam at a 3x higher step with a decay, where the loss prefers Prodigy"),
    Taste("higher-rank", _land("sdxl-short-warmup"),
          replace(_land("sdxl-short-warmup"), name="taste-rank", rank_star=64, rank_weight=0.06, step_star=8e-5),
          "likes rank 64 at half the step; the loss is content with rank 8"),
)}


_OPTIMA: dict[str, float] = {}


def taste_optimum(space: Any, taste: Taste, samples: int = 20000, seed: int = 0) -> float:
    """The rater's best value over the space, by sampling (configs that diverge on the loss
    excluded); worked out once per taste in a process."""
    if taste.name not in _OPTIMA:
        rng = random.Random(seed)
        _OPTIMA[taste.name] = min(taste.value(c) for c in (sample(space, rng) for _ in range(samples))
                                  if not diverges(c, taste.loss))
    return _OPTIMA[taste.name]


def _series(observed: float, diverged: bool) -> list[tuple[int, float]]:
    if diverged:
        return [(s, observed * (1.0 + 0.15 * s)) for s in range(1, 41)]
    return [(s, observed * (1.0 + 0.5 * 0.9 ** s)) for s in range(1, 41)]


#: how often the rater opens "Next unrated" before a proposal, and how many runs it rates then
RATERS = {"busy": (0.7, 2), "sparse": (0.5, 1)}


def run_session(taste_name: str, mode: str, repetition: int, budget: int, seed_offset: int = 0,
                rater_kind: str = "busy", choice: str = "bench") -> dict[str, Any]:
    """One session: what it trained (the taste of each config) and what it picked; ``choice``: how
    the rater makes its blind choices (:data:`CHOICES`)."""
    import optuna

    from bench.preset_search import preset_space, preset_trainer
    from bracket.app.rating_queue import rate_next
    from bracket.judge.informative import candidates_from_standings
    from bracket.judge.pairs import informative_pairs
    from bracket.search.controller import SearchController
    from bracket.search.rated_focus import DEFAULT_RULE as FOCUS_RULE
    from bracket.search.warm_order import order_warm_start
    from bracket.session.create import fit_warm_start
    from bracket.session.scoring import score_runs
    from bracket.session.scoring.run_scores import config_values, rated_configs, sampler_history
    from bracket.session.scoring.sampler_values import config_measured, sampler_values, taste_readings
    from bracket.standings import build_standings

    started = time.time()
    taste = TASTES[taste_name]
    trainer = preset_trainer(taste.loss.preset)
    space = preset_space(trainer)
    warm, _notes = fit_warm_start(trainer, space)
    warm = order_warm_start(warm, space)
    seed = 1000 + 17 * repetition + seed_offset
    study = optuna.create_study(direction="minimize")
    SearchController.enqueue_warm_start(study, space, warm)
    configs: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    ratings: list[dict[str, Any]] = []
    comparisons: list[dict[str, Any]] = []
    state: dict[str, Any] = {"scores": {}}

    def history() -> list[Any]:
        scores = state["scores"]
        values = sampler_values(runs, scores, {c["id"]: c["params"] for c in configs})
        if mode == ORACLE:
            values = {c["id"]: min(1.0, taste.value(c["full"]) / best_taste - 1.0) for c in configs}
        return sampler_history(configs, values, space, rated=rated_configs(runs, scores),
                               measured=config_measured(runs, scores))

    focus = None if mode == NO_FOCUS else FOCUS_RULE
    controller = SearchController(study=study, space=space, seed=seed, history=history, focus=focus)
    noise = random.Random(seed)
    rater = random.Random(seed + 1)
    best_taste = taste_optimum(space, taste)

    def standings() -> Any:
        return build_standings(runs, configs, state["scores"], ratings, comparisons, human_weight=WEIGHTS["human"])

    p_round, per_round = RATERS[rater_kind]
    for trial in range(1, budget + 1):
        if mode in ("rated", NO_FOCUS) and trial > 1 and runs:
            if rater.random() < p_round:
                table = standings()
                readings = taste_readings(runs, state["scores"], {c["id"]: c["params"] for c in configs})
                ids, _why = rate_next(table, {r["id"] for r in runs}, 4, readings)
                done = {r["run_id"] for r in ratings}
                for run_id in [i for i in ids if i not in done][:per_round]:
                    config = configs[run_id - 1]
                    value = rating_of(taste.value(config["full"]) / best_taste, rater, 0.6)
                    ratings.append({"run_id": run_id, "prompt_index": None, "value": float(value)})
                state["scores"] = score_runs(runs, ratings, comparisons, WEIGHTS)
            if rater.random() < 0.3:
                pairs = informative_pairs(candidates_from_standings(standings(), [r["id"] for r in runs]),
                                          comparisons, 1)
                if pairs:
                    left, right = sorted(pairs[0])
                    ratios = [taste.value(configs[i - 1]["full"]) / best_taste for i in (left, right)]
                    comparisons.append({"left_run_id": left, "right_run_id": right,
                                        "winner": "left" if chooser(choice)(*ratios, rater) else "right"})
                    state["scores"] = score_runs(runs, ratings, comparisons, WEIGHTS)
        proposal = controller.next()
        config = dict(proposal.config)
        true = quality(config, taste.loss)
        diverged = diverges(config, taste.loss)
        observed = true * (1.0 + noise.gauss(0.0, taste.loss.noise))
        configs.append({"id": trial, "name": proposal.name, "stage": "search", "kind": proposal.kind,
                        "trial_number": proposal.trial_number, "status": "done",
                        "params": space.searched_params(config), "full": config})
        runs.append({"id": trial, "config_id": trial, "stage": "search", "kind": "search", "status": "done",
                     "seed": seed, "max_steps": 40, "params": space.searched_params(config), "finished_at": None,
                     "loss": _series(observed, diverged)})
        state["scores"] = score_runs(runs, ratings, comparisons, WEIGHTS)
        controller.finish(proposal.trial_number, config_values(runs, state["scores"]).get(trial, 1.0))
    table = standings()
    def liked(config_id: int) -> float:
        return taste.value(configs[config_id - 1]["full"]) / best_taste

    rated_mode = mode in ("rated", NO_FOCUS)
    settled = {kind: settle(table, runs, configs, ratings, comparisons, liked, WEIGHTS, kind,
                            random.Random(seed + 2)) for kind in CHOICES} if rated_mode else {}
    closing = (closing_look(runs, configs, ratings, comparisons, liked, WEIGHTS, per_round, random.Random(seed + 3))
               if rated_mode else None)
    values = config_values(runs, state["scores"])
    tastes = [taste.value(c["full"]) for c in configs]
    tried_best = min(tastes)
    pick = table.winner.config_id if table.winner else None
    pick_mean = min(values, key=lambda c: (values[c], c)) if values else None
    order = [row.config_id for row in table.board("search").rows] if table.board("search") else []
    rated = {}
    for item in ratings:
        rated.setdefault(item["run_id"], []).append(item["value"])
    # the ratings alone (blind choices left out), ties in the standings' order: measured beside the winner
    pick_rating = (min(rated, key=lambda c: (-statistics.fmean(rated[c]), order.index(c) if c in order else 0))
                   if rated else pick)
    return {"taste": taste_name, "mode": mode, "repetition": repetition, "budget": budget, "rater": rater_kind,
            "choice": choice,
            "seconds": time.time() - started, "taste_optimum": best_taste, "tastes": tastes,
            "pick": tastes[pick - 1] / tried_best if pick else None,
            "pick_mean": tastes[pick_mean - 1] / tried_best if pick_mean else None,
            "pick_rating": tastes[pick_rating - 1] / tried_best if pick_rating else None,
            "ratings": len(ratings), "pairs": len(comparisons),
            "settled": {kind: {"pick": tastes[cid - 1] / tried_best if cid else None, "choices": n}
                        for kind, (cid, n) in settled.items()},
            "closing": None if closing is None else tastes[closing - 1] / tried_best,
            "given": {str(r["run_id"]): r["value"] for r in ratings},
            "order": order, "params": [c["params"] for c in configs], "names": [c["name"] for c in configs]}


def trials_to_optimum(record: dict[str, Any]) -> int:
    """First trial within 5 % of the rater's optimum over the space (a miss counts as budget + 1)."""
    best = record["taste_optimum"]
    return next((n for n, v in enumerate(record["tastes"], 1) if v <= TARGET * best), record["budget"] + 1)


def _of_rated(record: dict[str, Any]) -> bool:
    """The pick is within 5 % of the best config the rater rated (what their ratings can name)."""
    rated = [record["tastes"][int(i) - 1] for i in record.get("given") or {}]
    if not rated or record["pick"] is None:
        return False
    return record["pick"] * min(record["tastes"]) <= TARGET * min(rated)


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per taste: pick within 5 % (standings' winner and the lowest-mean rule) per mode, the
    median trials to the rater's optimum per mode and their ratio rated ÷ control."""
    out: dict[str, Any] = {}
    for taste in dict.fromkeys(r["taste"] for r in records):
        row: dict[str, Any] = {"story": TASTES[taste].story if taste in TASTES else ""}
        for mode in (*MODES, NO_FOCUS, ORACLE):
            mine = [r for r in records if r["taste"] == taste and r["mode"] == mode]
            if not mine:
                continue
            row[mode] = {"sessions": len(mine),
                         "pick_within_5pct": sum(r["pick"] is not None and r["pick"] <= TARGET for r in mine),
                         "pick_mean_within_5pct": sum(r["pick_mean"] is not None and r["pick_mean"] <= TARGET
                                                      for r in mine),
                         "pick_rating_within_5pct": sum(r.get("pick_rating") is not None and r["pick_rating"] <= TARGET
                                                        for r in mine),
                         "pick_within_5pct_of_rated": sum(_of_rated(r) for r in mine),
                         **{f"settled_{kind}_within_5pct": sum((r.get("settled") or {}).get(kind, {}).get("pick")
                                                                is not None and r["settled"][kind]["pick"] <= TARGET
                                                                for r in mine) for kind in CHOICES},
                         "closing_within_5pct": sum(r.get("closing") is not None and r["closing"] <= TARGET
                                                    for r in mine),
                         "settle_choices": statistics.fmean((r.get("settled") or {}).get("bench", {}).get("choices", 0)
                                                            for r in mine),
                         "median_trials": statistics.median(trials_to_optimum(r) for r in mine),
                         "found": sum(trials_to_optimum(r) <= r["budget"] for r in mine),
                         "ratings": statistics.fmean(r["ratings"] for r in mine)}
        if "control" in row and "rated" in row:
            row["trials_ratio"] = row["rated"]["median_trials"] / row["control"]["median_trials"]
        if "control" in row and NO_FOCUS in row:
            row["no_focus_ratio"] = row[NO_FOCUS]["median_trials"] / row["control"]["median_trials"]
        if "control" in row and ORACLE in row:
            row["oracle_ratio"] = row[ORACLE]["median_trials"] / row["control"]["median_trials"]
        out[taste] = row
    ratios = [r["trials_ratio"] for r in out.values() if "trials_ratio" in r]
    if ratios:
        out["geometric_mean_trials_ratio"] = math.exp(statistics.fmean(math.log(x) for x in ratios))
    ratios = [r["no_focus_ratio"] for r in out.values() if isinstance(r, dict) and "no_focus_ratio" in r]
    if ratios:
        out["geometric_mean_no_focus_ratio"] = math.exp(statistics.fmean(math.log(x) for x in ratios))
    return out


def run(*, repetitions: int = 10, budget: int = 24, seed_offset: int = 0, workers: int = 0,
        tastes: list[str] | None = None, rater: str = "busy", results_dir=None, log=print,
        oracle: bool = False, no_focus: bool = False, choice: str = "bench") -> dict[str, Any]:
    """Every (taste, mode, repetition); writes ``preset_steering-<rater>.json`` and returns it.
    ``oracle``: the perfect rater's sessions too (:data:`ORACLE`)."""
    started = time.time()
    tasks = [(t, m, rep, budget, seed_offset, rater, choice) for rep in range(repetitions)
             for t in (tastes or list(TASTES)) for m in (*MODES, NO_FOCUS, ORACLE)
             if (oracle or m != ORACLE) and (no_focus or m != NO_FOCUS)]
    name = f"preset_steering-{rater}" + ("" if choice == "bench" else f"-{choice}")
    records = common.run_sessions(name, tasks, run_session, workers=workers, workdir=False,
                                  results_dir=results_dir, log=log)
    data = {"plan": {"repetitions": repetitions, "budget": budget, "seed_offset": seed_offset, "rater": rater,
                     "choice": choice},
            "seconds": time.time() - started, "summary": summarise(records), "records": records}
    path = common.write_result(name, data, results_dir or common.RESULTS_DIR)
    log(f"  preset steering: wrote {path}")
    return data


def table(summary: dict[str, Any]) -> str:
    """The summary as the markdown table of docs/BENCHMARKS.md."""
    lines = ["| taste | pick ≤ 5 % of the best tried, rated: winner / lowest mean / ratings only | "
             "winner ≤ 5 % of the best rated | pick ≤ 5 %, control | "
             "median trials to the rater's optimum: rated / control | ratio |", "|---|---|---|---|---|---|"]
    for taste, row in summary.items():
        if not isinstance(row, dict) or "rated" not in row:
            continue
        rated, control = row["rated"], row.get("control") or {}
        n = rated["sessions"]
        lines.append(f"| {taste} | {rated['pick_within_5pct']}/{n} / {rated['pick_mean_within_5pct']}/{n} / "
                     f"{rated.get('pick_rating_within_5pct', '-')}/{n} | "
                     f"{rated.get('pick_within_5pct_of_rated', '-')}/{n} | "
                     f"{control.get('pick_within_5pct', '-')}/{control.get('sessions', '-')} | "
                     f"{rated['median_trials']:g} / {control.get('median_trials', float('nan')):g} | "
                     f"{row.get('trials_ratio', float('nan')):.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.preset_steering", description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--budget", type=int, default=24)
    parser.add_argument("--seed-offset", type=int, default=0, help="fresh seeds: another offset")
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--taste", action="append", choices=list(TASTES))
    parser.add_argument("--rater", choices=list(RATERS), default="busy",
                        help="busy: rates 2 runs in 7 of 10 looks; sparse: 1 run in half of them")
    parser.add_argument("--results", type=Path, default=None, help="folder for the JSON (default bench/results)")
    parser.add_argument("--oracle", action="store_true",
                        help="also the perfect rater's sessions (the sampler sees the taste itself): the ceiling")
    parser.add_argument("--no-focus", action="store_true",
                        help="also the rated sessions without the focus draws (bracket.search.rated_focus), same seeds")
    parser.add_argument("--choices", choices=CHOICES, default="bench",
                        help="the rater's blind choices: bench (62 %% the better way at a 5 %% taste gap, the "
                             "default) or consistent (as reliable as the perception behind one rating: 86 %%)")
    args = parser.parse_args(argv)
    data = run(repetitions=args.repetitions, budget=args.budget, seed_offset=args.seed_offset, workers=args.workers,
               tastes=args.taste, rater=args.rater, results_dir=args.results, oracle=args.oracle,
               no_focus=args.no_focus, choice=args.choices)
    print(table(data["summary"]))
    if "geometric_mean_trials_ratio" in data["summary"]:
        print(f"geometric mean of rated ÷ control trials: {data['summary']['geometric_mean_trials_ratio']:.2f}")
    if "geometric_mean_no_focus_ratio" in data["summary"]:
        print(f"the same without focus draws: {data['summary']['geometric_mean_no_focus_ratio']:.2f}")
    rated = [row["rated"] for row in data["summary"].values() if isinstance(row, dict) and "rated" in row]
    if rated:
        print(f"winner ≤ 5 % of the best tried: {sum(r['pick_within_5pct'] for r in rated)}; after the rater "
              "settles the tie at the top by blind choices: "
              + ", ".join(f"{kind} {sum(r[f'settled_{kind}_within_5pct'] for r in rated)}" for kind in CHOICES)
              + f" ({statistics.fmean(r['settle_choices'] for r in rated):.1f} choices a session); after one "
              f"more look at \"Next unrated\": {sum(r['closing_within_5pct'] for r in rated)}")
    for taste, row in data["summary"].items():
        if isinstance(row, dict) and NO_FOCUS in row:
            mine = row[NO_FOCUS]
            print(f"without focus draws, {taste}: winner ≤ 5 % {mine['pick_within_5pct']}/{mine['sessions']}, "
                  f"{mine['median_trials']:g} trials, ÷ control {row['no_focus_ratio']:.2f}")
        if isinstance(row, dict) and "oracle_ratio" in row:
            print(f"perfect rater, {taste}: {row[ORACLE]['median_trials']:g} trials, "
                  f"÷ control {row['oracle_ratio']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
