"""Lumina-Image 2.0 adapters: LoRA (``lumina_train_network.py``), full FT (``lumina_train.py``).

What is special about Lumina in sd-scripts: a Next-DiT with one text encoder, Gemma2 2B
(``--gemma2``), and the FLUX.1 autoencoder (``--ae``); the LoRA module is
``networks.lora_lumina``. docs/lumina_train_network.md §6.1 recommends ``--timestep_sampling
nextdit_shift`` (a resolution-aware shift), ``--discrete_flow_shift 6.0``,
``--model_prediction_type raw`` and a system prompt prepended to every caption, which is
passed here as ``--system_prompt`` on every run. sd-scripts' cache tools know no Lumina, so
the first run writes the latent and Gemma2 caches (``_lumina.npz`` / ``_lumina_te.npz``).
The Gemma2 tokenizer is loaded from the hub as ``google/gemma-2-2b`` (a gated repository).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from bracket.search.configs import NamedConfig
from bracket.search.space import FixedKnob, Knob
from bracket.trainer.base import ModelInput
from bracket.trainer.sd_scripts.base import SdScriptsFull, SdScriptsLoRA, SdScriptsTrainer
from bracket.trainer.sd_scripts.flow import flow, flow_args, flow_knobs

LUMINA_INPUTS = (
    ModelInput("model_path", "--pretrained_model_name_or_path", optional=True),
    ModelInput("gemma2_path", "--gemma2", optional=True),
    ModelInput("ae_path", "--ae", optional=True),
)
#: docs/lumina_train_network.md §6.1, general-purpose system prompt
SYSTEM_PROMPT = "You are an assistant designed to generate high-quality images based on user prompts."
GEMMA2_TOKENIZER = "google/gemma-2-2b"
DOC_SHIFT = 6.0
_DOC = "kohya-ss/sd-scripts docs/lumina_train_network.md"
_FT_DOC = "kohya-ss/sd-scripts docs/fine_tune.md"


class _LuminaFamily(SdScriptsTrainer):
    """The family's class data and helpers, mixed in before its LoRA and full adapters."""

    model_inputs: ClassVar[tuple[ModelInput, ...]] = LUMINA_INPUTS
    latent_cache_suffix = "_lumina.npz"
    text_encoder_cache_suffix = "_lumina_te.npz"
    save_precision = "bf16"
    tokenizer_ids: tuple[str, ...] = (GEMMA2_TOKENIZER,)
    prompt_letters: ClassVar[tuple[str, ...]] = ("d", "w", "h", "s", "l", "n")

    def prompt_defaults(self) -> dict[str, Any]:
        size = self.resolution()
        return {"width": size, "height": size, "steps": 30, "cfg_scale": 4.0}

    def family_knobs(self) -> dict[str, Knob]:
        return {**flow_knobs(("nextdit_shift", "shift", "sigmoid"), (1.0, 8.0)),
                "model_prediction_type": FixedKnob("raw")}

    def family_args(self, knobs: Mapping[str, Any]) -> list[str]:
        return [*flow_args(knobs, DOC_SHIFT), "--model_prediction_type", str(knobs["model_prediction_type"]),
                "--system_prompt", SYSTEM_PROMPT]


def _lumina(sampling: str = "nextdit_shift", shift: float | None = None) -> dict[str, Any]:
    return {**flow(sampling, shift), "model_prediction_type": "raw"}


class LuminaLoRA(_LuminaFamily, SdScriptsLoRA):
    """Lumina-Image 2.0 LoRA (preset ``lumina-lora``)."""

    script = "lumina_train_network.py"
    network_module = "networks.lora_lumina"
    optimizers = ("AdamW8bit", "AdamW", "Adafactor", "Prodigy")
    lr_range = (1e-5, 1e-3)
    # docs §4.1 memory options: --fp8_base for the 2.6B Next-DiT on small GPUs
    memory_plan = ((12, ("--fp8_base",)),)

    def baseline_config(self) -> NamedConfig:
        # The example command of the docs (§4): AdamW 1e-4, dim 8 / alpha 8, nextdit_shift, shift 6.0.
        return NamedConfig("baseline", {
            "optimizer_type": "AdamW", "learning_rate": 1e-4, "lr_scheduler": "constant",
            "network_dim": 8, "network_alpha": 8, "batch_size": 1, **_lumina(),
        }, source=f"{_DOC} §4 example command")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # §6.1 recommended settings with the memory-friendly AdamW8bit and a larger rank.
            NamedConfig("recommended-dim16", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
                "network_dim": 16, "network_alpha": 16, "batch_size": 1, **_lumina(),
            }, source=f"{_DOC} §6.1 recommended settings (nextdit_shift, raw)"),
            # The plain shift sampler at the documented discrete flow shift 6.0.
            NamedConfig("shift-6", {
                "optimizer_type": "AdamW", "learning_rate": 1e-4, "lr_scheduler": "cosine",
                "lr_warmup_steps": 20, "network_dim": 8, "network_alpha": 8, "batch_size": 1,
                **_lumina("shift", DOC_SHIFT),
            }, source=f"{_DOC} §4.1 (--timestep_sampling shift, --discrete_flow_shift default 6.0)"),
            # Prodigy at lr 1.0 (its authors' advice for diffusion models).
            NamedConfig("prodigy", {
                "optimizer_type": "Prodigy", "adaptive_learning_rate": 1.0, "prodigy_d_coef": 1.0,
                "lr_scheduler": "constant", "network_dim": 16, "network_alpha": 16, "batch_size": 1, **_lumina(),
            }, source="konstmish/prodigy README (diffusion models) with docs §6.1 timestep settings"),
        ]


class LuminaFull(_LuminaFamily, SdScriptsFull):
    """Lumina-Image 2.0 full fine-tune (preset ``lumina-full``)."""

    script = "lumina_train.py"
    lr_range = (1e-7, 5e-5)
    memory_plan = ((24, ("--full_bf16",)),)

    def baseline_config(self) -> NamedConfig:
        # docs/fine_tune.md lumina_train.py example: learning rate 1e-5 on the basic AdamW8bit command.
        return NamedConfig("baseline", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-5, "lr_scheduler": "constant", "batch_size": 1,
            **_lumina(),
        }, source=f"{_FT_DOC} 'Lumina (lumina_train.py)' example + {_DOC} §6.1 timestep settings")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # Fixed-LR Adafactor with the fused backward pass, sd-scripts' fine-tuning recipe.
            NamedConfig("adafactor", {
                "optimizer_type": "Adafactor", "learning_rate": 1e-5, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 20, "batch_size": 1, **_lumina(),
            }, source=f"{_FT_DOC} Lumina rate with the README FLUX.1 fine-tuning recipe (Adafactor, fused backward)"),
            NamedConfig("adafactor-4e-6", {
                "optimizer_type": "Adafactor", "learning_rate": 4e-6, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 20, "batch_size": 1, **_lumina(),
            }, source=f"{_FT_DOC} (4e-6 example rate of the SD3 fine-tune) on the Adafactor recipe"),
            NamedConfig("adamw8bit-cosine-shift-6", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-5, "lr_scheduler": "cosine",
                "lr_warmup_steps": 20, "batch_size": 1, **_lumina("shift", DOC_SHIFT),
            }, source=f"{_FT_DOC} Lumina rate; {_DOC} §4.1 shift 6.0"),
        ]
