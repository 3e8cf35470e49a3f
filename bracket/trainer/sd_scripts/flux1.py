"""FLUX.1 (dev, schnell) adapters: LoRA (``flux_train_network.py``), full FT (``flux_train.py``).

What is special about FLUX.1 in sd-scripts: four model files (``--pretrained_model_name_or_path``
DiT, ``--clip_l``, ``--t5xxl``, ``--ae``); the LoRA module is ``networks.lora_flux``; the
timestep distribution is chosen with ``--timestep_sampling`` (searched: ``shift`` with a
searched ``--discrete_flow_shift``, ``flux_shift``, ``sigmoid``) and the documented
``--model_prediction_type raw --guidance_scale 1.0``. Memory flags follow the VRAM table of
``docs/flux_train_network.md`` (``--fp8_base``, ``--blocks_to_swap``). The full fine-tune uses
the README's recipe: Adafactor (fixed LR), ``--fused_backward_pass``, ``--full_bf16``. The
``flux1_variant`` field (dev/schnell) only changes the sample prompts' steps and guidance;
sd-scripts recognises schnell from the checkpoint itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from bracket.search.configs import NamedConfig
from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, Knob
from bracket.trainer.base import ModelInput
from bracket.trainer.sd_scripts.base import SdScriptsFull, SdScriptsLoRA, SdScriptsTrainer
from bracket.trainer.tokenizers import CLIP_L_TOKENIZER, T5_XXL_TOKENIZER
from bracket.trainer.vram import ANY_TIER

FLUX1_INPUTS = (
    ModelInput("model_path", "--pretrained_model_name_or_path", optional=True),
    ModelInput("clip_l_path", "--clip_l", optional=True),
    ModelInput("t5xxl_path", "--t5xxl", optional=True),
    ModelInput("ae_path", "--ae", optional=True),
)
TIMESTEP_SAMPLING = ("shift", "flux_shift", "sigmoid")
_DOCS = "kohya-ss/sd-scripts"
_README = "kohya-ss/sd-scripts README (FLUX.1 section, commit c38b07d0)"
_DOC_SHIFT = 3.1582  # the README's shift for 1024 px


class _Flux1Family(SdScriptsTrainer):
    """The family's class data and helpers, mixed in before its LoRA and full adapters."""

    model_inputs: ClassVar[tuple[ModelInput, ...]] = FLUX1_INPUTS
    latent_cache_suffix = "_flux.npz"
    text_encoder_cache_suffix = "_flux_te.npz"
    cache_tool_flag = "--flux"
    save_precision = "bf16"  # FLUX.1 is released in bf16
    tokenizer_ids: tuple[str, ...] = (CLIP_L_TOKENIZER, T5_XXL_TOKENIZER)
    prompt_letters: ClassVar[tuple[str, ...]] = ("d", "w", "h", "s", "g", "n")

    def prompt_defaults(self) -> dict[str, Any]:
        size = self.resolution()
        schnell = self.field("flux1_variant", "dev") == "schnell"
        return {"width": size, "height": size, "steps": 4 if schnell else 20, "guidance": 3.5}

    def family_knobs(self) -> dict[str, Knob]:
        return {
            "timestep_sampling": CategoricalKnob(TIMESTEP_SAMPLING),
            "discrete_flow_shift": FloatKnob(1.0, 5.0, when={"timestep_sampling": ("shift",)}),
            "model_prediction_type": FixedKnob("raw"),
            "guidance_scale": FixedKnob(1.0),
        }

    def family_args(self, knobs: Mapping[str, Any]) -> list[str]:
        args = ["--timestep_sampling", str(knobs["timestep_sampling"])]
        if knobs["timestep_sampling"] == "shift":
            args += ["--discrete_flow_shift", repr(float(knobs["discrete_flow_shift"]))]
        return args + [
            "--model_prediction_type", str(knobs["model_prediction_type"]),
            "--guidance_scale", repr(float(knobs["guidance_scale"])),
        ]


def _flux(sampling: str = "flux_shift", shift: float | None = None) -> dict[str, Any]:
    knobs: dict[str, Any] = {"timestep_sampling": sampling, "model_prediction_type": "raw", "guidance_scale": 1.0}
    if shift is not None:
        knobs["discrete_flow_shift"] = shift
    return knobs


class Flux1LoRA(_Flux1Family, SdScriptsLoRA):
    """FLUX.1 LoRA (preset ``flux1-lora``)."""

    script = "flux_train_network.py"
    network_module = "networks.lora_flux"
    optimizers = ("AdamW8bit", "AdamW", "Adafactor", "Prodigy")
    lr_range = (1e-5, 2e-3)

    # docs/flux_train_network.md VRAM table (with --fp8_base): 16 GB swaps blocks, 12 GB swaps 16
    memory_plan = ((12, ("--fp8_base", "--blocks_to_swap", "16")), (16, ("--fp8_base", "--blocks_to_swap", "8")),
                   (24, ("--fp8_base",)))

    def baseline_config(self) -> NamedConfig:
        # The basic command of docs/flux_train_network.md.
        return NamedConfig("baseline", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
            "network_dim": 16, "network_alpha": 1, "batch_size": 1, **_flux("flux_shift"),
        }, source=f"{_DOCS} docs/flux_train_network.md basic command")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # The README's LoRA command: dim 4, AdamW8bit 1e-4, shift 3.1582, raw prediction.
            NamedConfig("readme-shift", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
                "network_dim": 4, "network_alpha": 1, "batch_size": 1, **_flux("shift", _DOC_SHIFT),
            }, source=_README),
            # The docs' low-memory optimizer: fixed-LR Adafactor with constant_with_warmup.
            NamedConfig("adafactor", {
                "optimizer_type": "Adafactor", "learning_rate": 1e-4, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 20, "network_dim": 16, "network_alpha": 16, "batch_size": 1,
                **_flux("flux_shift"),
            }, source=f"{_DOCS} docs/flux_train_network.md §6.1 (Adafactor settings)"),
            # Prodigy at lr 1.0 (its authors' advice for diffusion models).
            NamedConfig("prodigy", {
                "optimizer_type": "Prodigy", "adaptive_learning_rate": 1.0, "prodigy_d_coef": 1.0,
                "lr_scheduler": "constant", "network_dim": 16, "network_alpha": 16, "batch_size": 1,
                **_flux("flux_shift"),
            }, source="konstmish/prodigy README (diffusion models: use_bias_correction, safeguard_warmup)"),
            # ostris/ai-toolkit's FLUX.1 24 GB example: rank = alpha = 16, AdamW8bit 1e-4
            # (its sigmoid-like timestep sampling mapped to sd-scripts' sigmoid).
            NamedConfig("ai-toolkit-24gb", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
                "network_dim": 16, "network_alpha": 16, "batch_size": 1, **_flux("sigmoid"),
            }, source="ostris/ai-toolkit config/examples/train_lora_flux_24gb.yaml"),
        ]


class Flux1Full(_Flux1Family, SdScriptsFull):
    """FLUX.1 full fine-tune (preset ``flux1-full``): Adafactor only, as the README's recipe."""

    script = "flux_train.py"
    optimizers = ("Adafactor",)
    lr_range = (1e-6, 2e-4)

    # README: 24 GB with --blocks_to_swap 8 --full_bf16 --fused_backward_pass; --full_bf16 always
    memory_plan = ((12, ("--full_bf16", "--blocks_to_swap", "30")), (16, ("--full_bf16", "--blocks_to_swap", "20")),
                   (24, ("--full_bf16", "--blocks_to_swap", "8")), (ANY_TIER, ("--full_bf16",)))

    def baseline_config(self) -> NamedConfig:
        # The README's flux_train.py command.
        return NamedConfig("baseline", {
            "optimizer_type": "Adafactor", "learning_rate": 5e-5, "lr_scheduler": "constant_with_warmup",
            "lr_warmup_steps": 10, "batch_size": 1, **_flux("shift", _DOC_SHIFT),
        }, source=f"{_README}, flux_train.py command")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # docs/fine_tune.md flux_train.py example rate (1e-5).
            NamedConfig("fine-tune-doc-rate", {
                "optimizer_type": "Adafactor", "learning_rate": 1e-5, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 10, "batch_size": 1, **_flux("shift", _DOC_SHIFT),
            }, source=f"{_DOCS} docs/fine_tune.md flux_train.py example"),
            # The README rate with the resolution-aware flux_shift sampling.
            NamedConfig("readme-flux-shift", {
                "optimizer_type": "Adafactor", "learning_rate": 5e-5, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 10, "batch_size": 1, **_flux("flux_shift"),
            }, source=f"{_README} + docs/flux_train_network.md (flux_shift recommendation)"),
            # A gentler rate with a cosine decay for small datasets.
            NamedConfig("cosine-2e-5", {
                "optimizer_type": "Adafactor", "learning_rate": 2e-5, "lr_scheduler": "cosine",
                "lr_warmup_steps": 20, "batch_size": 1, **_flux("sigmoid"),
            }, source=f"{_README} recipe with a cosine decay (community fine-tuning practice)"),
        ]
