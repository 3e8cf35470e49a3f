"""The search space of the ai-toolkit adapters, and the job-file sections its knobs fill.

What ai-toolkit exposes for a LoRA and moves the loss (``toolkit/config_modules.py`` at the pin):
``train.optimizer`` / ``train.lr`` / ``train.optimizer_params``, ``train.lr_scheduler`` with
``lr_scheduler_params.num_warmup_steps`` (only ``constant_with_warmup`` takes a warm-up:
``toolkit/scheduler.py`` hands ``cosine`` to torch's ``CosineAnnealingLR``), ``network.type``
``lora`` (``linear``/``linear_alpha``) or ``lokr`` (``lokr_factor``; ``lokr_full_rank`` is on by
default), ``train.batch_size`` and ``train.gradient_accumulation``, ``train.timestep_type``
(flow-matching models), ``datasets[].caption_dropout_rate``, ``train.noise_offset`` and
``train.ema_config``. The steps are the session's (``train.steps``).

Prodigy (``train.optimizer: prodigy``, the ``prodigyopt`` package ai-toolkit requires) runs at
``lr`` 1.0 (ai-toolkit raises any ``lr`` under 0.1 to 1.0); its searched step is
``prodigy_d_coef``, handed over in ``optimizer_params``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, IntKnob, SearchSpace

ADAM_FAMILY = ("adamw8bit", "adamw")
PRODIGY = "prodigy"
OPTIMIZERS = (*ADAM_FAMILY, PRODIGY)
SCHEDULERS = ("constant", "constant_with_warmup", "cosine")
WARMUP_SCHEDULERS = ("constant_with_warmup",)
NETWORK_TYPES = ("lora", "lokr")
RANKS = (8, 16, 32, 64)
ALPHAS = (1, 4, 8, 16, 32, 64)
#: -1: ai-toolkit picks the largest factor (its default)
LOKR_FACTORS = (-1, 4, 8, 16)
#: ``train.timestep_type`` values of the flow-matching trainers (``SDTrainer``/``flowmatch`` scheduler)
FLOW_TIMESTEPS = ("sigmoid", "linear", "shift", "weighted")
#: Prodigy's diffusion advice (konstmish/prodigy README), decoupled weight decay as ai-toolkit's examples
PRODIGY_PARAMS = {"weight_decay": 0.01, "decouple": True, "use_bias_correction": True, "safeguard_warmup": True}
#: the weight decay of ai-toolkit's UI job template (``ui/src/app/jobs/new/jobConfig.ts``) for AdamW
ADAM_WEIGHT_DECAY = 1e-4
UI_JOB = "ostris/ai-toolkit ui/src/app/jobs/new/jobConfig.ts"
EXAMPLES = "ostris/ai-toolkit config/examples"


def recipe(**knobs: Any) -> dict[str, Any]:
    """A config on ai-toolkit's UI job template (AdamW8bit at 1e-4, LoRA 32/32, constant schedule,
    no EMA, caption dropout 0.05, no noise offset, sigmoid timesteps), with ``knobs`` changed."""
    base: dict[str, Any] = {
        "optimizer_type": "adamw8bit", "learning_rate": 1e-4, "lr_scheduler": "constant", "network_type": "lora",
        "network_dim": 32, "network_alpha": 32, "gradient_accumulation": 1, "caption_dropout_rate": 0.05,
        "noise_offset": 0.0, "use_ema": False, "timestep_type": "sigmoid",
    }
    base.update(knobs)
    if base.get("network_type") == "lokr":
        base.pop("network_dim", None)
        base.pop("network_alpha", None)
    if base.get("optimizer_type") == PRODIGY:
        base.pop("learning_rate", None)
    return {k: v for k, v in base.items() if v is not None}


def lora_space(*, learning_rate: tuple[float, float], timestep_types: tuple[str, ...] = FLOW_TIMESTEPS,
               accumulation: tuple[int, ...] = (1, 2, 4)) -> SearchSpace:
    """The LoRA/LoKr space of one model family; ``timestep_types`` () for a model without them (SDXL)."""
    knobs: dict[str, Any] = {
        "optimizer_type": CategoricalKnob(OPTIMIZERS),
        "learning_rate": FloatKnob(learning_rate[0], learning_rate[1], log=True,
                                   when={"optimizer_type": ADAM_FAMILY}),
        "prodigy_d_coef": FloatKnob(0.5, 2.0, log=True, when={"optimizer_type": (PRODIGY,)}),
        "lr_scheduler": CategoricalKnob(SCHEDULERS),
        "lr_warmup_steps": IntKnob(0, 100, step=10, when={"lr_scheduler": WARMUP_SCHEDULERS}),
        "network_type": CategoricalKnob(NETWORK_TYPES),
        "network_dim": CategoricalKnob(RANKS, when={"network_type": ("lora",)}),
        "network_alpha": CategoricalKnob(ALPHAS, when={"network_type": ("lora",)}),
        "lokr_factor": CategoricalKnob(LOKR_FACTORS, when={"network_type": ("lokr",)}),
        "batch_size": FixedKnob(1),
        "gradient_accumulation": CategoricalKnob(accumulation) if len(accumulation) > 1 else FixedKnob(accumulation[0]),
        "caption_dropout_rate": FloatKnob(0.0, 0.1),
        "noise_offset": FloatKnob(0.0, 0.1),
        "use_ema": CategoricalKnob((False, True)),
    }
    if timestep_types:
        knobs["timestep_type"] = (CategoricalKnob(timestep_types) if len(timestep_types) > 1
                                  else FixedKnob(timestep_types[0]))
    return SearchSpace(knobs)


def train_section(knobs: Mapping[str, Any]) -> dict[str, Any]:
    """The ``train`` keys the knobs set."""
    optimizer = str(knobs["optimizer_type"])
    train: dict[str, Any] = {"optimizer": optimizer, "batch_size": int(knobs.get("batch_size", 1)),
                             "gradient_accumulation": int(knobs.get("gradient_accumulation", 1)),
                             "lr_scheduler": str(knobs["lr_scheduler"]),
                             "noise_offset": float(knobs.get("noise_offset", 0.0))}
    if optimizer == PRODIGY:
        train["lr"] = 1.0
        train["optimizer_params"] = {**PRODIGY_PARAMS, "d_coef": float(knobs.get("prodigy_d_coef", 1.0))}
    else:
        train["lr"] = float(knobs["learning_rate"])
        train["optimizer_params"] = {"weight_decay": ADAM_WEIGHT_DECAY}
    if knobs["lr_scheduler"] in WARMUP_SCHEDULERS:
        # ai-toolkit's default without it is 1000 warm-up steps: always say how many
        train["lr_scheduler_params"] = {"num_warmup_steps": int(knobs.get("lr_warmup_steps", 0))}
    if "timestep_type" in knobs:
        train["timestep_type"] = str(knobs["timestep_type"])
    train["ema_config"] = {"use_ema": bool(knobs.get("use_ema", False)), "ema_decay": 0.99}
    return train


def network_section(knobs: Mapping[str, Any]) -> dict[str, Any]:
    """The ``network`` section: a LoRA's rank and alpha, or a full-rank LoKr's factor."""
    if knobs.get("network_type") == "lokr":
        return {"type": "lokr", "lokr_full_rank": True, "lokr_factor": int(knobs["lokr_factor"])}
    return {"type": "lora", "linear": int(knobs["network_dim"]), "linear_alpha": int(knobs["network_alpha"])}
