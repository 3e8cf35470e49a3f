"""The embedded CPU demo preset."""

from bracket.preset import ModelPreset
from bracket.trainer import demo

PRESETS = (
    ModelPreset(
        "demo-cpu", "Demo (CPU)", "LoRA", "Demo: tiny DDPM on CPU", demo.DemoTrainer, demo.FIELDS,
        notes="Embedded CPU trainer: a small DDPM trained from scratch on generated shapes. "
        "Shows the whole loop in minutes without a GPU.",
        trainer_script="bracket/trainer/demo_train.py",
    ),
)
