"""The embedded CPU demo preset."""

from bracket.preset import ModelPreset
from bracket.trainer import demo

PRESETS = (
    ModelPreset(
        "demo-cpu", "Demo (CPU)", "LoRA", "Demo: tiny DDPM on CPU", demo.DemoTrainer, demo.FIELDS,
        notes="Embedded CPU trainer: a small DDPM trained from scratch on generated shapes. "
        "Shows the whole loop in minutes without a GPU.",
        trainer_script="bracket/trainer/demo_train.py",
        # the quick start reaches TPE: baseline, 3 curated, 2 LR bracket, 2 TPE — at 50 steps a
        # run is short enough for all 8 within 3 minutes on 2 cores (docs/BENCHMARKS.md)
        search_defaults=(("budget", 8), ("steps", 50)),
    ),
)
