"""OmniGen2 LoRA through ai-toolkit (``model.arch: omnigen2``).

Settings: ``config/examples/train_lora_omnigen2_24gb.yaml`` at the pin (text encoder quantized,
AdamW8bit at 1e-4, rank 16 = alpha, sigmoid timesteps, guidance 4, 25 sample steps).
"""

from __future__ import annotations

from bracket.search.configs import NamedConfig
from bracket.trainer.ai_toolkit.base import AiToolkitTrainer
from bracket.trainer.ai_toolkit.space import EXAMPLES, UI_JOB, recipe

EXAMPLE = f"{EXAMPLES}/train_lora_omnigen2_24gb.yaml"


class OmniGen2LoRA(AiToolkitTrainer):
    model_keys = {"arch": "omnigen2"}
    memory_plan = (
        (24, {"model": {"quantize_te": True, "quantize": True, "low_vram": True}}),
        (80, {"model": {"quantize_te": True}}),
    )

    def baseline_config(self) -> NamedConfig:
        return NamedConfig("baseline", recipe(network_dim=16, network_alpha=16),
                           source=f"{EXAMPLE} (AdamW8bit lr 1e-4, rank 16 = alpha, sigmoid)")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            NamedConfig("ui-default", recipe(), source=f"{UI_JOB} (lr 1e-4, rank 32 = alpha)"),
            NamedConfig("ema", recipe(network_dim=16, network_alpha=16, use_ema=True),
                        source=f"{EXAMPLES}/train_lora_flux_24gb.yaml EMA 0.99 on {EXAMPLE}"),
            NamedConfig("prodigy", recipe(optimizer_type="prodigy", prodigy_d_coef=1.0),
                        source="konstmish/prodigy README (lr 1.0, d_coef 1)"),
        ]
