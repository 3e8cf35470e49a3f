"""FLUX.1-dev LoRA through ai-toolkit (``model.arch: flux``).

Settings: ``config/examples/train_lora_flux_24gb.yaml`` at the pin (8-bit quantized transformer on
24 GB, AdamW8bit at 1e-4, rank 16 = alpha, EMA 0.99, flowmatch, guidance 4, 20 sample steps).
"""

from __future__ import annotations

from bracket.search.configs import NamedConfig
from bracket.trainer.ai_toolkit.base import AiToolkitTrainer
from bracket.trainer.ai_toolkit.space import EXAMPLES, UI_JOB, recipe

EXAMPLE = f"{EXAMPLES}/train_lora_flux_24gb.yaml"


class Flux1DevLoRA(AiToolkitTrainer):
    model_keys = {"arch": "flux"}
    memory_plan = (
        (24, {"model": {"quantize": True, "low_vram": True}}),
        (48, {"model": {"quantize": True}}),
    )
    learning_rate = (2e-5, 1e-3)
    sample_defaults = {"width": 1024, "height": 1024, "sample_steps": 20, "guidance_scale": 4.0}

    def baseline_config(self) -> NamedConfig:
        return NamedConfig("baseline", recipe(network_dim=16, network_alpha=16, use_ema=True),
                           source=f"{EXAMPLE} (AdamW8bit lr 1e-4, rank 16 = alpha, EMA 0.99)")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            NamedConfig("ui-default", recipe(), source=f"{UI_JOB} (lr 1e-4, rank 32 = alpha, no EMA)"),
            # Replicate's ostris/flux-dev-lora-trainer (ai-toolkit underneath): lr 4e-4, rank 16
            NamedConfig("replicate-trainer", recipe(learning_rate=4e-4, network_dim=16, network_alpha=16),
                        source="replicate.com/ostris/flux-dev-lora-trainer defaults "
                               "(learning_rate 0.0004, lora_rank 16)"),
            NamedConfig("lokr", recipe(network_type="lokr", lokr_factor=16, learning_rate=1e-4),
                        source=f"{UI_JOB} (network type lokr, full rank; factor 16 for a small file)"),
            NamedConfig("prodigy", recipe(optimizer_type="prodigy", prodigy_d_coef=1.0, network_dim=16,
                                          network_alpha=16), source="konstmish/prodigy README (lr 1.0, d_coef 1)"),
        ]
