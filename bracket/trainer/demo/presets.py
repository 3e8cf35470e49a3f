"""The embedded CPU demo preset."""

from bracket.trainer.demo import adapter as demo
from bracket.trainer.preset import ModelPreset

PRESETS = (
    ModelPreset(
        "demo-cpu", "Demo (CPU)", "LoRA", "Demo: tiny DDPM on CPU", demo.DemoLoRA, demo.FIELDS,
        notes="Embedded CPU trainer: a small DDPM trained from scratch on generated shapes. "
        "Shows the whole loop in minutes without a GPU.",
        trainer_script="bracket/trainer/scripts/demo_train.py",
        # the quick start reaches TPE: baseline, 3 curated, 2 LR bracket, 1 TPE (7 configs: below
        # the automatic confirmation rung) — at 50 steps all 7 fit in 3 minutes on 2 cores
        # (docs/BENCHMARKS.md)
        search_defaults=(("budget", 7), ("steps", 50)),
        # the quick start works on a fresh clone: the default demo dataset is made when missing
        prepare=demo.make_missing_demo_dataset,
        made_on_start=demo.demo_dataset_made_on_start,
        prepares=("dataset",),
    ),
)
