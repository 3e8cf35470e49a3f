"""Chroma LoRA through ai-toolkit (``model.arch: chroma``).

Settings: ``config/examples/train_lora_chroma_24gb.yaml`` at the pin (8-bit quantized, AdamW8bit at
1e-4, rank 16 = alpha, EMA 0.99, flowmatch, guidance 4, 25 sample steps).
"""

from __future__ import annotations

from bracket.search.configs import NamedConfig
from bracket.trainer.ai_toolkit.base import AiToolkitTrainer
from bracket.trainer.ai_toolkit.space import EXAMPLES, UI_JOB, recipe

EXAMPLE = f"{EXAMPLES}/train_lora_chroma_24gb.yaml"


class ChromaLoRA(AiToolkitTrainer):
    model_keys = {"arch": "chroma"}
    memory_plan = (
        (24, {"model": {"quantize": True, "low_vram": True}}),
        (48, {"model": {"quantize": True}}),
    )

    def baseline_config(self) -> NamedConfig:
        return NamedConfig("baseline", recipe(network_dim=16, network_alpha=16, use_ema=True),
                           source=f"{EXAMPLE} (AdamW8bit lr 1e-4, rank 16 = alpha, EMA 0.99)")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            NamedConfig("ui-default", recipe(), source=f"{UI_JOB} (lr 1e-4, rank 32 = alpha)"),
            NamedConfig("shift", recipe(network_dim=16, network_alpha=16, timestep_type="shift", use_ema=True),
                        source=f"{EXAMPLES}/train_lora_hidream_48.yaml timestep_type shift on {EXAMPLE}"),
            NamedConfig("lokr", recipe(network_type="lokr", lokr_factor=8),
                        source=f"{UI_JOB} (network type lokr, full rank)"),
        ]
