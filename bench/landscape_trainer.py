#!/usr/bin/env python3
"""Synthetic fine-tuning response surfaces, and a fake trainer that trains on them.

The search-efficiency benchmark (``bench/search_efficiency.py``) needs trainers whose best
configuration is known exactly, yet which behave like real fine-tunes as the session sees
them. This file is both:

* a library: :data:`LANDSCAPES`, :func:`quality` (the noise-free final loss of a config),
  :func:`optimum` (the true optimum of a landscape, found by exhaustive scan), and
* a real executable trainer with the demo trainer's command line (``--learning_rate``,
  ``--optimizer_type``, ``--lr_scheduler``, ``--lr_warmup_steps``, ``--max_train_steps``,
  ``--seed``, ``--logging_dir``; anything else is ignored). The demo-cpu preset runs it when
  its *Training script* field points here; ``BRACKET_BENCH_LANDSCAPE`` names the landscape
  (or ``oracle:<taste>``: a rater's taste as the loss, ``bench/oracle.py``).
  It writes ``loss/current`` for every step into a real TensorBoard event file — encoded by
  hand (protobuf + TFRecord framing with masked CRC32C) so that a run takes ~30 ms instead
  of the ~400 ms that importing tensorboard costs. It uses only the standard library.

The model (knobs of the demo space: optimizer_type, learning_rate, lr_scheduler,
lr_warmup_steps). With ``x = log10(lr / lr*(optimizer))`` (decades from the optimizer's best
rate) the loss the run converges to is::

    floor = 0.1 * F(optimizer) * S(scheduler) * (1 + a_lo * x**2 if x < 0 else 1 + a_hi * x**2)
            + 0.1 * warmup_penalty

* ``lr*`` depends on the optimizer (Adam kinds ~10x lower than SGD and Adagrad), and on the
  LoRA rank where the real space has one. The demo space has no rank knob, so rank is modelled
  as a hidden property of the landscape: ``lr* ∝ 1 / sqrt(rank / 16)`` (the usual rule for
  LoRA with a fixed alpha), which shifts every optimum — see ``high-rank``;
* ``F`` (how low an optimizer can go) and ``S`` (cosine 0.97, linear 0.98, constant with
  warmup 0.99, constant 1.0) are small multiplicative effects;
* warmup: ``constant`` ignores ``lr_warmup_steps`` (as in diffusers and sd-scripts); on the
  other schedulers ``w = min(1, warmup / 10)`` is how much warmup the run got. Without it a
  high rate pays ``warmup_penalty = k_warm * (1 - w) * clip(x + 0.5, 0, 1)`` and diverges at
  a lower rate: the run diverges when ``x > log10(div_ratio) + log10(warmup_gain) * w``;
* the run converges at speed ``10 ** (0.5 * min(x, 0))`` (too low a rate is still falling at
  the end), so the *quality* of a config — its noise-free loss at the last step — also counts
  the part of the loss it had not yet lost;
* noise like real runs: a per-seed offset of ``seed_sigma`` (relative) and per-step noise of
  ``step_sigma`` (relative), both from ``random.Random(seed)``;
* knobs listed in ``dead`` do nothing at all in that landscape.

A diverged run's loss rises steadily (the session stops it and scores it worst); its
quality is :data:`DIVERGED_QUALITY`.

**Diffusion-like noise** (landscapes with ``diffusion=True``, used by ``bench/noise.py``).
A diffusion trainer draws a timestep and noise per sample at every step, and the loss depends
strongly on the timestep (an order of magnitude across noise levels, Karras et al. 2022,
"Elucidating the design space", Fig. 5; Hang et al. 2023, "Min-SNR"), so with batch sizes of
1–4 the logged per-step loss varies by tens of percent around its trend — as kohya LoRA loss
logs show. Modelled as a mean-one log-normal multiplier per step with ``timestep_sigma``
(0.55: a coefficient of variation of ~0.6). A seed also changes the model itself (init and data
order): a per-seed offset ``seed_sigma`` of the true loss, shared by training and validation
loss. The held-out **validation loss** (``--validation_split`` with ``--validate_every_n_steps``)
is evaluated at fixed timesteps with fixed noise, so only a small measurement noise
``val_sigma`` remains. Over-fitting: with the effective progress ``e = step/steps *
10 ** (0.5 * x)`` (a higher rate gets further), the held-out loss gains
``0.1 * k_over * max(0, e - onset) ** 2`` (a higher rate also converges faster here, up to
``10 ** 0.25``) while the training loss *falls* by half of that
(memorisation): the best step of a high rate comes before the end, and the training loss
does not show it. The quality of a config is then its true held-out loss at its best
evaluated step (:func:`quality`), and :func:`quality_at` gives it at any step.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

LANDSCAPE_ENV = "BRACKET_BENCH_LANDSCAPE"
OPTIMIZERS = ("AdamW", "Adam", "RAdam", "SGD", "Adagrad")
SCHEDULERS = ("constant", "constant_with_warmup", "cosine", "linear")
SCHEDULER_FACTOR = {"constant": 1.0, "constant_with_warmup": 0.99, "cosine": 0.97, "linear": 0.98}
WARMUPS = (0, 5, 10, 15, 20)
LR_RANGE = (1e-5, 3e-2)
LOSS_SCALE = 0.1
START_LOSS = 1.0
DIVERGED_QUALITY = START_LOSS


@dataclass(frozen=True)
class Landscape:
    """One response surface over the demo space (see the module docstring for the formula)."""

    name: str
    description: str
    #: best learning rate per optimizer at LoRA rank 16
    lr_star: dict[str, float]
    #: how low each optimizer can go (multiplies the floor)
    floor: dict[str, float]
    rank: int = 16
    a_lo: float = 0.35
    a_hi: float = 1.0
    #: divergence at lr > div_ratio * lr* without warmup, times warmup_gain with full warmup
    div_ratio: float = 8.0
    warmup_gain: float = 2.0
    k_warm: float = 0.05
    seed_sigma: float = 0.01
    step_sigma: float = 0.03
    dead: tuple[str, ...] = ()
    scheduler_factor: dict[str, float] = field(default_factory=lambda: dict(SCHEDULER_FACTOR))
    #: diffusion-like noise, validation loss and over-fitting (module docstring)
    diffusion: bool = False
    timestep_sigma: float = 0.55
    val_sigma: float = 0.005
    onset: float = 0.8
    k_over: float = 0.3
    #: also diverges wherever this landscape does (a taste's surface in bench/oracle.py)
    diverges_with: "Landscape | None" = None

    def best_lr(self, optimizer: str) -> float:
        return self.lr_star[optimizer] / math.sqrt(self.rank / 16)


_ADAM_LIKE_FLOOR = {"AdamW": 1.0, "Adam": 1.01, "RAdam": 1.0, "SGD": 1.07, "Adagrad": 1.09}

LANDSCAPES: dict[str, Landscape] = {landscape.name: landscape for landscape in (
    Landscape(
        "reference",
        "The demo's own assumptions hold: Adam kinds best near 2e-3, SGD near 2e-2; the curated "
        "configs are close to the optimum (the warm start should win at once).",
        lr_star={"AdamW": 2e-3, "Adam": 2e-3, "RAdam": 3e-3, "SGD": 2e-2, "Adagrad": 1e-2},
        floor=_ADAM_LIKE_FLOOR,
    ),
    Landscape(
        "high-rank",
        "Same optimizers, but a hidden LoRA rank of 128 instead of 16 moves every best rate "
        "down by sqrt(8) (0.45 decades) and divergence comes sooner: the curated rates are "
        "now too high and the search has to find the shifted optimum.",
        lr_star={"AdamW": 2e-3, "Adam": 2e-3, "RAdam": 3e-3, "SGD": 2e-2, "Adagrad": 1e-2},
        floor=_ADAM_LIKE_FLOOR, rank=128, div_ratio=5.0,
    ),
    Landscape(
        "warmup-critical",
        "A high-rate regime: Adam kinds are best near 8e-3, which only trains well with at "
        "least 10 warmup steps on a scheduler that honours them (not 'constant'); without "
        "warmup a high rate pays a large penalty and diverges at 1.5x its best rate.",
        lr_star={"AdamW": 8e-3, "Adam": 8e-3, "RAdam": 1e-2, "SGD": 3e-2, "Adagrad": 3e-2},
        floor=_ADAM_LIKE_FLOOR, div_ratio=1.5, warmup_gain=4.0, k_warm=0.4,
    ),
    Landscape(
        "flat-noisy",
        "Only the optimizer and the learning rate matter (scheduler and warmup do nothing); "
        "Adam kinds are best near 3e-4, the optimum is broad and seed noise is 3x larger, so "
        "single runs mislead more often.",
        lr_star={"AdamW": 3e-4, "Adam": 3e-4, "RAdam": 4e-4, "SGD": 5e-3, "Adagrad": 2e-3},
        floor=_ADAM_LIKE_FLOOR, a_lo=0.25, a_hi=0.6, seed_sigma=0.03, step_sigma=0.05,
        dead=("lr_scheduler", "lr_warmup_steps"),
    ),
    Landscape(
        "diffusion-lora",
        "The reference landscape with diffusion-like noise: per-step loss CV ~0.6 from timestep "
        "sampling, 2 % per-seed offsets of the true loss, a validation loss with 0.5 % noise, and "
        "over-fitting that sets in late (at 80 % of the run at the best rate, sooner at higher rates).",
        lr_star={"AdamW": 2e-3, "Adam": 2e-3, "RAdam": 3e-3, "SGD": 2e-2, "Adagrad": 1e-2},
        floor=_ADAM_LIKE_FLOOR, seed_sigma=0.02, diffusion=True,
    ),
    Landscape(
        "diffusion-overfit",
        "Diffusion-like noise as in diffusion-lora, but Adam kinds are best near 1e-3 and over-fit "
        "from half of the run on: the curated rate (2e-3) is over-cooked by the last step, and the "
        "best (config, step) is often an earlier step of a higher rate.",
        lr_star={"AdamW": 1e-3, "Adam": 1e-3, "RAdam": 1.5e-3, "SGD": 1e-2, "Adagrad": 5e-3},
        floor=_ADAM_LIKE_FLOOR, seed_sigma=0.02, diffusion=True, onset=0.5, k_over=0.6,
    ),
)}

#: evaluations per run of the validation loss (the session's default: every steps // 5)
EVALUATIONS = 5


def _effective(landscape: Landscape, params: dict) -> tuple[str, float, str, float]:
    optimizer = str(params.get("optimizer_type", "AdamW"))
    lr = max(float(params.get("learning_rate", 1e-4)), 1e-12)
    scheduler = str(params.get("lr_scheduler", "constant"))
    warmup = float(params.get("lr_warmup_steps", 0))
    if "lr_scheduler" in landscape.dead:
        scheduler = "constant_with_warmup"
    if "lr_warmup_steps" in landscape.dead:
        warmup = 10.0
    if scheduler == "constant":
        warmup = 0.0
    return optimizer, lr, scheduler, warmup


def _x(landscape: Landscape, optimizer: str, lr: float) -> float:
    return math.log10(lr) - math.log10(landscape.best_lr(optimizer))


def diverges(landscape: Landscape, params: dict) -> bool:
    """True when this config's loss blows up."""
    if landscape.diverges_with is not None and diverges(landscape.diverges_with, params):
        return True
    optimizer, lr, _, warmup = _effective(landscape, params)
    got = min(1.0, warmup / 10.0)
    limit = math.log10(landscape.div_ratio) + math.log10(landscape.warmup_gain) * got
    return _x(landscape, optimizer, lr) > limit


def floor_loss(landscape: Landscape, params: dict) -> float:
    """The loss this config converges to (no noise, infinitely long run)."""
    optimizer, lr, scheduler, warmup = _effective(landscape, params)
    x = _x(landscape, optimizer, lr)
    bowl = 1 + (landscape.a_lo if x < 0 else landscape.a_hi) * x * x
    got = min(1.0, warmup / 10.0)
    penalty = landscape.k_warm * (1.0 - got) * min(1.0, max(0.0, x + 0.5))
    factor = landscape.floor[optimizer] * landscape.scheduler_factor.get(scheduler, 1.0)
    return LOSS_SCALE * (factor * bowl + penalty)


def expected_loss(landscape: Landscape, params: dict, step: int, steps: int) -> float:
    """The noise-free loss at ``step`` of ``steps`` (not for diverging configs)."""
    optimizer, lr, _, warmup = _effective(landscape, params)
    x = _x(landscape, optimizer, lr)
    final = floor_loss(landscape, params)
    # a diffusion landscape's higher rate also learns faster (and over-fits sooner, :func:`overfit`)
    speed = 10 ** (0.5 * (min(x, 0.5) if landscape.diffusion else min(x, 0.0)))
    progress = max(0.0, step - warmup / 2) / max(1, steps)
    return final + (START_LOSS - final) * math.exp(-5.0 * speed * progress)


def overfit(landscape: Landscape, params: dict, step: int, steps: int) -> float:
    """The over-fitting part of the held-out loss at ``step`` (0 for non-diffusion landscapes)."""
    if not landscape.diffusion:
        return 0.0
    optimizer, lr, _, _ = _effective(landscape, params)
    reach = step / max(1, steps) * 10 ** (0.5 * _x(landscape, optimizer, lr))
    return LOSS_SCALE * landscape.k_over * max(0.0, reach - landscape.onset) ** 2


def quality_at(landscape: Landscape, params: dict, step: int, steps: int = 100) -> float:
    """The noise-free held-out loss of a config at ``step`` of ``steps`` (lower is better)."""
    if diverges(landscape, params):
        return DIVERGED_QUALITY
    return expected_loss(landscape, params, step, steps) + overfit(landscape, params, step, steps)


def evaluated_steps(steps: int) -> list[int]:
    """The steps a run's validation loss is evaluated at (every ``steps // EVALUATIONS``)."""
    every = max(1, steps // EVALUATIONS)
    return sorted({s for s in range(every, steps + 1, every)} | {steps})


def true_best_step(landscape: Landscape, params: dict, steps: int = 100) -> int:
    """The evaluated step with the lowest true held-out loss (the last one on a tie)."""
    return min(evaluated_steps(steps), key=lambda s: (quality_at(landscape, params, s, steps), -s))


def quality(landscape: Landscape, params: dict, steps: int = 100) -> float:
    """What a search should minimise (lower is better): the noise-free loss at the last step;
    for diffusion landscapes the true held-out loss at the config's best evaluated step."""
    if diverges(landscape, params):
        return DIVERGED_QUALITY
    if landscape.diffusion:
        return min(quality_at(landscape, params, s, steps) for s in evaluated_steps(steps))
    return expected_loss(landscape, params, steps, steps)


def optimum(landscape: Landscape, steps: int = 100, per_decade: int = 200) -> tuple[float, dict]:
    """The best quality over the demo space and a config reaching it (exhaustive scan)."""
    low, high = (math.log10(v) for v in LR_RANGE)
    count = int((high - low) * per_decade) + 1
    rates = [10 ** (low + (high - low) * i / (count - 1)) for i in range(count)]
    rates += [landscape.best_lr(o) for o in OPTIMIZERS if LR_RANGE[0] <= landscape.best_lr(o) <= LR_RANGE[1]]
    best: tuple[float, dict] = (math.inf, {})
    for optimizer in OPTIMIZERS:
        for scheduler in SCHEDULERS:
            for warmup in WARMUPS:
                for lr in rates:
                    params = {"optimizer_type": optimizer, "learning_rate": lr, "lr_scheduler": scheduler,
                              "lr_warmup_steps": warmup}
                    value = quality(landscape, params, steps)
                    if value < best[0]:
                        best = (value, params)
    return best


def loss_curve(landscape: Landscape, params: dict, steps: int, seed: int) -> list[float]:
    """The logged loss of steps 1..steps, with seed noise."""
    rng = random.Random(seed * 7919 + 17)
    offset = rng.gauss(0.0, landscape.seed_sigma)
    curve = []
    diverging = diverges(landscape, params)
    sigma = landscape.timestep_sigma
    for step in range(1, steps + 1):
        if diverging:
            value = START_LOSS * (0.8 + 0.15 * step)
        else:
            value = expected_loss(landscape, params, step, steps) * (1.0 + offset)
        if landscape.diffusion and not diverging:
            value = ((value - 0.5 * overfit(landscape, params, step, steps))
                     * math.exp(rng.gauss(0.0, sigma) - sigma ** 2 / 2))
            curve.append(max(1e-4, value))
            continue
        curve.append(max(1e-4, value * (1.0 + rng.gauss(0.0, landscape.step_sigma))))
    return curve


def validation_curve(landscape: Landscape, params: dict, steps: int, seed: int, every: int) -> list[tuple[int, float]]:
    """(step, validation loss) every ``every`` steps and at the last: the held-out loss with the
    run's seed offset and a small measurement noise."""
    offset = random.Random(seed * 7919 + 17).gauss(0.0, landscape.seed_sigma)  # the same draw as loss_curve
    rng = random.Random(seed * 104729 + 3)
    points = sorted({s for s in range(every, steps + 1, every)} | {steps})
    return [(s, max(1e-4, quality_at(landscape, params, s, steps) * (1.0 + offset)
                    * (1.0 + rng.gauss(0.0, landscape.val_sigma)))) for s in points]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="synthetic-landscape fake trainer")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--logging_dir", default=None)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--optimizer_type", default="AdamW")
    parser.add_argument("--lr_scheduler", default="constant")
    parser.add_argument("--lr_warmup_steps", type=float, default=0)
    parser.add_argument("--max_train_steps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--validation_split", type=float, default=0.0)
    parser.add_argument("--validate_every_n_steps", type=int, default=None)
    args, _unknown = parser.parse_known_args(argv)
    name = os.environ.get(LANDSCAPE_ENV, "reference")
    landscape = LANDSCAPES.get(name)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: bench/ importable
    from bench.tfevents_writer import write_tfevents
    if landscape is None and name.startswith("oracle:"):  # a taste's own surface, bench/oracle.py
        from bench.oracle import landscape_for
        landscape = landscape_for(name)
    if landscape is None:
        print(f"landscape trainer: unknown {LANDSCAPE_ENV} {name!r}; known: {', '.join(LANDSCAPES)}, "
              "oracle:<taste>", file=sys.stderr)
        return 2
    params = {"optimizer_type": args.optimizer_type, "learning_rate": args.learning_rate,
              "lr_scheduler": args.lr_scheduler, "lr_warmup_steps": args.lr_warmup_steps}
    steps = max(1, args.max_train_steps)
    curve = loss_curve(landscape, params, steps, args.seed)
    validation = None
    if args.validation_split > 0 and args.validate_every_n_steps and not diverges(landscape, params):
        validation = ("loss/validation/step_average",
                      validation_curve(landscape, params, steps, args.seed, args.validate_every_n_steps))
    output_dir = Path(args.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    if args.logging_dir:
        stamp = time.strftime("%Y%m%d%H%M%S")
        write_tfevents(Path(args.logging_dir) / stamp / "network_train", "loss/current", curve, validation)
    (output_dir / "demo.safetensors").write_bytes(b"landscape")
    print(f"landscape {name}: final loss {curve[-1]:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
