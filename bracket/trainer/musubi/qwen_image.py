"""Qwen-Image (20B) on musubi-tuner: LoRA, full fine-tune and Qwen-Image-Edit LoRA.

All three use ``--model_version`` (``original``, or ``edit``/``edit-2509``/``edit-2511``
for the edit preset), which must match the DiT and is also passed to both cache scripts:
the edit models cache control-image latents and encode the prompt together with the
control images. Edit training reads source images from ``control_directory`` (the
preset's control-images field, or the dataset TOML) and samples with ``--ci``.
"""

from __future__ import annotations

from typing import ClassVar

from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.trainer.base import ModelInput
from bracket.trainer.musubi.base import MusubiTrainer
from bracket.trainer.musubi.space import community_lora_configs, full_space, lora_space
from bracket.trainer.vram import MemoryPlan

DOCS = "kohya-ss/musubi-tuner docs/qwen_image.md"
EDIT_VERSIONS = ("edit-2511", "edit-2509", "edit")
#: loaded from the hub by name (qwen_image/qwen_image_utils.py): the tokenizer always, the
#: VL processor for the edit models
TOKENIZER = "Qwen/Qwen-Image/tokenizer"
EDIT_PROCESSOR = "Qwen/Qwen-Image-Edit/processor"
_SAMPLINGS = ("shift", "qwen_shift", "qinglong_qwen", "logsnr")
_MODELS = (
    ModelInput("dit", train_flag="--dit"),
    ModelInput("vae", train_flag="--vae", latent_flag="--vae"),
    ModelInput("text_encoder", train_flag="--text_encoder", text_flag="--text_encoder"),
)


class _QwenImageBase(MusubiTrainer):
    script = "qwen_image_train_network.py"
    latent_cache_script = "qwen_image_cache_latents.py"
    text_cache_script = "qwen_image_cache_text_encoder_outputs.py"
    model_inputs: ClassVar[tuple[ModelInput, ...]] = _MODELS
    prompt_letters: ClassVar[tuple[str, ...]] = ("w", "h", "d", "s", "l", "n", "fs")
    text_encoder_fp8_flag = "--fp8_vl"
    tokenizer_ids: tuple[str, ...] = (TOKENIZER,)
    latent_cache_extra = ("--vae_tiling",)
    memory_plan: ClassVar[MemoryPlan] = ((16, ("--fp8_base", "--fp8_scaled", "--blocks_to_swap", "45")),
                   (24, ("--fp8_base", "--fp8_scaled", "--blocks_to_swap", "16")),
                   (48, ("--fp8_base", "--fp8_scaled")))

    def model_version(self) -> str:
        return "original"

    def variant_flags(self) -> list[str]:
        return ["--model_version", self.model_version()]

    latent_cache_variant_flags = variant_flags
    text_cache_variant_flags = variant_flags

    def cache_variant(self) -> str:
        return f"qwen-image-{self.model_version()}"


class QwenImageLoRA(_QwenImageBase):
    """Qwen-Image LoRA with ``networks.lora_qwen_image``."""

    network_module = "networks.lora_qwen_image"

    def declare_search_space(self) -> SearchSpace:
        return lora_space(learning_rate=(1e-5, 3e-4), timestep_samplings=_SAMPLINGS, flow_shift=(1.0, 5.0))

    def baseline_config(self) -> NamedConfig:
        # The LoRA example command of the musubi Qwen-Image docs.
        return NamedConfig("musubi-docs", {
            "optimizer_type": "AdamW8bit", "learning_rate": 5e-5, "lr_scheduler": "constant",
            "network_dim": 16, "network_alpha": 1, "timestep_sampling": "shift", "discrete_flow_shift": 2.2,
        }, source=f"{DOCS}, LoRA training example")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            *community_lora_configs({"timestep_sampling": "qwen_shift"}, example="train_lora_qwen_image_24gb.yaml"),
            NamedConfig("qinglong-qwen", {
                "optimizer_type": "AdamW8bit", "learning_rate": 5e-5, "lr_scheduler": "cosine",
                "lr_warmup_steps": 10, "network_dim": 16, "network_alpha": 1, "timestep_sampling": "qinglong_qwen",
            }, source="kohya-ss/musubi-tuner docs/advanced_config.md, qinglong_qwen hybrid sampler"),
        ]


class QwenImageEditLoRA(QwenImageLoRA):
    """Qwen-Image-Edit (original, 2509, 2511) LoRA on paired source/target images."""

    prompt_letters = ("w", "h", "d", "s", "l", "n", "fs", "ci")
    needs_control_images = True
    tokenizer_ids = (TOKENIZER, EDIT_PROCESSOR)

    def model_version(self) -> str:
        return self.field("model_version") or EDIT_VERSIONS[0]

    def baseline_config(self) -> NamedConfig:
        # The docs' LoRA example with --model_version set to an edit model.
        base = super().baseline_config()
        return NamedConfig(base.name, base.knobs, source=f"{DOCS}, LoRA and Qwen-Image-Edit training examples")


class QwenImageFull(_QwenImageBase):
    """Qwen-Image full fine-tune (``qwen_image_train.py``)."""

    script = "qwen_image_train.py"
    memory_plan = ((24, ("--blocks_to_swap", "45")), (48, ("--blocks_to_swap", "20")))

    def declare_search_space(self) -> SearchSpace:
        return full_space(learning_rate=(2e-7, 1e-5), timestep_samplings=_SAMPLINGS, flow_shift=(1.0, 5.0))

    def baseline_config(self) -> NamedConfig:
        # The full fine-tune example of the musubi Qwen-Image docs.
        return NamedConfig("musubi-docs", {
            "optimizer_type": "Adafactor", "learning_rate": 1e-6, "lr_scheduler": "constant_with_warmup",
            "lr_warmup_steps": 10, "timestep_sampling": "shift", "discrete_flow_shift": 2.2,
        }, source=f"{DOCS}, full fine-tuning example (shift 2.2 from the LoRA example)")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            NamedConfig("docs-qwen-shift", {
                "optimizer_type": "Adafactor", "learning_rate": 1e-6, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 10, "timestep_sampling": "qwen_shift",
            }, source=f"{DOCS}: qwen_shift, the inference-time dynamic shift, on the FT example"),
            NamedConfig("docs-cosine", {
                "optimizer_type": "Adafactor", "learning_rate": 2e-6, "lr_scheduler": "cosine",
                "lr_warmup_steps": 20, "timestep_sampling": "shift", "discrete_flow_shift": 2.2,
            }, source=f"{DOCS} full fine-tune example, Bracket variant: cosine decay from 2e-6"),
            NamedConfig("adamw8bit-1e-6", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-6, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 10, "timestep_sampling": "shift", "discrete_flow_shift": 2.2,
            }, source=f"{DOCS} full fine-tune rate with musubi's built-in AdamW8bit (no fused backward)"),
        ]
