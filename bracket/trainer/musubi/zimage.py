"""Z-Image (base and Turbo) on musubi-tuner: LoRA (``zimage_train_network.py``) and full
fine-tune (``zimage_train.py``).

Model paths: ``--dit`` (the base DiT, or for Turbo ostris' De-Turbo DiT), ``--vae`` and
``--text_encoder`` (Qwen3). Turbo can also be trained on the distilled DiT with ostris'
training adapter passed as ``--base_weights`` (optional field). The ``zimage_variant``
field only changes the sample defaults: the base model samples with CFG, Turbo without.
"""

from __future__ import annotations

from typing import Any, Mapping

from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.trainer.base import ModelInput
from bracket.trainer.musubi.base import MusubiTrainer
from bracket.trainer.musubi.space import PRODIGY, full_space, lora_space

DOCS = "kohya-ss/musubi-tuner docs/zimage.md"
_MODELS = (
    ModelInput("dit", train_flag="--dit"),
    ModelInput("vae", train_flag="--vae", latent_flag="--vae"),
    ModelInput("text_encoder", train_flag="--text_encoder", text_flag="--text_encoder"),
)
_SAMPLINGS = ("shift", "sigmoid", "logsnr")


class _ZImageBase(MusubiTrainer):
    latent_cache_script = "zimage_cache_latents.py"
    text_cache_script = "zimage_cache_text_encoder_outputs.py"
    prompt_letters = ("w", "h", "d", "s", "l", "n", "fs")
    text_encoder_fp8_flag = "--fp8_llm"
    #: loaded from the hub by name (zimage/zimage_utils.load_qwen3)
    tokenizer_ids = ("Tongyi-MAI/Z-Image/tokenizer",)

    def prompt_defaults(self) -> Mapping[str, Any]:
        if self.field("zimage_variant") == "turbo":
            return {"width": 768, "height": 768, "steps": 8, "cfg_scale": 1.0}
        return {"width": 768, "height": 768, "steps": 28, "cfg_scale": 4.0}


class ZImageLoRA(_ZImageBase):
    """Z-Image LoRA with ``networks.lora_zimage``."""

    script = "zimage_train_network.py"
    network_module = "networks.lora_zimage"
    model_inputs = (*_MODELS, ModelInput("base_weights", train_flag="--base_weights", optional=True))
    memory_plan = ((12, ("--fp8_base", "--fp8_scaled", "--blocks_to_swap", "10")),
                   (16, ("--fp8_base", "--fp8_scaled")))

    def declare_search_space(self) -> SearchSpace:
        return lora_space(learning_rate=(2e-5, 5e-4), timestep_samplings=_SAMPLINGS, flow_shift=(1.0, 6.0))

    def baseline_config(self) -> NamedConfig:
        # The LoRA example command of the musubi docs (alpha left at the parser default 1).
        return NamedConfig("musubi-docs", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
            "network_dim": 32, "network_alpha": 1, "timestep_sampling": "shift", "discrete_flow_shift": 2.0,
        }, source=f"{DOCS}, LoRA training example")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # ai-toolkit's Z-Image examples: Prodigy at lr 1.0, weight decay 0.01, constant schedule.
            NamedConfig("ai-toolkit-prodigy", {
                "optimizer_type": PRODIGY, "prodigy_d_coef": 1.0, "lr_scheduler": "constant",
                "network_dim": 128, "network_alpha": 128, "timestep_sampling": "shift", "discrete_flow_shift": 2.0,
            }, source="ostris/ai-toolkit config/examples/train_lora_zimage_base_32gb.yaml "
                      "(Prodigy lr 1.0, rank=alpha)"),
            # ai-toolkit's image LoRA default: AdamW8bit 1e-4 with alpha equal to the rank.
            NamedConfig("ai-toolkit-adamw8bit", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
                "network_dim": 16, "network_alpha": 16, "timestep_sampling": "shift", "discrete_flow_shift": 2.0,
            }, source="ostris/ai-toolkit config/examples/train_lora_qwen_image_24gb.yaml (AdamW8bit 1e-4, 16/16)"),
            # The Style-Friendly log-SNR timestep sampler documented by musubi.
            NamedConfig("logsnr", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 10, "network_dim": 32, "network_alpha": 1, "timestep_sampling": "logsnr",
            }, source="kohya-ss/musubi-tuner docs/advanced_config.md, Style-Friendly SNR sampler (logsnr)"),
        ]


class ZImageFull(_ZImageBase):
    """Z-Image full fine-tune (Adafactor with fused backward pass by default)."""

    script = "zimage_train.py"
    model_inputs = _MODELS
    memory_plan = ((24, ("--blocks_to_swap", "16")), (48, ("--blocks_to_swap", "8")))

    def declare_search_space(self) -> SearchSpace:
        return full_space(learning_rate=(2e-7, 2e-5), timestep_samplings=_SAMPLINGS, flow_shift=(1.0, 6.0))

    def baseline_config(self) -> NamedConfig:
        # The full fine-tune example of the musubi docs.
        return NamedConfig("musubi-docs", {
            "optimizer_type": "Adafactor", "learning_rate": 1e-6, "lr_scheduler": "constant_with_warmup",
            "lr_warmup_steps": 10, "timestep_sampling": "shift", "discrete_flow_shift": 2.0,
        }, source=f"{DOCS}, full fine-tuning example")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            NamedConfig("docs-cosine", {
                "optimizer_type": "Adafactor", "learning_rate": 2e-6, "lr_scheduler": "cosine",
                "lr_warmup_steps": 20, "timestep_sampling": "shift", "discrete_flow_shift": 2.0,
            }, source=f"{DOCS} full fine-tune example, Bracket variant: cosine decay from 2e-6"),
            NamedConfig("adamw8bit-1e-6", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-6, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 10, "timestep_sampling": "shift", "discrete_flow_shift": 2.0,
            }, source=f"{DOCS} full fine-tune rate with musubi's built-in AdamW8bit (no fused backward)"),
            NamedConfig("adafactor-logsnr", {
                "optimizer_type": "Adafactor", "learning_rate": 1e-6, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 10, "timestep_sampling": "logsnr",
            }, source="kohya-ss/musubi-tuner docs/advanced_config.md (logsnr sampler) on the docs' FT example"),
        ]
