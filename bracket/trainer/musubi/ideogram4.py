"""Ideogram 4 LoRA on musubi-tuner (``ideogram4_train_network.py``), from docs/ideogram4.md.

Quirks: the DiT is only distributed pre-quantized (FP8), so it is always the frozen fp8
base — there is no ``--fp8_base``/``--fp8_scaled`` to pass, and memory is saved only by
swapping blocks (at most 33). The Flux2 VAE (``--vae``) and the Qwen3-VL 8B
``--text_encoder`` are needed by the caches and for samples (always passed here). Timesteps
default to ``ideogram4_shift`` (resolution-aware logit-normal, "you normally do not need to
change it"); any ``--weighting_scheme`` but ``none`` is rejected. Samples use
``--sampler_preset V4_DEFAULT_20`` and single-DiT CFG. Captions may be plain text for
training (the structured-JSON check is off unless asked for).
"""

from __future__ import annotations

from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.trainer.base import ModelInput
from bracket.trainer.musubi.base import MusubiTrainer
from bracket.trainer.musubi.space import PRODIGY, lora_space

DOCS = "kohya-ss/musubi-tuner docs/ideogram4.md"
#: the docs give no optimizer: the AdamW8bit 1e-4 / rank 32 of musubi's image-model docs
_COMMON = "kohya-ss/musubi-tuner docs/flux_2.md and docs/krea2.md LoRA examples (AdamW8bit 1e-4, dim 32)"
_DEFAULT = {"timestep_sampling": "ideogram4_shift"}


class Ideogram4LoRA(MusubiTrainer):
    """Ideogram 4 LoRA with ``networks.lora_ideogram4`` (conditional DiT only)."""

    script = "ideogram4_train_network.py"
    #: loaded from the hub by name (ideogram4/ideogram4_utils.py)
    tokenizer_ids = ("Qwen/Qwen3-VL-8B-Instruct",)
    latent_cache_script = "ideogram4_cache_latents.py"
    text_cache_script = "ideogram4_cache_text_encoder_outputs.py"
    network_module = "networks.lora_ideogram4"
    model_inputs = (
        ModelInput("dit", train_flag="--dit"),
        ModelInput("vae", train_flag="--vae", latent_flag="--vae"),
        ModelInput("text_encoder", train_flag="--text_encoder", text_flag="--text_encoder"),
    )
    prompt_letters = ("w", "h", "d", "n")
    sample_defaults = {"width": 1024, "height": 1024}
    memory_plan = ((16, ("--blocks_to_swap", "30")), (24, ("--blocks_to_swap", "16")))

    def variant_flags(self) -> list[str]:
        return ["--sampler_preset", "V4_DEFAULT_20"]

    def declare_search_space(self) -> SearchSpace:
        return lora_space(learning_rate=(2e-5, 5e-4), timestep_samplings=("ideogram4_shift", "shift", "logsnr"),
                          flow_shift=(1.0, 6.0))

    def baseline_config(self) -> NamedConfig:
        # The docs' training command (ideogram4_shift by default) with musubi's usual LoRA optimizer.
        return NamedConfig("musubi-docs", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
            "network_dim": 32, "network_alpha": 1, **_DEFAULT,
        }, source=f"{DOCS}, Training (default ideogram4_shift); optimizer from {_COMMON}")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            NamedConfig("alpha-equals-rank", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
                "network_dim": 32, "network_alpha": 32, **_DEFAULT,
            }, source=f"{_COMMON}; rank = alpha as in docs/krea2.md"),
            NamedConfig("cosine-5e-5", {
                "optimizer_type": "AdamW8bit", "learning_rate": 5e-5, "lr_scheduler": "cosine",
                "lr_warmup_steps": 10, "network_dim": 16, "network_alpha": 16, **_DEFAULT,
            }, source=f"{DOCS} default sampler, Bracket variant: gentler rate for a 34-layer DiT on an fp8 base"),
            NamedConfig("prodigy", {
                "optimizer_type": PRODIGY, "prodigy_d_coef": 1.0, "lr_scheduler": "constant",
                "network_dim": 32, "network_alpha": 32, **_DEFAULT,
            }, source="konstmish/prodigy README (diffusion models) with the docs' ideogram4_shift"),
        ]
