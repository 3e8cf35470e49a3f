"""SD3.5 (Medium, Large) adapters: LoRA (``sd3_train_network.py``), full FT (``sd3_train.py``).

What is special about SD3/SD3.5 in sd-scripts: the LoRA module is ``networks.lora_sd3``
(the docs' ``networks.lora`` targets SDXL U-Net blocks, notes §8.1); the timestep
distribution is shifted with ``--training_shift`` (searched here) and weighted with
``--weighting_scheme`` — there is **no** ``--timestep_sampling``, ``--discrete_flow_shift``,
``--guidance_scale`` or ``--model_prediction_type`` (those are FLUX-only); CLIP-L, CLIP-G and
T5-XXL are separate files unless the checkpoint bundles them. The ``sd35_variant`` field
(large/medium) sizes the memory flags: Large has 38 blocks (36 swappable), Medium 24 (22).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from bracket.search.configs import NamedConfig
from bracket.search.space import FixedKnob, FloatKnob, Knob
from bracket.trainer.base import ModelInput
from bracket.trainer.sd_scripts.base import SdScriptsFull, SdScriptsLoRA, SdScriptsTrainer
from bracket.trainer.tokenizers import CLIP_G_TOKENIZER, CLIP_L_TOKENIZER, T5_XXL_TOKENIZER
from bracket.trainer.vram import MemoryPlan

SD35_INPUTS = (
    ModelInput("model_path", "--pretrained_model_name_or_path", optional=True),
    ModelInput("clip_l_path", "--clip_l", optional=True),
    ModelInput("clip_g_path", "--clip_g", optional=True),
    ModelInput("t5xxl_path", "--t5xxl", optional=True),
)
_DOCS = "kohya-ss/sd-scripts"
_README = "kohya-ss/sd-scripts README (SD3 LoRA training section, commit c38b07d0)"


class _Sd35Family(SdScriptsTrainer):
    """The family's class data and helpers, mixed in before its LoRA and full adapters."""

    model_inputs: ClassVar[tuple[ModelInput, ...]] = SD35_INPUTS
    latent_cache_suffix = "_sd3.npz"
    text_encoder_cache_suffix = "_sd3_te.npz"
    save_precision = "bf16"  # SD3.5 is released in bf16; sd-scripts' cache tools know no SD3
    tokenizer_ids: tuple[str, ...] = (CLIP_L_TOKENIZER, CLIP_G_TOKENIZER, T5_XXL_TOKENIZER)
    prompt_letters: ClassVar[tuple[str, ...]] = ("d", "w", "h", "s", "l", "n")

    #: the memory plan of SD3.5 Large (``memory_plan`` is Medium's)
    large_memory_plan: MemoryPlan = ()

    def is_large(self) -> bool:
        return self.field("sd35_variant", "large") == "large"

    def memory_table(self) -> MemoryPlan:
        return self.large_memory_plan if self.is_large() else self.memory_plan

    def family_knobs(self) -> dict[str, Knob]:
        return {
            # 1.0 = no shift (sd-scripts default); SD3.5 samples at shift 3.0
            "training_shift": FloatKnob(1.0, 3.0),
            "weighting_scheme": FixedKnob("uniform"),
        }

    def family_args(self, knobs: Mapping[str, Any]) -> list[str]:
        return [
            "--training_shift", repr(float(knobs["training_shift"])),
            "--weighting_scheme", str(knobs["weighting_scheme"]),
        ]


class Sd35LoRA(_Sd35Family, SdScriptsLoRA):
    """SD3.5 LoRA of the MMDiT (preset ``sd35-lora``)."""

    script = "sd3_train_network.py"
    network_module = "networks.lora_sd3"
    optimizers = ("AdamW8bit", "AdamW", "Adafactor", "Prodigy")
    lr_range = (1e-5, 1e-3)

    # README: SD3.5 Large LoRA fits 16 GB with fp8 weights; Medium needs nothing
    large_memory_plan = ((12, ("--fp8_base", "--blocks_to_swap", "16")), (16, ("--fp8_base",)))

    def baseline_config(self) -> NamedConfig:
        # The README's SD3 LoRA command (networks.lora_sd3, dim 4, alpha default 1, AdamW8bit 1e-4).
        return NamedConfig("baseline", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
            "network_dim": 4, "network_alpha": 1, "batch_size": 1,
            "training_shift": 1.0, "weighting_scheme": "uniform",
        }, source=_README)

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # docs/sd3_train_network.md example: dim 16, alpha 1, AdamW8bit 1e-4, uniform weighting.
            NamedConfig("docs-dim16", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
                "network_dim": 16, "network_alpha": 1, "batch_size": 1,
                "training_shift": 1.0, "weighting_scheme": "uniform",
            }, source=f"{_DOCS} docs/sd3_train_network.md example (module corrected to networks.lora_sd3)"),
            # Shift the training timesteps towards noise like SD3.5's own sampler (shift 3.0).
            NamedConfig("shift-3", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "cosine",
                "lr_warmup_steps": 50, "network_dim": 16, "network_alpha": 16, "batch_size": 1,
                "training_shift": 3.0, "weighting_scheme": "uniform",
            }, source=f"{_README}: --training_shift > 1 samples nearer the noise; SD3.5 inference shift 3.0"),
            # Prodigy at lr 1.0 (its authors' advice for diffusion models).
            NamedConfig("prodigy", {
                "optimizer_type": "Prodigy", "adaptive_learning_rate": 1.0, "prodigy_d_coef": 1.0,
                "lr_scheduler": "constant", "network_dim": 16, "network_alpha": 16, "batch_size": 1,
                "training_shift": 1.0, "weighting_scheme": "uniform",
            }, source="konstmish/prodigy README (diffusion models: use_bias_correction, safeguard_warmup)"),
        ]


class Sd35Full(_Sd35Family, SdScriptsFull):
    """SD3.5 full fine-tune of the MMDiT (preset ``sd35-full``)."""

    script = "sd3_train.py"
    lr_range = (1e-7, 5e-5)

    memory_plan = ((12, ("--full_bf16", "--blocks_to_swap", "12")), (16, ("--full_bf16", "--blocks_to_swap", "6")),
                   (24, ("--full_bf16",)))
    large_memory_plan = ((12, ("--full_bf16", "--blocks_to_swap", "36")),
                         (16, ("--full_bf16", "--blocks_to_swap", "28")),
                         (24, ("--full_bf16", "--blocks_to_swap", "16")), (48, ("--full_bf16",)))

    def baseline_config(self) -> NamedConfig:
        # docs/fine_tune.md sd3_train.py example rate (4e-6) with the basic AdamW8bit command.
        return NamedConfig("baseline", {
            "optimizer_type": "AdamW8bit", "learning_rate": 4e-6, "lr_scheduler": "constant", "batch_size": 1,
            "training_shift": 1.0, "weighting_scheme": "uniform",
        }, source=f"{_DOCS} docs/fine_tune.md sd3_train.py example")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # The FLUX.1 fine-tuning recipe of the README (fixed-LR Adafactor, fused backward pass)
            # at the SD3 example rate of docs/fine_tune.md.
            NamedConfig("adafactor", {
                "optimizer_type": "Adafactor", "learning_rate": 4e-6, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 50, "batch_size": 1, "training_shift": 1.0, "weighting_scheme": "uniform",
            }, source=f"{_DOCS} README FLUX.1 fine-tuning recipe + docs/fine_tune.md SD3 rate"),
            # docs/fine_tune.md's generic fine-tuning rate 1e-5 with a cosine decay.
            NamedConfig("adamw8bit-1e-5-cosine", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-5, "lr_scheduler": "cosine",
                "lr_warmup_steps": 50, "batch_size": 1, "training_shift": 1.0, "weighting_scheme": "uniform",
            }, source=f"{_DOCS} docs/fine_tune.md basic command (1e-5)"),
            # Adafactor with the timesteps shifted towards noise as SD3.5 samples (shift 3.0).
            NamedConfig("adafactor-shift-3", {
                "optimizer_type": "Adafactor", "learning_rate": 2e-6, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 50, "batch_size": 1, "training_shift": 3.0, "weighting_scheme": "uniform",
            }, source=f"{_README} (--training_shift) with the Adafactor fine-tuning settings"),
        ]
