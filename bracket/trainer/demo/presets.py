"""The embedded CPU demo preset."""

from bracket.trainer.demo import adapter as demo
from bracket.trainer.preset import ModelPreset

PRESETS = (
    ModelPreset(
        "demo-cpu", "Demo (CPU)", "LoRA", "Demo: tiny DDPM on CPU", demo.DemoLoRA, demo.FIELDS,
        notes="Embedded CPU trainer: a small DDPM trained from scratch on generated shapes. "
        "Shows the whole loop in minutes without a GPU.",
        trainer_script="bracket/trainer/scripts/demo_train.py",
        # 50 steps: a run takes about 15 s on 2 cores (docs/BENCHMARKS.md); the budget is every
        # preset's, the smallest that reaches TPE (bracket.app.forms.default_budget)
        search_defaults=(("steps", 50),),
        # the quick start works on a fresh clone: the default demo dataset is made when missing
        prepare=demo.make_missing_demo_dataset,
        made_on_start=demo.demo_dataset_made_on_start,
        prepares=("dataset",),
    ),
)
