"""Wan 2.1 and Wan 2.2 LoRA on musubi-tuner (``wan_train_network.py`` with ``--task``).

Wan 2.2 A14B is two DiTs: the low-noise one goes in ``--dit`` and the high-noise one in
``--dit_high_noise``; the task must be ``t2v-A14B`` or ``i2v-A14B`` (the parser's default
``t2v-14B`` is Wan 2.1). I2V tasks cache latents with ``--i2v``; Wan 2.1 I2V also needs
the CLIP model (``--clip``) on the latent cache and for sampling, Wan 2.2 does not. I2V
samples need a start image (``--i``).

:class:`Wan1fLoRA` is the one-frame mode of docs/wan_1f.md on the Wan 2.1 I2V 14B model (image
pairs, an edited single frame; :mod:`bracket.trainer.musubi.one_frame`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

from bracket.errors import FieldError
from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.trainer.base import ModelInput
from bracket.trainer.musubi.base import MusubiTrainer
from bracket.trainer.musubi.one_frame import OneFrameMixin
from bracket.trainer.musubi.space import community_lora_configs, lora_space

DOCS = "kohya-ss/musubi-tuner docs/wan.md"
DOCS_1F = "kohya-ss/musubi-tuner docs/wan_1f.md"
#: one-frame training uses the I2V 14B model (intermediate-frame flf2v needs --ei and two controls)
WAN_1F_TASKS = ("i2v-14B",)
WAN22_TASKS = ("t2v-A14B", "i2v-A14B")
WAN21_TASKS = ("t2v-14B", "t2v-1.3B", "i2v-14B", "t2i-14B")
_VAE = ModelInput("vae", train_flag="--vae", latent_flag="--vae")
_T5 = ModelInput("t5", train_flag="--t5", text_flag="--t5")
#: tokenizers musubi loads from the hub by name (wan/modules/t5.py, clip.py): umT5 always, the
#: CLIP's XLM-RoBERTa whenever a CLIP model is given (Wan 2.1 I2V)
T5_TOKENIZER = "Wan-AI/Wan2.1-T2V-14B/google/umt5-xxl"
CLIP_TOKENIZER = "Wan-AI/Wan2.1-I2V-14B-720P/xlm-roberta-large"
_FP8_14B = ((16, ("--fp8_base", "--fp8_scaled", "--blocks_to_swap", "30")),
            (24, ("--fp8_base", "--fp8_scaled", "--blocks_to_swap", "20")),
            (48, ("--fp8_base", "--fp8_scaled", "--blocks_to_swap", "10")),
            (80, ("--fp8_base", "--fp8_scaled")))


class _WanBase(MusubiTrainer):
    script = "wan_train_network.py"
    latent_cache_script = "wan_cache_latents.py"
    text_cache_script = "wan_cache_text_encoder_outputs.py"
    network_module = "networks.lora_wan"
    prompt_letters: ClassVar[tuple[str, ...]] = ("w", "h", "f", "d", "s", "l", "n", "fs", "i")
    video_dataset_defaults: ClassVar[Mapping[str, Any]] = {"target_frames": [1, 17], "frame_extraction": "head"}
    default_resolution = 512
    text_encoder_fp8_flag = "--fp8_t5"
    memory_plan = _FP8_14B
    tasks: tuple[str, ...] = ()

    tokenizer_ids: tuple[str, ...] = (T5_TOKENIZER,)

    def __init__(self, fields: Mapping[str, str] | None = None) -> None:
        super().__init__(fields)
        self.sample_kind = "image" if self.task().startswith("t2i") else "video"
        if self.field("clip"):
            self.tokenizer_ids = (T5_TOKENIZER, CLIP_TOKENIZER)

    def task(self) -> str:
        return self.field("task") or self.tasks[0]

    def variant_flags(self) -> list[str]:
        return ["--task", self.task()]

    def latent_cache_variant_flags(self) -> list[str]:
        return ["--i2v"] if self.needs_start_image() else []

    def cache_variant(self) -> str:
        return f"wan-{self.task()}"

    def needs_start_image(self) -> bool:
        return self.task().startswith("i2v")

    def prompt_defaults(self) -> Mapping[str, Any]:
        frames = 1 if self.task().startswith("t2i") else 17
        return {"width": 512, "height": 288, "frames": frames, "steps": 20}

    def declare_search_space(self) -> SearchSpace:
        return lora_space(learning_rate=(3e-5, 5e-4), timestep_samplings=("shift", "sigmoid", "logsnr"),
                          flow_shift=(1.0, 12.0))

    def baseline_config(self) -> NamedConfig:
        # The LoRA example command of the musubi Wan docs.
        return NamedConfig("musubi-docs", {
            "optimizer_type": "AdamW8bit", "learning_rate": 2e-4, "lr_scheduler": "constant",
            "network_dim": 32, "network_alpha": 1, "timestep_sampling": "shift", "discrete_flow_shift": 3.0,
        }, source=f"{DOCS}, LoRA training example")


class Wan22LoRA(_WanBase):
    """Wan 2.2 A14B LoRA on both DiTs (low-noise ``--dit``, high-noise ``--dit_high_noise``)."""

    tasks = WAN22_TASKS
    model_inputs = (ModelInput("dit", train_flag="--dit"), ModelInput("dit_high_noise", train_flag="--dit_high_noise"),
                   _VAE, _T5)

    def curated_configs(self) -> list[NamedConfig]:
        inference_shift = 5.0 if self.needs_start_image() else 12.0
        return community_lora_configs(
            {"timestep_sampling": "shift", "discrete_flow_shift": 3.0}, example="train_lora_wan22_14b_24gb.yaml"
        ) + [
            NamedConfig("inference-shift", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "cosine",
                "lr_warmup_steps": 10, "network_dim": 32, "network_alpha": 32,
                "timestep_sampling": "shift", "discrete_flow_shift": inference_shift,
            }, source=f"{DOCS}: Wan2.2 inference shift (12.0 T2V, 5.0 I2V) as a training reference"),
        ]


class Wan21LoRA(_WanBase):
    """Wan 2.1 LoRA (T2V 14B/1.3B, I2V 14B, T2I 14B)."""

    tasks: tuple[str, ...] = WAN21_TASKS
    model_inputs: ClassVar[tuple[ModelInput, ...]] = (ModelInput("dit", train_flag="--dit"), _VAE, _T5,
                   ModelInput("clip", train_flag="--clip", latent_flag="--clip", optional=True))

    def latent_cache_variant_flags(self) -> list[str]:
        if self.needs_start_image() and not self.field("clip"):
            raise FieldError("Wan 2.1 I2V needs the CLIP model: fill in the 'CLIP (Wan 2.1 I2V)' field.")
        return super().latent_cache_variant_flags()

    def _memory_flags(self) -> list[str]:
        return [] if self.task() == "t2v-1.3B" else super()._memory_flags()

    def curated_configs(self) -> list[NamedConfig]:
        return community_lora_configs(
            {"timestep_sampling": "shift", "discrete_flow_shift": 3.0}, example="train_lora_wan21_14b_24gb.yaml"
        ) + [
            NamedConfig("shift-5-cosine", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "cosine",
                "lr_warmup_steps": 10, "network_dim": 32, "network_alpha": 16,
                "timestep_sampling": "shift", "discrete_flow_shift": 5.0,
            }, source="Wan-Video/Wan2.1 generate.py default sample_shift 5.0; docs/wan.md: shift needs experiment"),
        ]


class Wan1fLoRA(OneFrameMixin, Wan21LoRA):
    """Wan 2.1 one-frame (image edit) LoRA on the I2V 14B model: ``--one_frame`` cache and sampling."""

    docs, docs_1f = DOCS, DOCS_1F
    tasks = WAN_1F_TASKS
    #: I2V needs the CLIP model on the latent cache and for samples
    model_inputs = (ModelInput("dit", train_flag="--dit"), _VAE, _T5,
                    ModelInput("clip", train_flag="--clip", latent_flag="--clip"))
    prompt_letters = ("w", "h", "f", "d", "s", "l", "n", "fs", "i", "ci", "of")

    def __init__(self, fields: Mapping[str, str] | None = None) -> None:
        super().__init__(fields)
        self.sample_kind = "image"

    def variant_flags(self) -> list[str]:
        return [*super().variant_flags(), "--one_frame"]

    def latent_cache_variant_flags(self) -> list[str]:
        return ["--i2v", "--one_frame"]

    def cache_variant(self) -> str:
        return f"wan-1f-{self.task()}"

    def prompt_defaults(self) -> Mapping[str, Any]:
        # the docs' sample prompt: one frame, 10 steps at flow shift 7
        return {"width": 512, "height": 512, "frames": 1, "steps": 10, "flow_shift": 7.0}
