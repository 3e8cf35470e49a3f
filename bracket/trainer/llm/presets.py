"""Preset table of the LLM family: LoRA through Axolotl, torchtune and Unsloth.

All three search the same LoRA space (bracket.trainer.llm.base) with an equal token budget per
candidate and a fixed eval split; they differ in how a configuration becomes a command.
"""

from bracket.trainer.llm import axolotl, torchtune, unsloth
from bracket.trainer.preset import ModelPreset

PRESETS = (
    ModelPreset(
        "axolotl-lora", "LLM (Axolotl)", "LoRA", "Axolotl: LoRA / QLoRA", axolotl.AxolotlLoRA,
        axolotl.FIELDS,
        notes="One YAML config per candidate, launched as `accelerate launch -m axolotl.cli.train cfg.yml` "
        "(what `axolotl train` runs). Fixed eval split as test_datasets; scored by eval/loss. "
        "Telemetry off (AXOLOTL_DO_NOT_TRACK=1). device=cpu turns off bf16 and the CUDA-only LoRA kernels.",
        trainer_script="axolotl train (accelerate launch -m axolotl.cli.train)",
    ),
    ModelPreset(
        "torchtune-lora", "LLM (torchtune)", "LoRA", "torchtune: LoRA (legacy)", torchtune.TorchtuneLoRA,
        torchtune.FIELDS,
        notes="torchtune is no longer maintained upstream (development wound down in 2025; 0.6.1 is the last "
        "release): a legacy backend. `tune run lora_finetune_single_device --config ... key=value ...`; the "
        "single-device recipe has no eval loss, so runs are scored by train loss only. Warmup is converted "
        "from a ratio to steps. The model must be downloaded first (`tune download`). Samples put the alpaca "
        "prompt inside the model's chat template, as torchtune's tokenizers do in training.",
        trainer_script="tune run lora_finetune_single_device",
    ),
    ModelPreset(
        "unsloth-lora", "LLM (Unsloth)", "LoRA", "Unsloth: LoRA / QLoRA", unsloth.UnslothLoRA,
        unsloth.FIELDS,
        notes="Bracket's own driver (bracket/trainer/scripts/unsloth_driver.py) runs FastLanguageModel + TRL "
        "SFTTrainer in the Unsloth venv, writes tfevents (train/loss, eval/loss) and the log history. "
        "Built for a GPU (4-bit base by default); current Unsloth also imports and trains LoRA on the CPU "
        "(device=cpu, quantize_base=none: tiny models and tests). The venv also needs `tensorboard`.",
        trainer_script="bracket/trainer/scripts/unsloth_driver.py",
    ),
)
