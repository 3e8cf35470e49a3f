"""HiDream-O1-Image on musubi-tuner: LoRA (``hidream_o1_train_network.py``) and full fine-tune
(``hidream_o1_train.py``), from docs/hidream_o1.md.

Quirks: one model file, the single checkpoint in ``--dit`` — there is no VAE (the "latent"
cache is a pixel-patch cache, ``hidream_o1_cache_pixel.py``) and no text-encoder file (the
prompt cache only tokenizes; tokenizer assets come from the official Hugging Face repository
of the ``--model_type``). The ``hidream_model_type`` field (full / dev) sets ``--model_type``
on the trainer and the prompt cache, and the noise parameters the docs require per type
(full: 8.0 / 8.0 / 0.0; dev: 7.5 / 7.5 / 2.5). The presets train text-to-image
(``--task t2i``, with ``--skip_t2i_visual_dummy`` as the docs advise on one GPU); the docs'
``--timestep_sampling uniform --weighting_scheme none`` is the baseline (musubi's buckets keep
image sides multiples of 32, as HiDream-O1 needs).
"""

from __future__ import annotations

from collections.abc import Mapping

from bracket.search.configs import NamedConfig
from bracket.search.space import SearchSpace
from bracket.trainer.base import ModelInput
from bracket.trainer.musubi.base import MusubiTrainer
from bracket.trainer.musubi.space import PRODIGY, full_space, lora_space

DOCS = "kohya-ss/musubi-tuner docs/hidream_o1.md"
MODEL_TYPES = ("full", "dev")
#: the processor (tokenizer) musubi loads from the hub by name per model type (hidream_o1_utils.load_processor)
PROCESSORS = {"full": "HiDream-ai/HiDream-O1-Image", "dev": "HiDream-ai/HiDream-O1-Image-Dev"}
#: --noise_scale_start, --noise_scale_end, --noise_clip_std per model type (docs, LoRA Training notes)
NOISE = {"full": ("8.0", "8.0", "0.0"), "dev": ("7.5", "7.5", "2.5")}
_SAMPLINGS = ("uniform", "sigmoid", "shift", "logsnr")


class _HiDreamO1Base(MusubiTrainer):
    latent_cache_script = "hidream_o1_cache_pixel.py"
    text_cache_script = "hidream_o1_cache_text_encoder_outputs.py"
    model_inputs = (ModelInput("dit", train_flag="--dit"),)
    prompt_letters = ("w", "h", "d", "s", "l", "n")
    tokenizer_ids = (PROCESSORS["full"],)

    def __init__(self, fields: Mapping[str, str] | None = None) -> None:
        super().__init__(fields)
        self.tokenizer_ids = (PROCESSORS.get(self.model_type(), PROCESSORS["full"]),)
    #: steps and guidance are left to the model type's official schedule (hidream_o1_utils)
    sample_defaults = {"width": 1024, "height": 1024}

    def model_type(self) -> str:
        return self.field("hidream_model_type") or MODEL_TYPES[0]

    def variant_flags(self) -> list[str]:
        start, end, clip = NOISE[self.model_type()]
        return ["--model_type", self.model_type(), "--task", "t2i", "--skip_t2i_visual_dummy",
                "--noise_scale_start", start, "--noise_scale_end", end, "--noise_clip_std", clip]

    def text_cache_variant_flags(self) -> list[str]:
        return ["--model_type", self.model_type()]

    def cache_variant(self) -> str:
        return f"hidream-o1-{self.model_type()}"


class HiDreamO1LoRA(_HiDreamO1Base):
    """HiDream-O1 LoRA with ``networks.lora_hidream_o1`` (decoder + pixel patch layers)."""

    script = "hidream_o1_train_network.py"
    network_module = "networks.lora_hidream_o1"
    #: the docs' memory-saving example offloads 24 Qwen3-VL decoder blocks
    memory_plan = ((24, ("--blocks_to_swap", "24")), (48, ("--blocks_to_swap", "12")))

    def declare_search_space(self) -> SearchSpace:
        return lora_space(learning_rate=(1e-5, 3e-4), timestep_samplings=_SAMPLINGS, flow_shift=(1.0, 6.0))

    def baseline_config(self) -> NamedConfig:
        # The LoRA example command of the docs (alpha at the parser default 1).
        return NamedConfig("musubi-docs", {
            "optimizer_type": "AdamW8bit", "learning_rate": 4e-5, "lr_scheduler": "constant",
            "network_dim": 32, "network_alpha": 1, "timestep_sampling": "uniform",
        }, source=f"{DOCS}, LoRA Training example")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            NamedConfig("docs-1e-4-cosine", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "cosine",
                "lr_warmup_steps": 10, "network_dim": 32, "network_alpha": 1, "timestep_sampling": "uniform",
            }, source=f"{DOCS} LoRA example, Bracket variant: 2.5x the rate with a cosine decay"),
            NamedConfig("alpha-16", {
                "optimizer_type": "AdamW8bit", "learning_rate": 4e-5, "lr_scheduler": "constant",
                "network_dim": 32, "network_alpha": 16, "timestep_sampling": "uniform",
            }, source=f"{DOCS} LoRA example rate with alpha = rank / 2 (a stronger update per step)"),
            NamedConfig("prodigy", {
                "optimizer_type": PRODIGY, "prodigy_d_coef": 1.0, "lr_scheduler": "constant",
                "network_dim": 32, "network_alpha": 32, "timestep_sampling": "uniform",
            }, source="konstmish/prodigy README (diffusion models) with the docs' uniform sampling"),
            NamedConfig("logsnr", {
                "optimizer_type": "AdamW8bit", "learning_rate": 4e-5, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 10, "network_dim": 32, "network_alpha": 1, "timestep_sampling": "logsnr",
            }, source="kohya-ss/musubi-tuner docs/advanced_config.md, Style-Friendly SNR sampler (logsnr)"),
        ]


class HiDreamO1Full(_HiDreamO1Base):
    """HiDream-O1 full fine-tune (``--full_bf16``, Adafactor with the fused backward pass)."""

    script = "hidream_o1_train.py"
    #: the docs' full fine-tune example swaps 24 blocks; fp8 is rejected for full fine-tuning
    memory_plan = ((48, ("--blocks_to_swap", "24")),)

    def declare_search_space(self) -> SearchSpace:
        return full_space(learning_rate=(2e-7, 2e-5), timestep_samplings=_SAMPLINGS, flow_shift=(1.0, 6.0))

    def baseline_config(self) -> NamedConfig:
        # The full fine-tuning example of the docs.
        return NamedConfig("musubi-docs", {
            "optimizer_type": "Adafactor", "learning_rate": 1e-6, "lr_scheduler": "constant_with_warmup",
            "lr_warmup_steps": 10, "timestep_sampling": "uniform",
        }, source=f"{DOCS}, Full Finetuning example")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            NamedConfig("docs-cosine", {
                "optimizer_type": "Adafactor", "learning_rate": 2e-6, "lr_scheduler": "cosine",
                "lr_warmup_steps": 20, "timestep_sampling": "uniform",
            }, source=f"{DOCS} full fine-tune example, Bracket variant: cosine decay from 2e-6"),
            NamedConfig("adamw8bit-1e-6", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-6, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 10, "timestep_sampling": "uniform",
            }, source=f"{DOCS} full fine-tune rate with AdamW8bit (no fused backward pass)"),
            NamedConfig("adafactor-logsnr", {
                "optimizer_type": "Adafactor", "learning_rate": 1e-6, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 10, "timestep_sampling": "logsnr",
            }, source="kohya-ss/musubi-tuner docs/advanced_config.md (logsnr) on the docs' full fine-tune example"),
        ]
