"""Search spaces and optimizer arguments shared by the musubi-tuner adapters.

Every musubi adapter searches the same kinds of knobs — optimizer, learning rate, LR
schedule, warmup, LoRA rank/alpha, timestep sampling and flow shift — over ranges that
differ per architecture. :func:`lora_space` and :func:`full_space` build those spaces from
a few numbers, so an architecture module only states its ranges.

Prodigy is searched through a *conditional* knob: its learning rate is fixed at 1.0 and
the searched quantity is ``prodigy_d_coef``, active only when ``optimizer_type`` is
Prodigy; ``learning_rate`` is active only for the Adam family. That keeps a curated
Prodigy config valid in every narrowed space where Prodigy is still a choice, and keeps
a learning-rate bound set by a person from ever clamping Prodigy's 1.0.

:func:`optimizer_flags` turns the knobs into ``--optimizer_type``/``--learning_rate``/
``--optimizer_args`` words; musubi has no working default optimizer, so it always emits
``--optimizer_type``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bracket.search.configs import NamedConfig
from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, IntKnob, SearchSpace

ADAM_FAMILY = ("AdamW8bit", "AdamW")
#: Prodigy is not built into musubi-tuner; it is loaded by dotted path (pip install prodigyopt)
PRODIGY = "prodigyopt.Prodigy"
ADAFACTOR = "Adafactor"
LORA_OPTIMIZERS = (*ADAM_FAMILY, PRODIGY)
FULL_OPTIMIZERS = (ADAFACTOR, "AdamW8bit")

LORA_SCHEDULERS = ("constant", "constant_with_warmup", "cosine", "linear")
FULL_SCHEDULERS = ("constant_with_warmup", "cosine", "linear", "constant")
#: schedulers that accept a warmup (``constant`` raises when --lr_warmup_steps is not 0)
WARMUP_SCHEDULERS = ("constant_with_warmup", "cosine", "linear")

NETWORK_DIMS = (8, 16, 32, 64, 128)
#: musubi's parser default alpha is 1, which the docs' examples rely on
NETWORK_ALPHAS = (1, 4, 8, 16, 32, 64, 128)

#: Adafactor as a fixed-LR optimizer (the musubi full fine-tune docs' arguments)
ADAFACTOR_ARGS = ("relative_step=False", "scale_parameter=False", "warmup_init=False")
#: the Prodigy README's advice for diffusion models, plus decoupled weight decay
PRODIGY_ARGS = ("decouple=True", "weight_decay=0.01", "use_bias_correction=True", "safeguard_warmup=True")


def _sampling_knobs(
    timestep_samplings: tuple[str, ...], flow_shift: tuple[float, float] | None
) -> dict[str, Any]:
    knobs: dict[str, Any] = {
        "timestep_sampling": (
            CategoricalKnob(timestep_samplings) if len(timestep_samplings) > 1 else FixedKnob(timestep_samplings[0])
        ),
    }
    if flow_shift is not None and "shift" in timestep_samplings:
        knobs["discrete_flow_shift"] = FloatKnob(flow_shift[0], flow_shift[1], when={"timestep_sampling": ("shift",)})
    knobs["weighting_scheme"] = FixedKnob("none")
    return knobs


def lora_space(
    *,
    learning_rate: tuple[float, float],
    timestep_samplings: tuple[str, ...],
    flow_shift: tuple[float, float] | None,
    optimizers: tuple[str, ...] = LORA_OPTIMIZERS,
) -> SearchSpace:
    """The LoRA search space of one architecture."""
    adam = tuple(o for o in optimizers if o in ADAM_FAMILY)
    knobs: dict[str, Any] = {"optimizer_type": CategoricalKnob(optimizers)}
    if adam:
        knobs["learning_rate"] = FloatKnob(learning_rate[0], learning_rate[1], log=True, when={"optimizer_type": adam})
    if PRODIGY in optimizers:
        knobs["prodigy_d_coef"] = FloatKnob(0.5, 2.0, log=True, when={"optimizer_type": (PRODIGY,)})
    knobs["lr_scheduler"] = CategoricalKnob(LORA_SCHEDULERS)
    knobs["lr_warmup_steps"] = IntKnob(0, 100, step=10, when={"lr_scheduler": WARMUP_SCHEDULERS})
    knobs["network_dim"] = CategoricalKnob(NETWORK_DIMS)
    knobs["network_alpha"] = CategoricalKnob(NETWORK_ALPHAS)
    knobs.update(_sampling_knobs(timestep_samplings, flow_shift))
    knobs["batch_size"] = FixedKnob(1)
    return SearchSpace(knobs)


def full_space(
    *,
    learning_rate: tuple[float, float],
    timestep_samplings: tuple[str, ...],
    flow_shift: tuple[float, float] | None,
    optimizers: tuple[str, ...] = FULL_OPTIMIZERS,
) -> SearchSpace:
    """The full fine-tune search space of one architecture (no Prodigy: its state is too big)."""
    knobs: dict[str, Any] = {
        "optimizer_type": CategoricalKnob(optimizers),
        "learning_rate": FloatKnob(learning_rate[0], learning_rate[1], log=True),
        "lr_scheduler": CategoricalKnob(FULL_SCHEDULERS),
        "lr_warmup_steps": IntKnob(0, 100, step=10, when={"lr_scheduler": WARMUP_SCHEDULERS}),
    }
    knobs.update(_sampling_knobs(timestep_samplings, flow_shift))
    knobs["batch_size"] = FixedKnob(1)
    return SearchSpace(knobs)


def _number(value: Any) -> str:
    return repr(float(value))


def optimizer_flags(knobs: Mapping[str, Any]) -> list[str]:
    """``--optimizer_type``, ``--learning_rate`` and ``--optimizer_args`` for ``knobs``."""
    optimizer = str(knobs["optimizer_type"])
    words = ["--optimizer_type", optimizer]
    if optimizer == PRODIGY:
        d_coef = float(knobs.get("prodigy_d_coef", 1.0))
        return words + ["--learning_rate", "1.0", "--optimizer_args", *PRODIGY_ARGS, f"d_coef={d_coef!r}"]
    words += ["--learning_rate", _number(knobs["learning_rate"])]
    if optimizer == ADAFACTOR:
        words += ["--optimizer_args", *ADAFACTOR_ARGS]
    return words


def schedule_flags(knobs: Mapping[str, Any]) -> list[str]:
    """``--lr_scheduler`` and, for schedulers that take one, ``--lr_warmup_steps``."""
    words = ["--lr_scheduler", str(knobs["lr_scheduler"])]
    if knobs["lr_scheduler"] in WARMUP_SCHEDULERS and int(knobs.get("lr_warmup_steps", 0)):
        words += ["--lr_warmup_steps", str(int(knobs["lr_warmup_steps"]))]
    return words


def timestep_flags(knobs: Mapping[str, Any]) -> list[str]:
    """``--timestep_sampling``, ``--discrete_flow_shift`` (for ``shift``) and ``--weighting_scheme``."""
    words = ["--timestep_sampling", str(knobs["timestep_sampling"])]
    if knobs["timestep_sampling"] == "shift" and "discrete_flow_shift" in knobs:
        words += ["--discrete_flow_shift", _number(knobs["discrete_flow_shift"])]
    if "weighting_scheme" in knobs:
        words += ["--weighting_scheme", str(knobs["weighting_scheme"])]
    return words


def network_flags(module: str, knobs: Mapping[str, Any]) -> list[str]:
    """``--network_module`` (musubi has no default) and the LoRA rank and alpha."""
    return [
        "--network_module", module,
        "--network_dim", str(int(knobs["network_dim"])),
        "--network_alpha", str(int(knobs["network_alpha"])),
    ]


AI_TOOLKIT = "ostris/ai-toolkit config/examples"


def community_lora_configs(sampling: Mapping[str, Any], *, example: str) -> list[NamedConfig]:
    """Three well-known LoRA starting points, on the architecture's preferred ``sampling``.

    ``example`` names the ai-toolkit example file of this (or the closest) architecture.
    """
    return [
        # ai-toolkit's default LoRA recipe: AdamW8bit at 1e-4, alpha equal to the rank.
        NamedConfig("ai-toolkit-adamw8bit", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
            "network_dim": 16, "network_alpha": 16, **sampling,
        }, source=f"{AI_TOOLKIT}/{example} (AdamW8bit, lr 1e-4, rank 16 = alpha)"),
        # Prodigy at lr 1.0 with weight decay 0.01 and a constant schedule (ai-toolkit's Z-Image
        # examples); safeguard_warmup/use_bias_correction as the Prodigy README advises.
        NamedConfig("prodigy", {
            "optimizer_type": PRODIGY, "prodigy_d_coef": 1.0, "lr_scheduler": "constant",
            "network_dim": 32, "network_alpha": 32, **sampling,
        }, source=f"{AI_TOOLKIT}/train_lora_zimage_base_32gb.yaml (Prodigy lr 1.0); konstmish/prodigy README"),
        # musubi's Style-Friendly log-SNR timestep sampler on the docs' optimizer settings.
        NamedConfig("logsnr", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant_with_warmup",
            "lr_warmup_steps": 10, "network_dim": 32, "network_alpha": 1, "timestep_sampling": "logsnr",
        }, source="kohya-ss/musubi-tuner docs/advanced_config.md, Style-Friendly SNR sampler (logsnr)"),
    ]
