"""HunyuanImage-2.1 LoRA adapter (``hunyuan_image_train_network.py``); sd-scripts has no full FT for it.

What is special (docs/hunyuan_image_train_network.md): four model files — the DiT
(``--pretrained_model_name_or_path``), Qwen2.5-VL (``--text_encoder``), byT5 (``--byt5``) and
the VAE (``--vae``); the LoRA module is ``networks.lora_hunyuan_image`` and
``--network_train_unet_only`` is required (the base always passes it). The docs recommend
``--model_prediction_type raw --discrete_flow_shift 5.0`` (§6.2); the default sampler is
``sigma``. There is no ``--fp8_base``: memory follows the §6.1 table (``--fp8_scaled`` and
``--blocks_to_swap`` 9 at 24 GB, 32 at 12 GB, nothing at 40 GB+), with ``--fp8_vl`` for the
text encoder below 24 GB. The cache tools know no HunyuanImage: the first run writes the
``_hi.npz`` / ``_hi_te.npz`` caches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bracket.search.configs import NamedConfig
from bracket.search.space import FixedKnob, Knob
from bracket.trainer.base import ModelInput
from bracket.trainer.sd_scripts.base import SdScriptsLoRA
from bracket.trainer.sd_scripts.flow import flow, flow_args, flow_knobs

HUNYUAN_IMAGE_INPUTS = (
    ModelInput("model_path", "--pretrained_model_name_or_path", optional=True),
    ModelInput("text_encoder_path", "--text_encoder", optional=True),
    ModelInput("byt5_path", "--byt5", optional=True),
    ModelInput("vae_path", "--vae", optional=True),
)
DOC_SHIFT = 5.0
_DOC = "kohya-ss/sd-scripts docs/hunyuan_image_train_network.md"


def _hi(sampling: str = "sigma", shift: float | None = None) -> dict[str, Any]:
    return {**flow(sampling, shift), "model_prediction_type": "raw"}


class HunyuanImageLoRA(SdScriptsLoRA):
    """HunyuanImage-2.1 LoRA (preset ``hunyuan-image-lora``)."""

    script = "hunyuan_image_train_network.py"
    network_module = "networks.lora_hunyuan_image"
    model_inputs = HUNYUAN_IMAGE_INPUTS
    latent_cache_suffix = "_hi.npz"
    text_encoder_cache_suffix = "_hi_te.npz"
    save_precision = "bf16"
    tokenizer_ids = ("Qwen/Qwen2.5-VL-7B-Instruct", "google/byt5-small")
    prompt_letters = ("d", "w", "h", "s", "l", "n")
    default_resolution = 2048
    min_vram_gb = 12
    optimizers = ("AdamW8bit", "AdamW", "Adafactor", "Prodigy")
    lr_range = (1e-5, 1e-3)
    #: §6.1 "Recommended Settings by GPU Memory"
    memory_plan = ((16, ("--fp8_scaled", "--blocks_to_swap", "32", "--fp8_vl")),
                   (24, ("--fp8_scaled", "--blocks_to_swap", "9")))

    def prompt_defaults(self) -> dict[str, Any]:
        size = self.resolution()
        return {"width": size, "height": size, "steps": 50, "cfg_scale": 3.5}

    def family_knobs(self) -> dict[str, Knob]:
        return {**flow_knobs(("sigma", "shift", "flux_shift"), (2.0, 8.0)), "model_prediction_type": FixedKnob("raw")}

    def family_args(self, knobs: Mapping[str, Any]) -> list[str]:
        return [*flow_args(knobs, DOC_SHIFT), "--model_prediction_type", str(knobs["model_prediction_type"]),
                "--attn_mode", "torch", "--split_attn"]

    def baseline_config(self) -> NamedConfig:
        # §4 example command: AdamW8bit 1e-4, dim 16, alpha 1, shift 5.0, raw prediction.
        return NamedConfig("baseline", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
            "network_dim": 16, "network_alpha": 1, "batch_size": 1, **_hi(),
        }, source=f"{_DOC} §4 example command")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # §6.1: Adafactor uses less memory than 8-bit AdamW (fixed LR, constant_with_warmup).
            NamedConfig("adafactor", {
                "optimizer_type": "Adafactor", "learning_rate": 1e-4, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 20, "network_dim": 16, "network_alpha": 1, "batch_size": 1, **_hi(),
            }, source=f"{_DOC} §6.1 'Using Adafactor optimizer'"),
            # §6.2 recommended shift 5.0 through the shift sampler itself.
            NamedConfig("shift-5", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
                "network_dim": 16, "network_alpha": 1, "batch_size": 1, **_hi("shift", DOC_SHIFT),
            }, source=f"{_DOC} §6.2 recommended settings (--discrete_flow_shift 5.0) with the shift sampler"),
            NamedConfig("rank32-alpha16-cosine", {
                "optimizer_type": "AdamW8bit", "learning_rate": 5e-5, "lr_scheduler": "cosine",
                "lr_warmup_steps": 20, "network_dim": 32, "network_alpha": 16, "batch_size": 1, **_hi(),
            }, source=f"{_DOC} §4 example, Bracket variant: larger rank, alpha 16 at half the rate"),
            NamedConfig("prodigy", {
                "optimizer_type": "Prodigy", "adaptive_learning_rate": 1.0, "prodigy_d_coef": 1.0,
                "lr_scheduler": "constant", "network_dim": 16, "network_alpha": 16, "batch_size": 1, **_hi(),
            }, source="konstmish/prodigy README (diffusion models) with the §6.2 settings"),
        ]
