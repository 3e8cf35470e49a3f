"""FramePack LoRA on musubi-tuner (``fpack_train_network.py``): anchor-frame conditioned video.

FramePack is an image-to-video model built on HunyuanVideo: it shares HunyuanVideo's VAE
and text encoders (LLaMA ``--text_encoder1``, CLIP ``--text_encoder2``) and adds a SigLIP
``--image_encoder``, which the latent cache script requires. Clips are trimmed to
``N * latent_window_size * 4 + 1`` frames (37 for the default window 9). Samples need a
start image (``--i``). The ``framepack_variant`` field selects FramePack-F1 (``--f1`` on
the latent cache and the trainer; its caches are kept apart).

:class:`FramePack1fLoRA` is the one-frame mode of docs/framepack_1f.md (image pairs, an
edited single frame; :mod:`bracket.trainer.musubi.one_frame`), for FramePack only (not F1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.trainer.base import ModelInput
from bracket.trainer.musubi.base import MusubiTrainer
from bracket.trainer.musubi.one_frame import OneFrameMixin
from bracket.trainer.musubi.space import community_lora_configs, lora_space

DOCS = "kohya-ss/musubi-tuner docs/framepack.md"
DOCS_1F = "kohya-ss/musubi-tuner docs/framepack_1f.md"


class FramePackLoRA(MusubiTrainer):
    """FramePack (or FramePack-F1) LoRA with ``networks.lora_framepack``."""

    script = "fpack_train_network.py"
    latent_cache_script = "fpack_cache_latents.py"
    text_cache_script = "fpack_cache_text_encoder_outputs.py"
    network_module = "networks.lora_framepack"
    #: both tokenizers come from the hub by name (musubi framepack_utils), never from a file
    tokenizer_ids = ("hunyuanvideo-community/HunyuanVideo",)
    model_inputs = (
        ModelInput("dit", train_flag="--dit"),
        ModelInput("vae", train_flag="--vae", latent_flag="--vae"),
        ModelInput("text_encoder1", train_flag="--text_encoder1", text_flag="--text_encoder1"),
        ModelInput("text_encoder2", train_flag="--text_encoder2", text_flag="--text_encoder2"),
        ModelInput("image_encoder", train_flag="--image_encoder", latent_flag="--image_encoder"),
    )
    prompt_letters: ClassVar[tuple[str, ...]] = ("w", "h", "f", "d", "s", "g", "i")
    sample_defaults: ClassVar[Mapping[str, Any]] = {"width": 512, "height": 512, "frames": 37, "steps": 25}
    video_dataset_defaults: ClassVar[Mapping[str, Any]] = {"target_frames": [37], "frame_extraction": "head"}
    default_resolution = 512
    sample_kind = "video"
    text_encoder_fp8_flag = "--fp8_llm"
    latent_cache_extra: ClassVar[tuple[str, ...]] = ("--vae_chunk_size", "32", "--vae_tiling")
    memory_plan = ((16, ("--fp8_base", "--fp8_scaled", "--blocks_to_swap", "20")),
                   (24, ("--fp8_base", "--fp8_scaled")))

    def is_f1(self) -> bool:
        return self.field("framepack_variant") == "f1"

    def variant_flags(self) -> list[str]:
        return ["--f1"] if self.is_f1() else []

    latent_cache_variant_flags = variant_flags

    def cache_variant(self) -> str:
        return "framepack-f1" if self.is_f1() else "framepack"

    def needs_start_image(self) -> bool:
        return True

    def declare_search_space(self) -> SearchSpace:
        return lora_space(learning_rate=(3e-5, 5e-4), timestep_samplings=("shift", "sigmoid", "logsnr"),
                          flow_shift=(1.0, 10.0))

    def baseline_config(self) -> NamedConfig:
        # The LoRA example command of the musubi FramePack docs.
        return NamedConfig("musubi-docs", {
            "optimizer_type": "AdamW8bit", "learning_rate": 2e-4, "lr_scheduler": "constant",
            "network_dim": 32, "network_alpha": 1, "timestep_sampling": "shift", "discrete_flow_shift": 3.0,
        }, source=f"{DOCS}, LoRA training example")

    def curated_configs(self) -> list[NamedConfig]:
        return community_lora_configs(
            {"timestep_sampling": "shift", "discrete_flow_shift": 3.0}, example="train_lora_wan21_14b_24gb.yaml"
        ) + [
            # HunyuanVideo's documented shift 7.0 (FramePack's base model) at the docs' rate.
            NamedConfig("hunyuan-shift-7", {
                "optimizer_type": "AdamW8bit", "learning_rate": 2e-4, "lr_scheduler": "cosine",
                "lr_warmup_steps": 10, "network_dim": 32, "network_alpha": 1,
                "timestep_sampling": "shift", "discrete_flow_shift": 7.0,
            }, source="kohya-ss/musubi-tuner docs/hunyuan_video.md (shift 7.0) on FramePack's base model"),
        ]


class FramePack1fLoRA(OneFrameMixin, FramePackLoRA):
    """FramePack one-frame (image edit) LoRA: ``--one_frame`` caches and sampling, no F1."""

    docs, docs_1f = DOCS, DOCS_1F
    prompt_letters = ("w", "h", "f", "d", "s", "g", "i", "ci", "of")
    sample_defaults = {"width": 512, "height": 512, "frames": 1, "steps": 25}
    #: the docs' sample options; the cache is made to match (no_2x, no_4x)
    one_frame_options = "no_2x,no_4x,target_index=1,control_index=0"
    latent_cache_extra = ("--vae_chunk_size", "32", "--vae_tiling", "--one_frame", "--one_frame_no_2x",
                          "--one_frame_no_4x")

    def is_f1(self) -> bool:
        return False

    def variant_flags(self) -> list[str]:
        return ["--one_frame"]

    def latent_cache_variant_flags(self) -> list[str]:
        return []

    def cache_variant(self) -> str:
        return "framepack-1f"
