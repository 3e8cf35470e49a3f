"""SDXL adapters: LoRA (``sdxl_train_network.py``) and full fine-tune (``sdxl_train.py``).

What is special about SDXL in sd-scripts: one checkpoint holds U-Net, both text encoders
and the VAE (``--vae`` optionally replaces the VAE); LoRA trains the U-Net only
(``--network_train_unet_only``, recommended by ``docs/train_SDXL-en.md``), which lets the
text-encoder outputs be cached; the module is ``networks.lora``; per-encoder text rates
are ``--text_encoder_lr a b`` (nargs), never the ``--text_encoder_lr1/2`` of the docs.
"""

from __future__ import annotations

from typing import ClassVar

from bracket.search.configs import NamedConfig
from bracket.trainer.base import ModelInput
from bracket.trainer.sd_scripts.base import SdScriptsFull, SdScriptsLoRA, SdScriptsTrainer
from bracket.trainer.tokenizers import CLIP_G_TOKENIZER, CLIP_L_TOKENIZER

SDXL_INPUTS = (
    ModelInput("model_path", "--pretrained_model_name_or_path", optional=True),
    ModelInput("vae_path", "--vae", optional=True),
)
_DOCS = "kohya-ss/sd-scripts"


class _SdxlFamily(SdScriptsTrainer):
    """The family's class data and helpers, mixed in before its LoRA and full adapters."""

    model_inputs: ClassVar[tuple[ModelInput, ...]] = SDXL_INPUTS
    latent_cache_suffix = "_sdxl.npz"
    text_encoder_cache_suffix = "_te_outputs.npz"
    cache_tool_flag = "--sdxl"
    save_precision = "fp16"  # SDXL base is released in fp16; an fp16 LoRA loads everywhere
    tokenizer_ids: tuple[str, ...] = (CLIP_L_TOKENIZER, CLIP_G_TOKENIZER)
    prompt_letters: ClassVar[tuple[str, ...]] = ("d", "w", "h", "s", "l", "n")


class SdxlLoRA(_SdxlFamily, SdScriptsLoRA):
    """SDXL LoRA (preset ``sdxl-lora``)."""

    script = "sdxl_train_network.py"
    network_module = "networks.lora"
    optimizers = ("AdamW8bit", "AdamW", "Adafactor", "Prodigy")
    lr_range = (1e-5, 2e-3)

    def baseline_config(self) -> NamedConfig:
        # The example command of docs/sdxl_train_network.md (its --unet_lr equals --learning_rate).
        return NamedConfig("baseline", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
            "network_dim": 32, "network_alpha": 16, "batch_size": 1,
        }, source=f"{_DOCS} docs/sdxl_train_network.md example command")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # diffusers' SDXL DreamBooth LoRA example: AdamW 1e-4, constant, a small rank.
            NamedConfig("diffusers-dreambooth", {
                "optimizer_type": "AdamW", "learning_rate": 1e-4, "lr_scheduler": "constant",
                "network_dim": 4, "network_alpha": 4, "batch_size": 1,
            }, source="huggingface/diffusers examples/dreambooth/README_sdxl.md (train_dreambooth_lora_sdxl.py)"),
            # Prodigy at lr 1.0 with bias correction and safeguarded warm-up, as its authors advise
            # for diffusion models; rank 32 as the diffusers advanced SDXL trainer uses.
            NamedConfig("prodigy", {
                "optimizer_type": "Prodigy", "adaptive_learning_rate": 1.0, "prodigy_d_coef": 1.0,
                "lr_scheduler": "constant", "network_dim": 32, "network_alpha": 32, "batch_size": 1,
            }, source="konstmish/prodigy README (diffusion models); diffusers advanced_diffusion_training README"),
            # Fixed-LR Adafactor, the low-memory option of docs/train_SDXL-en.md, with its warm-up.
            NamedConfig("adafactor", {
                "optimizer_type": "Adafactor", "learning_rate": 1e-4, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 100, "network_dim": 16, "network_alpha": 8, "batch_size": 1,
            }, source=f"{_DOCS} docs/train_SDXL-en.md (Adafactor settings, LoRA tips)"),
            # A faster rate with a cosine decay, common in community SDXL character LoRAs.
            NamedConfig("adamw8bit-cosine", {
                "optimizer_type": "AdamW8bit", "learning_rate": 4e-4, "lr_scheduler": "cosine",
                "lr_warmup_steps": 50, "network_dim": 16, "network_alpha": 8, "batch_size": 1,
            }, source="community SDXL LoRA practice (higher rate, cosine), bounded by train_SDXL-en.md tips"),
        ]


class SdxlFull(_SdxlFamily, SdScriptsFull):
    """SDXL full fine-tune of the U-Net (preset ``sdxl-full``); Adafactor + fused backward pass."""

    script = "sdxl_train.py"
    lr_range = (1e-7, 5e-5)
    # docs/train_SDXL-en.md: full_bf16 is what makes a 24 GB fine-tune fit
    memory_plan = ((24, ("--full_bf16",)),)

    def baseline_config(self) -> NamedConfig:
        # docs/fine_tune.md: the basic fine-tuning command (AdamW8bit, 1e-5).
        return NamedConfig("baseline", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-5, "lr_scheduler": "constant", "batch_size": 1,
        }, source=f"{_DOCS} docs/fine_tune.md basic command")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # The Adafactor example of docs/train_SDXL-en.md: SDXL's original rate 4e-7, 100 warm-up steps.
            NamedConfig("adafactor-sdxl-original", {
                "optimizer_type": "Adafactor", "learning_rate": 4e-7, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 100, "batch_size": 1,
            }, source=f"{_DOCS} docs/train_SDXL-en.md Adafactor example"),
            # The same optimizer at a fine-tuning rate an order of magnitude up, for short runs.
            NamedConfig("adafactor-4e-6", {
                "optimizer_type": "Adafactor", "learning_rate": 4e-6, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 50, "batch_size": 1,
            }, source=f"{_DOCS} docs/fine_tune.md (4e-6 example rate) with train_SDXL-en.md Adafactor settings"),
            # docs/fine_tune.md SDXL example rate with a cosine decay.
            NamedConfig("adamw8bit-cosine", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-5, "lr_scheduler": "cosine",
                "lr_warmup_steps": 50, "batch_size": 1,
            }, source=f"{_DOCS} docs/fine_tune.md sdxl_train.py example (1e-5)"),
        ]
