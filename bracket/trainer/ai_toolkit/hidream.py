"""HiDream-I1 LoRA through ai-toolkit (``model.arch: hidream``).

Settings: ``config/examples/train_lora_hidream_48.yaml`` at the pin (transformer and text encoders
quantized on 48 GB, the Llama 3.1 8B text encoder named by ``model_kwargs.llama_model_path``,
AdamW8bit at 2e-4, rank 32 = alpha, ``shift`` timesteps, no EMA).
"""

from __future__ import annotations

from bracket.search.configs import NamedConfig
from bracket.trainer.ai_toolkit.base import AiToolkitTrainer
from bracket.trainer.ai_toolkit.space import EXAMPLES, UI_JOB, recipe

EXAMPLE = f"{EXAMPLES}/train_lora_hidream_48.yaml"


class HiDreamLoRA(AiToolkitTrainer):
    model_keys = {"arch": "hidream"}
    memory_plan = (
        (48, {"model": {"quantize": True, "quantize_te": True, "low_vram": True}}),
        (80, {"model": {"quantize": True, "quantize_te": True}}),
    )
    learning_rate = (2e-5, 2e-3)

    def model_names(self) -> dict:
        model = self.field("model")
        return {"name_or_path": model, "extras_name_or_path": model,
                "model_kwargs": {"llama_model_path": self.field("llama_model")}}

    def model_fields(self) -> list[str]:
        return ["model", "llama_model"]

    def baseline_config(self) -> NamedConfig:
        return NamedConfig("baseline", recipe(learning_rate=2e-4, timestep_type="shift"),
                           source=f"{EXAMPLE} (AdamW8bit lr 2e-4, rank 32 = alpha, shift)")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            NamedConfig("ui-default", recipe(), source=f"{UI_JOB} (lr 1e-4, rank 32 = alpha, sigmoid)"),
            NamedConfig("example-ema", recipe(learning_rate=2e-4, timestep_type="shift", use_ema=True),
                        source=f"{EXAMPLE} with its ema_config turned on (decay 0.99)"),
            NamedConfig("lokr", recipe(network_type="lokr", lokr_factor=16, learning_rate=2e-4,
                                       timestep_type="shift"), source=f"{UI_JOB} (lokr, full rank)"),
        ]
