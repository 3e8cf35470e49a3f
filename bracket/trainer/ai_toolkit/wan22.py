"""Wan 2.2 TI2V-5B LoRA through ai-toolkit (``model.arch: wan22_5b``).

Settings: ai-toolkit's ``wan22_5b`` entry in ``ui/src/app/jobs/new/options.tsx`` at the pin
(quantized transformer and text encoder, ``low_vram``, flowmatch, ``weighted`` timesteps, 24 fps)
on its UI job template; ``config/examples/train_lora_wan22_14b_24gb.yaml`` for the Wan 2.2 rates.
"""

from __future__ import annotations

from bracket.search.configs import NamedConfig
from bracket.trainer.ai_toolkit.space import EXAMPLES, UI_JOB, recipe
from bracket.trainer.ai_toolkit.video import VideoFamily

OPTIONS = "ostris/ai-toolkit ui/src/app/jobs/new/options.tsx (wan22_5b)"


class Wan22FiveBLoRA(VideoFamily):
    model_keys = {"arch": "wan22_5b"}
    memory_plan = (
        (24, {"model": {"quantize": True, "quantize_te": True, "low_vram": True}}),
        (48, {"model": {"quantize_te": True}}),
    )
    train_defaults = {"cache_text_embeddings": True}

    def baseline_config(self) -> NamedConfig:
        return NamedConfig("baseline", recipe(timestep_type="weighted"), source=f"{OPTIONS} on {UI_JOB}")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            NamedConfig("wan22-example", recipe(timestep_type="linear"),
                        source=f"{EXAMPLES}/train_lora_wan22_14b_24gb.yaml (lr 1e-4, rank 32, linear timesteps)"),
            NamedConfig("sigmoid-ema", recipe(timestep_type="sigmoid", use_ema=True, network_dim=16,
                                              network_alpha=16), source=f"{UI_JOB} (sigmoid) with EMA 0.99"),
            NamedConfig("lokr", recipe(network_type="lokr", lokr_factor=8, timestep_type="weighted"),
                        source=f"{UI_JOB} (lokr, full rank)"),
        ]
