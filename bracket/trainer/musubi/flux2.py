"""FLUX.2 Klein and FLUX.2 [dev] LoRA on musubi-tuner (``flux_2_train_network.py``).

Quirks: the autoencoder goes in ``--vae`` (not ``--ae``); ``--model_version`` (field, default
``klein-base-9b``; the docs recommend training the *base* Klein models) must match the DiT
and is passed to both cache scripts as well; the text encoder is Qwen3 8B for 9B models.
Control images are optional (FLUX.2 can use reference images but this preset is text-to-image).
:class:`Flux2DevLoRA` is the same script at ``--model_version dev`` (Mistral 3 text encoder).
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.trainer.base import ModelInput
from bracket.trainer.musubi.base import MusubiTrainer
from bracket.trainer.musubi.space import community_lora_configs, lora_space
from bracket.trainer.vram import MemoryPlan

DOCS = "kohya-ss/musubi-tuner docs/flux_2.md"
MODEL_VERSIONS = ("klein-base-9b", "klein-9b", "klein-base-4b", "klein-4b")
#: the tokenizer musubi loads from the hub by name (flux_2/flux2_utils.load_text_embedder): Qwen3
#: for Klein 9B / 4B, the Mistral 3 processor for dev
HUB_TOKENIZERS = {"9b": "Qwen/Qwen3-8B", "4b": "Qwen/Qwen3-4B", "dev": "mistralai/Mistral-Small-3.1-24B-Instruct-2503"}


class Flux2KleinLoRA(MusubiTrainer):
    """FLUX.2 Klein (9B by default) LoRA with ``networks.lora_flux_2``."""

    script = "flux_2_train_network.py"
    latent_cache_script = "flux_2_cache_latents.py"
    text_cache_script = "flux_2_cache_text_encoder_outputs.py"
    network_module = "networks.lora_flux_2"
    model_inputs: ClassVar[tuple[ModelInput, ...]] = (
        ModelInput("dit", train_flag="--dit"),
        ModelInput("vae", train_flag="--vae", latent_flag="--vae"),
        ModelInput("text_encoder", train_flag="--text_encoder", text_flag="--text_encoder"),
    )
    prompt_letters = ("w", "h", "d", "s", "g", "l", "n")
    text_encoder_fp8_flag: ClassVar[str | None] = "--fp8_text_encoder"
    memory_plan: ClassVar[MemoryPlan] = ((12, ("--fp8_base", "--fp8_scaled", "--blocks_to_swap", "10")),
                   (24, ("--fp8_base", "--fp8_scaled")))

    tokenizer_ids: tuple[str, ...] = (HUB_TOKENIZERS["9b"],)

    def __init__(self, fields: Mapping[str, str] | None = None) -> None:
        super().__init__(fields)
        size = self.model_version().rsplit("-", 1)[-1]
        self.tokenizer_ids = (HUB_TOKENIZERS.get(size, HUB_TOKENIZERS["9b"]),)

    def model_version(self) -> str:
        return self.field("model_version") or MODEL_VERSIONS[0]

    def variant_flags(self) -> list[str]:
        return ["--model_version", self.model_version()]

    latent_cache_variant_flags = variant_flags
    text_cache_variant_flags = variant_flags

    def cache_variant(self) -> str:
        return f"flux2-{self.model_version()}"

    def prompt_defaults(self) -> Mapping[str, Any]:
        if "base" in self.model_version():
            return {"width": 768, "height": 768, "steps": 28, "guidance": 4.0}
        return {"width": 768, "height": 768, "steps": 4, "guidance": 1.0}

    def declare_search_space(self) -> SearchSpace:
        return lora_space(learning_rate=(2e-5, 5e-4), flow_shift=(1.0, 6.0),
                          timestep_samplings=("flux2_shift", "shift", "logsnr", "qinglong_flux"))

    def baseline_config(self) -> NamedConfig:
        # The LoRA example command of the musubi FLUX.2 docs (alpha at the parser default 1).
        return NamedConfig("musubi-docs", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
            "network_dim": 32, "network_alpha": 1, "timestep_sampling": "flux2_shift",
        }, source=f"{DOCS}, LoRA training example")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            *community_lora_configs({"timestep_sampling": "flux2_shift"}, example="train_lora_flux_24gb.yaml"),
            # musubi's mixed sampler for FLUX-type models (mid-shift + log-SNR).
            NamedConfig("qinglong-flux", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "cosine",
                "lr_warmup_steps": 10, "network_dim": 32, "network_alpha": 16, "timestep_sampling": "qinglong_flux",
            }, source="kohya-ss/musubi-tuner docs/advanced_config.md, qinglong_flux hybrid sampler"),
        ]


class Flux2DevLoRA(Flux2KleinLoRA):
    """FLUX.2 [dev] LoRA (``--model_version dev``): the 32B DiT with the Mistral 3 text encoder.

    The docs recommend training Klein base models (dev is distilled), but dev trains with the
    same script; ``--fp8_text_encoder`` is not available for Mistral 3, and the fp8 DiT swaps
    up to 29 blocks (the docs' table).
    """

    text_encoder_fp8_flag = None
    tokenizer_ids = (HUB_TOKENIZERS["dev"],)
    memory_plan = ((24, ("--fp8_base", "--fp8_scaled", "--blocks_to_swap", "29")),
                   (48, ("--fp8_base", "--fp8_scaled", "--blocks_to_swap", "12")),
                   (80, ("--fp8_base", "--fp8_scaled")))

    def model_version(self) -> str:
        return "dev"

    def prompt_defaults(self) -> Mapping[str, Any]:
        # the docs' model-version table: dev samples with guidance 4.0 (50 steps; 28 for a search)
        return {"width": 768, "height": 768, "steps": 28, "guidance": 4.0}

    def baseline_config(self) -> NamedConfig:
        # The LoRA example command of the docs, which is written for --model_version dev.
        return NamedConfig("musubi-docs", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
            "network_dim": 32, "network_alpha": 1, "timestep_sampling": "flux2_shift",
        }, source=f"{DOCS}, Training (example command with --model_version dev)")
