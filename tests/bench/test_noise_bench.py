"""The diffusion-noise landscapes and the noise benchmark's summary."""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

from bench.landscape_trainer import (
    LANDSCAPES,
    evaluated_steps,
    expected_loss,
    loss_curve,
    optimum,
    quality,
    quality_at,
    true_best_step,
    validation_curve,
)
from bench.noise import summarise
from bracket.session.scoring import read_scalars

ROOT = Path(__file__).resolve().parents[2]
ADAMW = {"optimizer_type": "AdamW", "lr_scheduler": "cosine", "lr_warmup_steps": 10}


def test_training_loss_is_noisy_and_validation_loss_is_not():
    shape = LANDSCAPES["diffusion-lora"]
    params = {**ADAMW, "learning_rate": 2e-3}
    curve = loss_curve(shape, params, 100, seed=5)
    late = curve[50:]
    assert statistics.pstdev(late) / statistics.fmean(late) > 0.3  # tens of percent per step
    finals = [validation_curve(shape, params, 100, seed, 20)[-1][1] for seed in range(20)]
    assert statistics.pstdev(finals) / statistics.fmean(finals) < 0.04  # seed offset + small measurement noise
    assert [s for s, _ in validation_curve(shape, params, 100, 1, 20)] == evaluated_steps(100) == [20, 40, 60, 80, 100]


def test_a_high_rate_overfits_before_the_end_and_the_training_loss_does_not_show_it():
    shape = LANDSCAPES["diffusion-overfit"]
    hot = {**ADAMW, "learning_rate": 4e-3}
    assert true_best_step(shape, hot) < 100
    assert quality_at(shape, hot, 100) > quality_at(shape, hot, true_best_step(shape, hot))
    # noise-free training loss (the trend under the per-step noise) keeps falling to the end
    trend = [expected_loss(shape, hot, s, 100) for s in (60, 80, 100)]
    assert trend == sorted(trend, reverse=True)
    best, _ = optimum(shape)
    assert quality(shape, hot) >= best


def test_the_landscape_trainer_logs_validation_when_asked(tmp_path):
    args = ["--output_dir", str(tmp_path / "out"), "--logging_dir", str(tmp_path / "logs"), "--learning_rate",
            "0.002", "--max_train_steps", "40", "--seed", "3", "--validation_split", "0.1",
            "--validate_every_n_steps", "10"]
    env = {"BRACKET_BENCH_LANDSCAPE": "diffusion-lora", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "landscape_trainer.py"), *args], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    scalars = read_scalars(tmp_path / "logs")
    assert [s for s, _ in scalars["loss/validation/step_average"]] == [10, 20, 30, 40]
    assert len(scalars["loss/current"]) == 40


def test_summary_ratios_and_steps():
    best, params = optimum(LANDSCAPES["diffusion-lora"])
    record = {"landscape": "diffusion-lora", "variant": "all", "repetition": 0, "budget": 4, "validated": True,
              "runs": [{"config_id": 1, "seed_index": 0, "quality": 1.2 * best},
                       {"config_id": 2, "seed_index": 0, "quality": 1.02 * best}],
              "picked_quality": 1.2 * best, "named_step": 80, "true_step": 100, "picked_seeds": 1}
    row = summarise([record])["diffusion-lora"]["all"]
    assert abs(row["picked_vs_best_tried"] - 1.2 / 1.02) < 1e-9
    assert row["median_trials_to_target"] == 2 and row["named_step_exact"] == 0 and row["named_step_median_off"] == 20
    assert row["picked_one_seed"] == 1.0
