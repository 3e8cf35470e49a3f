"""How far one rating moves TPE's next proposals — the steering mechanism in isolation.

The session benchmark (:mod:`bench.steering`) answers the question end to end but costs
minutes per session. This one isolates the step between a rating and the next proposal, in
process and in seconds, so the mechanism's knob that a session sets (the human weight) can be
compared on hundreds of draws:

1. a history like a session's after a dozen trials: the demo's baseline and curated configs
   plus random configs, each with a real loss curve from the loss landscape
   (:func:`bench.landscape_trainer.loss_curve`), scored by the real judges
   (:func:`bracket.session.scoring.run_scores.score_runs`, with their params, so unrated runs get the
   estimate from similar configs);
2. the rater has rated the ``rated`` best-loss runs (what "Next unrated" shows first), with
   rating noise;
3. TPE (the real :class:`bracket.search.controller.SearchController`) proposes ``asks``
   configs from that history — *before* — and again after the person gives the run they
   like most a 10 — *after* — with the same seeds.

Reported per taste: the share of proposals in the rater's preferred region (≤ 1.2x the
rater's optimum) before and after, and the share of proposals the rating changed.
"""

from __future__ import annotations

import math
import random
from typing import Any

from bench.landscape_trainer import LR_RANGE, OPTIMIZERS, SCHEDULERS, WARMUPS, loss_curve
from bench.raters import TASTES
from bench.steering import PREFERRED, apply_variant


def _random_config(rng: random.Random) -> dict[str, Any]:
    low, high = (math.log10(v) for v in LR_RANGE)
    return {"optimizer_type": rng.choice(OPTIMIZERS), "learning_rate": 10 ** rng.uniform(low, high),
            "lr_scheduler": rng.choice(SCHEDULERS), "lr_warmup_steps": rng.choice(WARMUPS), "batch_size": 16}


def draw(taste_name: str, seed: int, *, history: int = 12, rated: int = 4, asks: int = 4,
         weights: dict[str, float] | None = None) -> dict[str, Any]:
    """One history, TPE's proposals before and after a 10 on the liked-most run."""
    import optuna
    from optuna.trial import TrialState

    from bracket.search.controller import ScoredConfig, SearchController
    from bracket.session.scoring.run_scores import config_values, score_runs
    from bracket.trainer.demo.adapter import DemoLoRA

    taste = TASTES[taste_name]
    best, _ = taste.optimum()
    rng = random.Random(seed)
    trainer = DemoLoRA.__new__(DemoLoRA)  # only the space and the warm-start configs are used
    space = trainer.declare_search_space()
    configs = [trainer.baseline_config().knobs] + [c.knobs for c in trainer.curated_configs()]
    configs += [_random_config(rng) for _ in range(history - len(configs))]
    runs = [{"id": i, "config_id": i, "status": "done", "kind": "search", "finished_at": None, "params": p,
             "loss": list(enumerate(loss_curve(taste.loss, p, 100, 1000 + seed), start=1))}
            for i, p in enumerate(configs, start=1)]
    loss_only = config_values(runs, score_runs(runs))
    shown = sorted(loss_only, key=loss_only.get)[:rated]
    ratings = [(i, None, float(taste.rating(configs[i - 1], best, rng, 0.6))) for i in shown]
    liked = min(range(1, len(configs) + 1), key=lambda i: taste.value(configs[i - 1]))
    out: dict[str, Any] = {"liked_ratio": taste.value(configs[liked - 1]) / best}
    for phase, given in (("before", ratings), ("after", ratings + [(liked, None, 10.0)])):
        values = config_values(runs, score_runs(runs, given, (), weights))
        rated = {i for i, _, _ in given}  # the sampler knows which configs a person rated
        past = [ScoredConfig(space.searched_params(space.complete(p)), values[i], TrialState.COMPLETE,
                             rated=i in rated) for i, p in enumerate(configs, start=1)]
        controller = SearchController(study=optuna.create_study(direction="minimize"), space=space,
                                      seed=seed, history=lambda past=past: past, lr_bracket=False)
        proposals = [controller.next().config for _ in range(asks)]
        out[phase] = [taste.value(p) / best for p in proposals]
        out[f"{phase}_params"] = proposals
    out["changed"] = sum(a != b for a, b in zip(out["before_params"], out["after_params"])) / asks
    return out


def run(*, draws: int = 60, variants: tuple[str, ...] = ("", "human=4"),
        tastes: list[str] | None = None, log=print) -> dict[str, Any]:
    """The shift per taste and variant (variants as in :func:`bench.steering.apply_variant`)."""
    summary: dict[str, Any] = {}
    for taste_name in tastes or list(TASTES):
        for variant in variants:
            _, weights = apply_variant("rated@" + variant if variant else "rated")
            got = [draw(taste_name, seed, weights=weights) for seed in range(draws)]
            share = {phase: sum(r <= PREFERRED for d in got for r in d[phase]) / sum(len(d[phase]) for d in got)
                     for phase in ("before", "after")}
            row = {"preferred_before": share["before"], "preferred_after": share["after"],
                   "changed": sum(d["changed"] for d in got) / len(got)}
            summary.setdefault(taste_name, {})[variant or "shipped"] = row
            log(f"  {taste_name:<13} {variant or 'shipped':<11} in preferred region {share['before']:.2f} -> "
                f"{share['after']:.2f}; proposals changed {row['changed']:.0%}")
    apply_variant("rated")
    return summary


if __name__ == "__main__":
    run()
