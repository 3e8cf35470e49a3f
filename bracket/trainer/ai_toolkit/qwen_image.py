"""Qwen-Image LoRA through ai-toolkit (``model.arch: qwen_image``).

Settings: ``config/examples/train_lora_qwen_image_24gb.yaml`` at the pin (text embeddings cached,
quantized transformer and text encoder, ``low_vram``, AdamW8bit at 1e-4, rank 16 = alpha, guidance
3). The example's 24 GB quantization is 3-bit with an accuracy-recovery adapter downloaded by id;
Bracket uses ai-toolkit's default ``qfloat8`` (no second download), which needs a larger card.
"""

from __future__ import annotations

from bracket.search.configs import NamedConfig
from bracket.trainer.ai_toolkit.base import AiToolkitTrainer
from bracket.trainer.ai_toolkit.space import EXAMPLES, UI_JOB, recipe

EXAMPLE = f"{EXAMPLES}/train_lora_qwen_image_24gb.yaml"


class QwenImageLoRA(AiToolkitTrainer):
    model_keys = {"arch": "qwen_image"}
    memory_plan = (
        (24, {"model": {"quantize": True, "quantize_te": True, "qtype_te": "qfloat8", "low_vram": True}}),
        (48, {"model": {"quantize": True, "quantize_te": True, "qtype_te": "qfloat8"}}),
        (80, {"model": {"quantize_te": True}}),
    )
    train_defaults = {"cache_text_embeddings": True}
    sample_defaults = {"width": 1024, "height": 1024, "sample_steps": 25, "guidance_scale": 3.0}

    def baseline_config(self) -> NamedConfig:
        return NamedConfig("baseline", recipe(network_dim=16, network_alpha=16),
                           source=f"{EXAMPLE} (AdamW8bit lr 1e-4, rank 16 = alpha)")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            NamedConfig("ui-default", recipe(), source=f"{UI_JOB} (lr 1e-4, rank 32 = alpha, sigmoid)"),
            NamedConfig("edit-example", recipe(network_dim=16, network_alpha=16, timestep_type="weighted"),
                        source=f"{EXAMPLES}/train_lora_qwen_image_edit_32gb.yaml (lr 1e-4, rank 16, weighted)"),
            NamedConfig("lokr", recipe(network_type="lokr", lokr_factor=8),
                        source=f"{UI_JOB} (network type lokr, full rank)"),
        ]
