"""SDXL LoRA through ai-toolkit (``model.arch: sdxl``, DDPM noise, no timestep type).

Settings: ai-toolkit's SDXL entry in ``ui/src/app/jobs/new/options.tsx`` at the pin (ddpm scheduler
and sampler, guidance 6, no quantization) on its UI job template.
"""

from __future__ import annotations

from bracket.search.configs import NamedConfig
from bracket.trainer.ai_toolkit.base import AiToolkitTrainer
from bracket.trainer.ai_toolkit.space import UI_JOB, recipe

OPTIONS = "ostris/ai-toolkit ui/src/app/jobs/new/options.tsx (sdxl)"


class SdxlLoRA(AiToolkitTrainer):
    model_keys = {"arch": "sdxl"}
    noise_scheduler = "ddpm"
    timestep_types = ()
    learning_rate = (1e-5, 1e-3)
    sample_defaults = {"width": 1024, "height": 1024, "sample_steps": 25, "guidance_scale": 6.0}

    def baseline_config(self) -> NamedConfig:
        return NamedConfig("baseline", recipe(timestep_type=None), source=f"{OPTIONS} on {UI_JOB}")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # the example command of sd-scripts' docs/sdxl_train_network.md: 1e-4, dim 32, alpha 16
            NamedConfig("kohya-example", recipe(timestep_type=None, network_alpha=16),
                        source="kohya-ss/sd-scripts docs/sdxl_train_network.md example command (1e-4, 32/16)"),
            # diffusers' SDXL DreamBooth LoRA example: AdamW 1e-4, constant, a small rank
            NamedConfig("diffusers-dreambooth", recipe(timestep_type=None, optimizer_type="adamw", network_dim=8,
                                                       network_alpha=8, caption_dropout_rate=0.0),
                        source="huggingface/diffusers examples/dreambooth/README_sdxl.md (AdamW 1e-4, small rank)"),
            NamedConfig("prodigy", recipe(timestep_type=None, optimizer_type="prodigy", prodigy_d_coef=1.0),
                        source="konstmish/prodigy README (lr 1.0, d_coef 1)"),
        ]
