"""Anima adapters: LoRA (``anima_train_network.py``) and full fine-tune (``anima_train.py``).

What is special about Anima in sd-scripts (docs/anima_train_network.md): a MiniTrainDIT
with the Qwen3-0.6B text encoder (``--qwen3``), an LLM adapter (inside the DiT file unless
``--llm_adapter_path`` names one) and the Qwen-Image VAE (``--vae``); the LoRA module is
``networks.lora_anima``. Timesteps use FLUX.1's samplers with ``sigmoid`` as the default and
``--discrete_flow_shift`` 1.0; ``--fp8_base`` is not supported (the script disables it), so
small GPUs get only gradient checkpointing and the VAE's chunked, cache-less mode
(``--vae_chunk_size 64 --vae_disable_cache``, as the docs' example command). Tokenizers
are bundled with sd-scripts. The cache tools know no Anima: the first run writes the
``_anima.npz`` / ``_anima_te.npz`` caches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from bracket.search.configs import NamedConfig
from bracket.search.space import Knob
from bracket.trainer.base import ModelInput
from bracket.trainer.sd_scripts.base import SdScriptsFull, SdScriptsLoRA, SdScriptsTrainer
from bracket.trainer.sd_scripts.flow import flow, flow_args, flow_knobs

ANIMA_INPUTS = (
    ModelInput("model_path", "--pretrained_model_name_or_path", optional=True),
    ModelInput("qwen3_path", "--qwen3", optional=True),
    ModelInput("vae_path", "--vae", optional=True),
    ModelInput("llm_adapter_path", "--llm_adapter_path", optional=True),
)
DOC_SHIFT = 1.0
_DOC = "kohya-ss/sd-scripts docs/anima_train_network.md"


class _AnimaFamily(SdScriptsTrainer):
    """The family's class data and helpers, mixed in before its LoRA and full adapters."""

    model_inputs: ClassVar[tuple[ModelInput, ...]] = ANIMA_INPUTS
    latent_cache_suffix = "_anima.npz"
    text_encoder_cache_suffix = "_anima_te.npz"
    save_precision = "bf16"
    prompt_letters: ClassVar[tuple[str, ...]] = ("d", "w", "h", "s", "l", "n")

    def prompt_defaults(self) -> dict[str, Any]:
        size = self.resolution()
        return {"width": size, "height": size, "steps": 30, "cfg_scale": 4.0}

    def family_knobs(self) -> dict[str, Knob]:
        return flow_knobs(("sigmoid", "shift", "flux_shift"), (1.0, 5.0))

    def family_args(self, knobs: Mapping[str, Any]) -> list[str]:
        return [*flow_args(knobs, DOC_SHIFT), "--vae_chunk_size", "64", "--vae_disable_cache"]


class AnimaLoRA(_AnimaFamily, SdScriptsLoRA):
    """Anima LoRA (preset ``anima-lora``)."""

    script = "anima_train_network.py"
    network_module = "networks.lora_anima"
    optimizers = ("AdamW8bit", "AdamW", "Adafactor", "Prodigy")
    lr_range = (1e-5, 1e-3)

    def baseline_config(self) -> NamedConfig:
        # §4 example command: AdamW8bit 1e-4, dim 8 with the default alpha 1, sigmoid sampling.
        return NamedConfig("baseline", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
            "network_dim": 8, "network_alpha": 1, "batch_size": 1, **flow("sigmoid"),
        }, source=f"{_DOC} §4 example command")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # §4: the rate is for alpha 1; with alpha = rank the docs advise a lower rate.
            NamedConfig("alpha-equals-rank", {
                "optimizer_type": "AdamW8bit", "learning_rate": 5e-5, "lr_scheduler": "cosine",
                "lr_warmup_steps": 20, "network_dim": 16, "network_alpha": 16, "batch_size": 1, **flow("sigmoid"),
            }, source=f"{_DOC} §4 note (1e-4 is for alpha 1; raise alpha, lower the rate)"),
            # §7.1: Adafactor as the low-memory optimizer (fixed LR, constant_with_warmup).
            NamedConfig("adafactor", {
                "optimizer_type": "Adafactor", "learning_rate": 1e-4, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 20, "network_dim": 8, "network_alpha": 1, "batch_size": 1, **flow("sigmoid"),
            }, source=f"{_DOC} §7.1 'Using Adafactor optimizer'"),
            # §7.2: the shift sampler; 3.0 moves training towards noisier timesteps.
            NamedConfig("shift-3", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-4, "lr_scheduler": "constant",
                "network_dim": 8, "network_alpha": 1, "batch_size": 1, **flow("shift", 3.0),
            }, source=f"{_DOC} §7.2 timestep sampling (shift formula), Bracket's choice of 3.0"),
            NamedConfig("prodigy", {
                "optimizer_type": "Prodigy", "adaptive_learning_rate": 1.0, "prodigy_d_coef": 1.0,
                "lr_scheduler": "constant", "network_dim": 16, "network_alpha": 16, "batch_size": 1, **flow("sigmoid"),
            }, source="konstmish/prodigy README (diffusion models) with the docs' sigmoid sampling"),
        ]


class AnimaFull(_AnimaFamily, SdScriptsFull):
    """Anima full fine-tune (preset ``anima-full``)."""

    script = "anima_train.py"
    lr_range = (1e-7, 5e-5)
    memory_plan = ((24, ("--full_bf16",)),)

    def baseline_config(self) -> NamedConfig:
        # docs/fine_tune.md's basic fine-tuning command (AdamW8bit 1e-5) with Anima's default sampler.
        return NamedConfig("baseline", {
            "optimizer_type": "AdamW8bit", "learning_rate": 1e-5, "lr_scheduler": "constant", "batch_size": 1,
            **flow("sigmoid"),
        }, source=f"kohya-ss/sd-scripts docs/fine_tune.md basic command + {_DOC} §4.1 defaults")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            NamedConfig("adafactor", {
                "optimizer_type": "Adafactor", "learning_rate": 1e-5, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 20, "batch_size": 1, **flow("sigmoid"),
            }, source=f"{_DOC} §7.1 Adafactor settings + §8 --fused_backward_pass (Adafactor only)"),
            NamedConfig("adafactor-4e-6", {
                "optimizer_type": "Adafactor", "learning_rate": 4e-6, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 20, "batch_size": 1, **flow("sigmoid"),
            }, source="kohya-ss/sd-scripts docs/fine_tune.md (4e-6 example rate) on the §7.1 Adafactor settings"),
            NamedConfig("adamw8bit-cosine-shift-3", {
                "optimizer_type": "AdamW8bit", "learning_rate": 1e-5, "lr_scheduler": "cosine",
                "lr_warmup_steps": 20, "batch_size": 1, **flow("shift", 3.0),
            }, source=f"kohya-ss/sd-scripts docs/fine_tune.md rate; {_DOC} §7.2 shift sampler"),
        ]
