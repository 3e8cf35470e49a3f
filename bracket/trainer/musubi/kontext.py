"""FLUX.1 Kontext [dev] LoRA on musubi-tuner (``flux_kontext_train_network.py``): image edit.

Training data are pairs: the target images (with captions = edit instructions) in the
dataset folder and the source images with the same base names in ``control_directory``
(the preset's control-images field, or the dataset TOML). Samples render the edit of a
control image given with ``--ci``. Quirks: the FLUX AE goes in ``--vae``, T5-XXL in
``--text_encoder1`` and CLIP-L in ``--text_encoder2`` (unlike sd-scripts' ``--ae``,
``--t5xxl``, ``--clip_l``).
"""

from __future__ import annotations

from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.trainer.base import ModelInput
from bracket.trainer.musubi.base import MusubiTrainer
from bracket.trainer.musubi.space import community_lora_configs, lora_space
from bracket.trainer.tokenizers import CLIP_L_TOKENIZER, T5_XXL_TOKENIZER

DOCS = "kohya-ss/musubi-tuner docs/flux_kontext.md"


class FluxKontextLoRA(MusubiTrainer):
    """FLUX.1 Kontext LoRA with ``networks.lora_flux`` on paired source/target images."""

    script = "flux_kontext_train_network.py"
    latent_cache_script = "flux_kontext_cache_latents.py"
    text_cache_script = "flux_kontext_cache_text_encoder_outputs.py"
    network_module = "networks.lora_flux"
    #: its CLIP-L and T5 tokenizers come from the hub by name (musubi flux_utils), never from a file
    tokenizer_ids = (CLIP_L_TOKENIZER, T5_XXL_TOKENIZER)
    model_inputs = (
        ModelInput("dit", train_flag="--dit"),
        ModelInput("vae", train_flag="--vae", latent_flag="--vae"),
        ModelInput("text_encoder1", train_flag="--text_encoder1", text_flag="--text_encoder1"),
        ModelInput("text_encoder2", train_flag="--text_encoder2", text_flag="--text_encoder2"),
    )
    prompt_letters = ("w", "h", "d", "s", "g", "fs", "ci")
    sample_defaults = {"width": 768, "height": 768, "steps": 20}
    needs_control_images = True
    text_encoder_fp8_flag = "--fp8_t5"
    memory_plan = ((16, ("--fp8_base", "--fp8_scaled", "--blocks_to_swap", "16")),
                   (24, ("--fp8_base", "--fp8_scaled")))

    def declare_search_space(self) -> SearchSpace:
        return lora_space(learning_rate=(2e-5, 5e-4), flow_shift=(1.0, 5.0),
                          timestep_samplings=("flux_shift", "shift", "logsnr", "qinglong_flux"))

    def baseline_config(self) -> NamedConfig:
        # The LoRA example command of the musubi Kontext docs.
        return NamedConfig("musubi-docs", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
            "network_dim": 32, "network_alpha": 1, "timestep_sampling": "flux_shift",
        }, source=f"{DOCS}, LoRA training example")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            *community_lora_configs({"timestep_sampling": "flux_shift"}, example="train_lora_flux_kontext_24gb.yaml"),
            # sd-scripts' documented FLUX.1 alternative: plain shift at 3.1582.
            NamedConfig("shift-3.1582", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
                "network_dim": 32, "network_alpha": 1, "timestep_sampling": "shift", "discrete_flow_shift": 3.1582,
            }, source="kohya-ss/sd-scripts docs/flux_train_network.md (shift 3.1582 for FLUX.1 dev)"),
        ]
