"""Krea 2 LoRA on musubi-tuner (``krea2_train_network.py``), from docs/krea2.md.

Quirks: train on the RAW DiT (``--dit``); the VAE is Qwen-Image's (``--vae``, required on the
trainer and the latent cache); the Qwen3-VL-4B ``--text_encoder`` is only needed for the
text cache and for samples (always passed here, since trials sample). The docs start from
``--timestep_sampling shift --discrete_flow_shift 2.5`` (K2's inference shift at 1024 px) and
name ``krea2_shift``, the resolution-aware schedule, for varied resolutions; rank = alpha =
32 is the model authors' default. fp8 needs both ``--fp8_base --fp8_scaled``; at most 26
blocks swap. Samples render on the RAW model with CFG (the docs: 28 steps, CFG 5.5), which the trainer
applies only when the prompt has a negative prompt: one is filled in when a prompt has none.
"""

from __future__ import annotations

from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.trainer.base import ModelInput
from bracket.trainer.musubi.base import MusubiTrainer
from bracket.trainer.musubi.space import PRODIGY, lora_space

DOCS = "kohya-ss/musubi-tuner docs/krea2.md"
_DOCS_SHIFT = {"timestep_sampling": "shift", "discrete_flow_shift": 2.5}


class Krea2LoRA(MusubiTrainer):
    """Krea 2 LoRA with ``networks.lora_krea2`` (all Linear layers of the DiT)."""

    script = "krea2_train_network.py"
    #: loaded from the hub by name (krea2/krea2_utils.load_krea2_text_encoder's default tokenizer_repo)
    tokenizer_ids = ("Qwen/Qwen3-VL-4B-Instruct",)
    latent_cache_script = "krea2_cache_latents.py"
    text_cache_script = "krea2_cache_text_encoder_outputs.py"
    network_module = "networks.lora_krea2"
    model_inputs = (
        ModelInput("dit", train_flag="--dit"),
        ModelInput("vae", train_flag="--vae", latent_flag="--vae"),
        ModelInput("text_encoder", train_flag="--text_encoder", text_flag="--text_encoder"),
    )
    prompt_letters = ("w", "h", "d", "s", "l", "n")
    #: CFG runs only with a negative prompt (krea2_train_network.py); without it RAW samples are blurry
    sample_defaults = {"width": 1024, "height": 1024, "steps": 28, "cfg_scale": 5.5, "negative": "blurry, low quality"}
    memory_plan = ((16, ("--fp8_base", "--fp8_scaled", "--blocks_to_swap", "16")),
                   (24, ("--fp8_base", "--fp8_scaled")))

    def declare_search_space(self) -> SearchSpace:
        return lora_space(learning_rate=(2e-5, 5e-4), timestep_samplings=("shift", "krea2_shift", "logsnr"),
                          flow_shift=(1.5, 4.0))

    def baseline_config(self) -> NamedConfig:
        # The training example command of the docs.
        return NamedConfig("musubi-docs", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
            "network_dim": 32, "network_alpha": 32, **_DOCS_SHIFT,
        }, source=f"{DOCS}, Training example command")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            NamedConfig("krea2-shift", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
                "network_dim": 32, "network_alpha": 32, "timestep_sampling": "krea2_shift",
            }, source=f"{DOCS}, Training notes (krea2_shift: K2's resolution-aware inference shift)"),
            NamedConfig("rank64-attention-rate", {
                "optimizer_type": "AdamW8bit", "learning_rate": 5e-5, "lr_scheduler": "cosine",
                "lr_warmup_steps": 10, "network_dim": 64, "network_alpha": 64, **_DOCS_SHIFT,
            }, source=f"{DOCS}, LoRA target layers ('long training run': increase rank), Bracket's lower rate"),
            NamedConfig("prodigy", {
                "optimizer_type": PRODIGY, "prodigy_d_coef": 1.0, "lr_scheduler": "constant",
                "network_dim": 32, "network_alpha": 32, **_DOCS_SHIFT,
            }, source="konstmish/prodigy README (diffusion models) with the docs' shift 2.5"),
            NamedConfig("logsnr", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 10, "network_dim": 32, "network_alpha": 32, "timestep_sampling": "logsnr",
            }, source="kohya-ss/musubi-tuner docs/advanced_config.md, Style-Friendly SNR sampler (logsnr)"),
        ]
