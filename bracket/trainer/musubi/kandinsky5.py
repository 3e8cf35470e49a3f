"""Kandinsky 5 video LoRA on musubi-tuner (``kandinsky5_train_network.py``), from docs/kandinsky5.md.

Quirks: ``--task`` is required and names the model configuration (Pro/Lite, T2V/I2V,
5 s/10 s), while ``--dit`` names the weights; both text encoders are Hugging Face
Transformers models given as a hub id or a local snapshot folder (``--text_encoder_qwen``
Qwen2.5-VL-7B, ``--text_encoder_clip`` CLIP-L), on the trainer and the text cache; the VAE is
HunyuanVideo's. The docs' example trains with ``--fp8_base``, AdamW8bit 1e-4,
``constant_with_warmup`` 100 steps, rank = alpha = 32, shift 5.0 and ``--scheduler_scale
10.0`` (passed on every run). I2V tasks sample from a start image (``--i``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.trainer.base import ModelInput
from bracket.trainer.musubi.base import MusubiTrainer
from bracket.trainer.musubi.space import PRODIGY, lora_space

DOCS = "kohya-ss/musubi-tuner docs/kandinsky5.md"
TASKS = ("k5-pro-t2v-5s-sd", "k5-pro-t2v-10s-sd", "k5-pro-i2v-5s-sd",
         "k5-lite-t2v-5s-sd", "k5-lite-t2v-10s-sd", "k5-lite-i2v-5s-sd")
_DOCS_SHIFT = {"timestep_sampling": "shift", "discrete_flow_shift": 5.0}


class Kandinsky5LoRA(MusubiTrainer):
    """Kandinsky 5 (Pro or Lite, T2V or I2V) LoRA with ``networks.lora_kandinsky``."""

    script = "kandinsky5_train_network.py"
    latent_cache_script = "kandinsky5_cache_latents.py"
    text_cache_script = "kandinsky5_cache_text_encoder_outputs.py"
    network_module = "networks.lora_kandinsky"
    model_inputs = (
        ModelInput("dit", train_flag="--dit"),
        ModelInput("vae", train_flag="--vae", latent_flag="--vae"),
        ModelInput("text_encoder_qwen", train_flag="--text_encoder_qwen", text_flag="--text_encoder_qwen"),
        ModelInput("text_encoder_clip", train_flag="--text_encoder_clip", text_flag="--text_encoder_clip"),
    )
    prompt_letters = ("w", "h", "f", "d", "s", "g", "n", "i")
    video_dataset_defaults = {"target_frames": [1, 17], "frame_extraction": "head"}
    default_resolution = 512
    sample_kind = "video"
    #: the docs train with --fp8_base; Pro has 60 visual blocks, Lite 32
    memory_plan = ((24, ("--fp8_base", "--blocks_to_swap", "20")), (48, ("--fp8_base",)))

    def task(self) -> str:
        return self.field("task") or TASKS[0]

    def variant_flags(self) -> list[str]:
        return ["--task", self.task(), "--scheduler_scale", "10.0", "--offload_dit_during_sampling"]

    def cache_variant(self) -> str:
        return f"kandinsky5-{self.task()}"

    def needs_start_image(self) -> bool:
        return "-i2v-" in self.task()

    def prompt_defaults(self) -> Mapping[str, Any]:
        # the docs' inference example: 512x512, 17 frames, guidance 5 (50 steps; 25 for a search);
        # the trainer's sampler reads the guidance from --g
        return {"width": 512, "height": 512, "frames": 17, "steps": 25, "guidance": 5.0}

    def declare_search_space(self) -> SearchSpace:
        return lora_space(learning_rate=(3e-5, 5e-4), timestep_samplings=("shift", "sigmoid", "logsnr"),
                          flow_shift=(1.0, 10.0))

    def baseline_config(self) -> NamedConfig:
        # The training example command of the docs.
        return NamedConfig("musubi-docs", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant_with_warmup",
            "lr_warmup_steps": 100, "network_dim": 32, "network_alpha": 32, **_DOCS_SHIFT,
        }, source=f"{DOCS}, Training example command")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # The example's warm-up is long for a short search run: the same recipe with a short one.
            NamedConfig("docs-short-warmup", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 10, "network_dim": 32, "network_alpha": 32, **_DOCS_SHIFT,
            }, source=f"{DOCS} example, Bracket variant: 10 warm-up steps"),
            NamedConfig("shift-3-cosine", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "cosine",
                "lr_warmup_steps": 20, "network_dim": 32, "network_alpha": 32,
                "timestep_sampling": "shift", "discrete_flow_shift": 3.0,
            }, source=f"{DOCS} example ('timestep distribution not yet determined'), Bracket variant: shift 3.0"),
            NamedConfig("prodigy", {
                "optimizer_type": PRODIGY, "prodigy_d_coef": 1.0, "lr_scheduler": "constant",
                "network_dim": 32, "network_alpha": 32, **_DOCS_SHIFT,
            }, source="konstmish/prodigy README (diffusion models) with the docs' shift 5.0"),
            NamedConfig("logsnr", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 10, "network_dim": 32, "network_alpha": 1, "timestep_sampling": "logsnr",
            }, source="kohya-ss/musubi-tuner docs/advanced_config.md, Style-Friendly SNR sampler (logsnr)"),
        ]
