"""The embedded CPU demo trainer's adapter (preset ``demo-cpu``).

It drives ``demo_train.py`` — our own tiny DDPM trainer — exactly the way the sd-scripts
adapters drive the real trainers: ``accelerate launch``, a per-run dataset TOML, a
sample-prompt file with fixed seeds, tfevents under ``--logging_dir`` and samples under
``<output_dir>/sample/``. So the demo exercises the whole pipeline on a CPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bracket import settings
from bracket.dataset.runtime import derive_run_toml
from bracket.preset import FieldSpec
from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, IntKnob, SearchSpace
from bracket.trainer.base import (
    LaunchSpec,
    NamedConfig,
    Trainer,
    TrainerConfig,
    make_accelerate_launch_prefix,
    make_subprocess_env,
)
from bracket.trainer.prompts import SamplePrompt, write_prompt_file

DEMO_SCRIPT = Path(__file__).with_name("demo_train.py")
OPTIMIZERS = ("AdamW", "Adam", "RAdam", "SGD", "Adagrad")
SCHEDULERS = ("constant", "constant_with_warmup", "cosine", "linear")

FIELDS = (
    FieldSpec(
        "dataset", "Demo dataset (TOML or folder)", "path",
        default=lambda: str(settings.get_settings().demo_data_dir / "dataset.toml"), required=True,
        help="Made by `python -m bracket demo-data DIR` (install.sh makes runs/demo-data).",
        env_var="BRACKET_DEMO_DATA",
    ),
    FieldSpec(
        "trainer_python", "Trainer python", "file",
        default=lambda: str(settings.get_settings().demo_python), required=True,
        help="A python with torch, diffusers and accelerate (the app's own .venv).",
        env_var="BRACKET_DEMO_PYTHON",
    ),
    FieldSpec(
        "train_script", "Training script", "file", default=str(DEMO_SCRIPT), required=True,
        help="The demo's training script; tests point it at a fake trainer.",
    ),
    FieldSpec("resolution", "Resolution", "int", default="32", help="Square image size in pixels."),
)


class DemoTrainer(Trainer):
    """A tiny UNet2DModel DDPM on CPU, searched over learning rate, optimizer and schedule."""

    loss_tags = ("loss/current", "loss/average")
    dataset_style = "sd-scripts"

    def declare_search_space(self) -> SearchSpace:
        return SearchSpace({
            "optimizer_type": CategoricalKnob(OPTIMIZERS),
            "learning_rate": FloatKnob(1e-5, 3e-2, log=True),
            "lr_scheduler": CategoricalKnob(SCHEDULERS),
            "lr_warmup_steps": IntKnob(0, 20, step=5),
            "batch_size": FixedKnob(16),
        })

    def baseline_config(self) -> NamedConfig:
        # The diffusers unconditional DDPM example's defaults (AdamW, lr 1e-4, cosine).
        return NamedConfig("baseline", {
            "optimizer_type": "AdamW", "learning_rate": 1e-4, "lr_scheduler": "cosine",
            "lr_warmup_steps": 0, "batch_size": 16,
        }, source="diffusers examples/unconditional_image_generation defaults")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # Small DDPMs tolerate a much higher AdamW rate than the example's default.
            NamedConfig("adamw-fast", {
                "optimizer_type": "AdamW", "learning_rate": 2e-3, "lr_scheduler": "constant_with_warmup",
                "lr_warmup_steps": 5, "batch_size": 16,
            }, source="Ho et al. 2020 DDPM (Adam 2e-4, warmup) scaled for a 1M-parameter UNet"),
            # RAdam needs no warmup (Liu et al. 2020).
            NamedConfig("radam", {
                "optimizer_type": "RAdam", "learning_rate": 3e-3, "lr_scheduler": "constant",
                "lr_warmup_steps": 0, "batch_size": 16,
            }, source="Liu et al. 2020, RAdam: rectified warmup"),
            # Plain SGD needs a rate roughly 10x that of Adam.
            NamedConfig("sgd", {
                "optimizer_type": "SGD", "learning_rate": 2e-2, "lr_scheduler": "cosine",
                "lr_warmup_steps": 5, "batch_size": 16,
            }, source="PyTorch SGD rule of thumb: ~10x the Adam learning rate"),
        ]

    def prepare_run(
        self,
        *,
        run_dir: Path,
        config: TrainerConfig,
        dataset_toml: Path,
        max_steps: int,
        seed: int,
        sample_prompts: Sequence[SamplePrompt] | None = None,
        sample_every_n_steps: int | None = None,
        save_every_n_steps: int | None = None,
        save_state: bool = False,
        resume_from: Path | None = None,
    ) -> LaunchSpec:
        knobs = config.to_dict()
        run_dir = Path(run_dir)
        resolution = int(self.fields.get("resolution") or 32)
        run_toml = derive_run_toml(
            Path(dataset_toml), run_dir / "dataset.toml", style="sd-scripts",
            general={"batch_size": int(knobs["batch_size"]), "resolution": resolution},
        )
        output_dir = run_dir / "output"
        logging_dir = run_dir / "logs" / "tb"
        python = self.fields.get("trainer_python", "python")
        cmd = make_accelerate_launch_prefix(python, mixed_precision="no") + [
            self.fields.get("train_script") or str(DEMO_SCRIPT),
            "--dataset_config", str(run_toml),
            "--output_dir", str(output_dir),
            "--output_name", "demo",
            "--logging_dir", str(logging_dir),
            "--learning_rate", repr(float(knobs["learning_rate"])),
            "--optimizer_type", str(knobs["optimizer_type"]),
            "--lr_scheduler", str(knobs["lr_scheduler"]),
            "--lr_warmup_steps", str(int(knobs["lr_warmup_steps"])),
            "--max_train_steps", str(int(max_steps)),
            "--seed", str(int(seed)),
            "--mixed_precision", "no",
        ]
        if sample_prompts:
            prompt_file = run_dir / "sample_prompts.txt"
            write_prompt_file(prompt_file, sample_prompts, letters=("d", "w", "h", "s"))
            cmd += ["--sample_prompts", str(prompt_file), "--sample_at_first"]
            if sample_every_n_steps:
                cmd += ["--sample_every_n_steps", str(int(sample_every_n_steps))]
        if save_every_n_steps:
            cmd += ["--save_every_n_steps", str(int(save_every_n_steps))]
        if save_state:
            cmd += ["--save_state"]
        if resume_from:
            cmd += ["--resume", str(resume_from)]
        return LaunchSpec(
            cmd=cmd, cwd=run_dir, env=make_subprocess_env(), output_dir=output_dir,
            logging_dir=logging_dir, sample_dir=output_dir / "sample", loss_tags=self.loss_tags,
            max_steps=int(max_steps),
        )
