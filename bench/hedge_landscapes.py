"""Landscapes nobody tuned Bracket for (issue 46), over the real ``sdxl-lora`` space.

Four kinds, each written from fine-tuning behaviour with a source, before any run of the
search on them (the numbers are where the sources put them, not where the search does well):

* ``sdxl-other-family`` — **the optimum is another optimizer family than the curated
  region, at a narrow setting**. Prodigy's authors recommend it with a cosine decay and
  ``d_coef`` below 1 where its estimate of the step overshoots (Mishchenko & Defazio 2023,
  "Prodigy: An Expeditiously Adaptive Parameter-Free Learner", and the prodigyopt README's
  advice on ``d_coef`` and cosine annealing); kohya-ss users report the same for style
  LoRAs. Here D lands 1.8x too high (best ``d_coef`` ~0.55, near the bottom of its range),
  a decay gains 10 % for Prodigy only, and Prodigy's optimum is narrow (6x the curvature):
  the curated Prodigy (``d_coef`` 1, constant) looks 20 % worse than the Adam configs, which
  are 12 % behind the optimum at their best.
* ``sdxl-flat-noisy`` — **flat and noisy: about a third of the space is within 5 %, only
  the rate and the optimizer matter**. "LoRA Without Regret" (Schulman et al., Thinking
  Machines 2025) reports LoRA's loss nearly flat over a wide band around the best rate and
  barely dependent on rank; Hu et al. 2021 (LoRA) find rank matters little. Diffusion
  losses are noisy (random timesteps): 5 % noise on each observed value. The best step is
  below the kohya guides' (8e-6: a large, forgiving data set trained long) and the loss is
  flat below it (``a_low`` 0.025), Prodigy 8 % behind, rank, alpha (beyond the step),
  schedule and warm-up dead: the curated configs sit just outside the band.
* ``sdxl-slow-starter`` — **the best config looks worst early: fast rates lead at 1/3,
  then over-fit**. DreamBooth fine-tunes over-fit fast at high rates; a low rate with more
  steps wins (Ruiz et al. 2023, DreamBooth; Hugging Face's "Training Stable Diffusion with
  Dreambooth using Diffusers", 2022: "Dreambooth overfits very quickly … a low learning
  rate and progressively increasing the steps"). The best effective step is 8e-6 with a
  decaying schedule; every curated rate is 0.8–1.4 decades above it and over-fits (steep
  above: ``a_high`` 1.6, the over-fit arrives late, ``bench.halving_landscapes.Curve``), runs
  close their gap slowly (``speed`` 0.08: a low rate is far from its end at 1/3), and nothing
  diverges before 1.6 decades (the run only over-fits).
* ``sdxl-rate-low`` — **the rate that matters is lr·alpha/dim** (kept from
  ``bench/preset_landscapes.py``): the curated configs are right about the shape and off in
  the effective step; the kind where Bracket's warm start and LR bracket lead.
"""

from __future__ import annotations

from bench.preset_landscapes import LANDSCAPES as PRESET_LANDSCAPES
from bench.preset_landscapes import Landscape

PRESET = "sdxl-lora"

OTHER_FAMILY = Landscape(
    "sdxl-other-family", PRESET, "the optimum is Prodigy with a decay at d_coef ~0.55 (D overshoots 1.8x), narrow; "
    "the Adam family 12 % behind at its best; the curated Prodigy (d_coef 1, constant) looks worse than Adam",
    step_star=5e-5, family={"adam": 1.0, "adafactor": 1.03, "prodigy": 0.97}, prodigy_bias=1.8,
    decay_gain=0.10, decay_for=("prodigy",), width={"prodigy": 6.0}, rank_weight=0.0, ref_batch=1)

FLAT_NOISY = Landscape(
    "sdxl-flat-noisy", PRESET, "flat and noisy: about a third of the space within 5 %; only the rate (best step "
    "8e-6, flat below it) and the optimizer (Prodigy 8 % behind) matter; 5 % noise", step_star=8e-6, ref_batch=1,
    family={"prodigy": 1.08}, a_low=0.025, a_high=0.1, decay_gain=0.0, rank_weight=0.0, div=1.8, noise=0.05)

SLOW_STARTER = Landscape(
    "sdxl-slow-starter", PRESET, "slow starter: best effective step 8e-6 with a decay (looks worst early); the "
    "curated rates lead at 1/3 and over-fit (steep above), nothing diverges before 1.6 decades",
    step_star=8e-6, ref_batch=1, a_low=0.35, a_high=1.6, decay_gain=0.06, div=1.6, rank_weight=0.005,
    family={"prodigy": 1.04, "adafactor": 1.02}, prodigy_bias=4.0, speed=0.08)

RATE_LOW = next(land for land in PRESET_LANDSCAPES if land.name == "sdxl-rate-low")

#: kind → landscape, in the order the tables show them
KINDS: dict[str, Landscape] = {
    "rate-alpha-dim": RATE_LOW,
    "other-family": OTHER_FAMILY,
    "flat-noisy": FLAT_NOISY,
    "slow-starter": SLOW_STARTER,
}
LANDSCAPES: tuple[Landscape, ...] = tuple(KINDS.values())
