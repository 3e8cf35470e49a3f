"""HunyuanVideo 1.5 LoRA on musubi-tuner (``hv_1_5_train_network.py``), from docs/hunyuan_video_1_5.md.

Quirks: four model files on training — DiT, VAE, Qwen2.5-VL (``--text_encoder``) and byT5
(``--byt5``, also required by the text cache) — plus the SigLIP ``--image_encoder`` for I2V,
which caches latents with ``--i2v``. ``--task`` (t2v / i2v) must match the DiT. The docs
suggest ``--timestep_sampling shift --discrete_flow_shift 2.0`` as a base (the settings are
"unclear"); fp8 needs both ``--fp8_base --fp8_scaled``; ``--fp8_vl`` shrinks the text
encoder; up to 51 blocks can be swapped. I2V samples need a start image (``--i``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bracket.errors import FieldError
from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.trainer.base import ModelInput
from bracket.trainer.musubi.base import MusubiTrainer
from bracket.trainer.musubi.space import community_lora_configs, lora_space

DOCS = "kohya-ss/musubi-tuner docs/hunyuan_video_1_5.md"
TASKS = ("t2v", "i2v")
_DOCS_SHIFT = {"timestep_sampling": "shift", "discrete_flow_shift": 2.0}
_T2V_FILES = (
    ModelInput("dit", train_flag="--dit"),
    ModelInput("vae", train_flag="--vae", latent_flag="--vae"),
    ModelInput("text_encoder", train_flag="--text_encoder", text_flag="--text_encoder"),
    ModelInput("byt5", train_flag="--byt5", text_flag="--byt5"),
)
_IMAGE_ENCODER = ModelInput("image_encoder", train_flag="--image_encoder", latent_flag="--image_encoder",
                           optional=True)


class HunyuanVideo15LoRA(MusubiTrainer):
    """HunyuanVideo 1.5 (T2V or I2V) LoRA with ``networks.lora_hv_1_5``."""

    script = "hv_1_5_train_network.py"
    #: loaded from the hub by name (qwen_image_utils.load_qwen2_5_vl, hunyuan_video_1_5_text_encoder.load_byt5)
    tokenizer_ids = ("Qwen/Qwen-Image/tokenizer", "google/byt5-small")
    latent_cache_script = "hv_1_5_cache_latents.py"
    text_cache_script = "hv_1_5_cache_text_encoder_outputs.py"
    network_module = "networks.lora_hv_1_5"
    prompt_letters = ("w", "h", "f", "d", "s", "l", "n", "fs", "i")
    video_dataset_defaults = {"target_frames": [1, 17], "frame_extraction": "head"}
    default_resolution = 512
    sample_kind = "video"
    text_encoder_fp8_flag = "--fp8_vl"
    memory_plan = ((16, ("--fp8_base", "--fp8_scaled", "--blocks_to_swap", "40")),
                   (24, ("--fp8_base", "--fp8_scaled", "--blocks_to_swap", "20")),
                   (48, ("--fp8_base", "--fp8_scaled")))

    model_inputs = (*_T2V_FILES, _IMAGE_ENCODER)

    def active_model_inputs(self) -> tuple[ModelInput, ...]:
        """The SigLIP image encoder is read only by I2V (cache and training)."""
        return self.model_inputs if self.needs_start_image() else _T2V_FILES

    def task(self) -> str:
        return self.field("task") or TASKS[0]

    def variant_flags(self) -> list[str]:
        return ["--task", self.task()]

    def latent_cache_variant_flags(self) -> list[str]:
        if not self.needs_start_image():
            return []
        if not self.field("image_encoder"):
            raise FieldError("HunyuanVideo 1.5 I2V needs the SigLIP image encoder: fill in 'SigLIP image encoder'.")
        return ["--i2v"]

    def cache_variant(self) -> str:
        return f"hv15-{self.task()}"

    def needs_start_image(self) -> bool:
        return self.task() == "i2v"

    def prompt_defaults(self) -> Mapping[str, Any]:
        # the docs' inference examples: 21 frames, 25 steps (shortened for a search), CFG 6.0
        return {"width": 512, "height": 288, "frames": 17, "steps": 25, "cfg_scale": 6.0}

    def declare_search_space(self) -> SearchSpace:
        return lora_space(learning_rate=(3e-5, 5e-4), timestep_samplings=("shift", "sigmoid", "logsnr"),
                          flow_shift=(1.0, 8.0))

    def baseline_config(self) -> NamedConfig:
        # The T2V/I2V LoRA example command of the docs (alpha at the parser default 1).
        return NamedConfig("musubi-docs", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
            "network_dim": 32, "network_alpha": 1, **_DOCS_SHIFT,
        }, source=f"{DOCS}, Training example command")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            *community_lora_configs(_DOCS_SHIFT, example="train_lora_wan21_14b_24gb.yaml"),
            # The inference flow shift of the docs (--flow_shift default 7.0) as a training shift.
            NamedConfig("inference-shift-7", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "cosine",
                "lr_warmup_steps": 10, "network_dim": 32, "network_alpha": 1,
                "timestep_sampling": "shift", "discrete_flow_shift": 7.0,
            }, source=f"{DOCS}, Inference (--flow_shift default 7.0) as a training reference"),
        ]
