"""HunyuanVideo (v1) on musubi-tuner: LoRA (``hv_train_network.py``) and full fine-tune
(``hv_train.py``).

Both cache with the un-prefixed ``cache_latents.py`` / ``cache_text_encoder_outputs.py``
(LLaVA-LLaMA-3 as ``--text_encoder1``, CLIP-L as ``--text_encoder2``). ``hv_train.py`` is an
older standalone trainer with its own parser: no ``--network_*``, no ``--fp8_base``, only
``sigma``/``uniform``/``sigmoid``/``shift`` timestep sampling, a plain ``loss`` tag, and a
sample hook that renders nothing — so the full fine-tune is scored by loss only.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.trainer.base import ModelInput
from bracket.trainer.musubi.base import MusubiTrainer
from bracket.trainer.musubi.space import community_lora_configs, full_space, lora_space
from bracket.trainer.tokenizers import CLIP_L_TOKENIZER

DOCS = "kohya-ss/musubi-tuner docs/hunyuan_video.md"
VIDEO_DEFAULTS = {"target_frames": [1, 17], "frame_extraction": "head"}
#: tokenizers musubi loads from the hub by name when a text encoder is a single file
#: (hunyuan_model/text_encoder.py); a model folder brings its own
HUB_TOKENIZERS = {"text_encoder1": "xtuner/llava-llama-3-8b-v1_1-transformers",
                  "text_encoder2": CLIP_L_TOKENIZER}


class _HunyuanVideoBase(MusubiTrainer):
    latent_cache_script = "cache_latents.py"
    text_cache_script = "cache_text_encoder_outputs.py"
    model_inputs = (
        ModelInput("dit", train_flag="--dit"),
        ModelInput("vae", train_flag="--vae", latent_flag="--vae"),
        ModelInput("text_encoder1", train_flag="--text_encoder1", text_flag="--text_encoder1"),
        ModelInput("text_encoder2", train_flag="--text_encoder2", text_flag="--text_encoder2"),
    )
    prompt_letters = ("w", "h", "f", "d", "s", "g", "fs")
    sample_defaults = {"width": 512, "height": 288, "frames": 17, "steps": 20}
    video_dataset_defaults = VIDEO_DEFAULTS
    default_resolution = 512
    sample_kind = "video"
    text_encoder_fp8_flag = "--fp8_llm"
    latent_cache_extra = ("--vae_chunk_size", "32", "--vae_tiling")
    tokenizer_ids = tuple(HUB_TOKENIZERS.values())

    def __init__(self, fields: Mapping[str, str] | None = None) -> None:
        super().__init__(fields)
        self.tokenizer_ids = tuple(hub_id for field, hub_id in HUB_TOKENIZERS.items()
                                   if not Path(self.field(field) or ".no-folder").is_dir())


class HunyuanVideoLoRA(_HunyuanVideoBase):
    """HunyuanVideo LoRA with ``networks.lora``."""

    script = "hv_train_network.py"
    network_module = "networks.lora"
    memory_plan = ((12, ("--fp8_base", "--blocks_to_swap", "30")), (16, ("--fp8_base", "--blocks_to_swap", "20")),
                   (48, ("--fp8_base",)))

    def declare_search_space(self) -> SearchSpace:
        return lora_space(learning_rate=(3e-5, 6e-4), timestep_samplings=("shift", "sigmoid", "logsnr"),
                          flow_shift=(3.0, 12.0))

    def baseline_config(self) -> NamedConfig:
        # The LoRA example command of the musubi HunyuanVideo docs.
        return NamedConfig("musubi-docs", {
            "optimizer_type": "AdamW8bit", "learning_rate": 2e-4, "lr_scheduler": "constant",
            "network_dim": 32, "network_alpha": 1, "timestep_sampling": "shift", "discrete_flow_shift": 7.0,
        }, source=f"{DOCS}, LoRA training example")

    def curated_configs(self) -> list[NamedConfig]:
        return community_lora_configs(
            {"timestep_sampling": "shift", "discrete_flow_shift": 7.0}, example="train_lora_wan21_14b_24gb.yaml"
        ) + [
            # FramePack (a HunyuanVideo derivative) is documented with shift 3.0 at the same rate.
            NamedConfig("shift-3", {
                "optimizer_type": "AdamW8bit", "learning_rate": 2e-4, "lr_scheduler": "cosine",
                "lr_warmup_steps": 10, "network_dim": 32, "network_alpha": 1,
                "timestep_sampling": "shift", "discrete_flow_shift": 3.0,
            }, source="kohya-ss/musubi-tuner docs/framepack.md (HunyuanVideo-based: lr 2e-4, shift 3.0)"),
        ]


class HunyuanVideoFull(_HunyuanVideoBase):
    """HunyuanVideo full fine-tune with the older ``hv_train.py`` (no samples)."""

    script = "hv_train.py"
    writes_samples = False
    loss_tags = ("loss",)
    full_ft_flags = ("--full_bf16",)
    supports_fused_backward = False
    memory_plan = ((24, ("--blocks_to_swap", "36")), (48, ("--blocks_to_swap", "20")))

    def declare_search_space(self) -> SearchSpace:
        return full_space(learning_rate=(2e-7, 2e-5), timestep_samplings=("shift", "sigmoid", "uniform"),
                          flow_shift=(3.0, 12.0))

    def baseline_config(self) -> NamedConfig:
        # hv_train.py is undocumented; musubi's full fine-tune recipe (Adafactor 1e-6) with the
        # HunyuanVideo LoRA docs' timestep settings.
        return NamedConfig("musubi-ft-recipe", {
            "optimizer_type": "Adafactor", "learning_rate": 1e-6, "lr_scheduler": "constant_with_warmup",
            "lr_warmup_steps": 10, "timestep_sampling": "shift", "discrete_flow_shift": 7.0,
        }, source="kohya-ss/musubi-tuner docs/qwen_image.md full FT example + docs/hunyuan_video.md shift 7.0")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            NamedConfig("adafactor-cosine", {
                "optimizer_type": "Adafactor", "learning_rate": 2e-6, "lr_scheduler": "cosine",
                "lr_warmup_steps": 20, "timestep_sampling": "shift", "discrete_flow_shift": 7.0,
            }, source="kohya-ss/musubi-tuner docs/zimage.md FT example, Bracket variant: cosine from 2e-6"),
            NamedConfig("adamw8bit-1e-6", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-6, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 10, "timestep_sampling": "shift", "discrete_flow_shift": 7.0,
            }, source=f"{DOCS} LoRA settings (AdamW8bit, shift 7.0) at the musubi FT rate 1e-6"),
            NamedConfig("adafactor-shift-3", {
                "optimizer_type": "Adafactor", "learning_rate": 1e-6, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 10, "timestep_sampling": "shift", "discrete_flow_shift": 3.0,
            }, source="kohya-ss/musubi-tuner docs/framepack.md shift 3.0 on the musubi FT recipe"),
        ]
