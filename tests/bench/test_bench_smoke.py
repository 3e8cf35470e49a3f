"""Smoke tests of the benchmarks: the landscape trainer's event files, the short overhead run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.landscape_trainer import LANDSCAPES, diverges, optimum, quality
from bracket.session.scoring import read_scalars

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_torch_probe(monkeypatch):
    """The demo adapter's pre-flight imports torch in the trainer python; not what is tested here."""
    monkeypatch.setattr("bracket.trainer.demo.adapter.trainer_python_problems", lambda *a, **k: [])


def test_landscape_trainer_writes_a_loss_the_session_reader_understands(tmp_path):
    args = ["--output_dir", str(tmp_path / "out"), "--logging_dir", str(tmp_path / "logs"),
            "--learning_rate", "0.002", "--optimizer_type", "AdamW", "--lr_scheduler", "cosine",
            "--lr_warmup_steps", "10", "--max_train_steps", "40", "--seed", "3", "--unknown_flag", "x"]
    env = {"BRACKET_BENCH_LANDSCAPE": "reference", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "landscape_trainer.py"), *args], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    series = read_scalars(tmp_path / "logs")["loss/current"]
    assert [s for s, _ in series] == list(range(1, 41))
    assert series[0][1] > 0.5 and series[-1][1] < 0.2, "the loss falls from ~1 towards the landscape's floor"
    bad = subprocess.run([sys.executable, str(ROOT / "bench" / "landscape_trainer.py"), *args],
                         env={**env, "BRACKET_BENCH_LANDSCAPE": "nope"}, capture_output=True, text=True,
                         timeout=60, check=False)
    assert bad.returncode == 2 and "unknown" in bad.stderr


def test_landscapes_have_the_documented_structure():
    for name, landscape in LANDSCAPES.items():
        best, params = optimum(landscape, per_decade=40)
        assert quality(landscape, params) == best
        slower = dict(params, learning_rate=params["learning_rate"] / 10)
        assert quality(landscape, slower) > 1.05 * best, name
    warm = LANDSCAPES["warmup-critical"]
    hot = {"optimizer_type": "AdamW", "learning_rate": 2e-2, "lr_scheduler": "cosine", "lr_warmup_steps": 0}
    assert diverges(warm, hot) and not diverges(warm, dict(hot, lr_warmup_steps=20))
    # 'constant' ignores warmup steps, as in diffusers and sd-scripts
    assert diverges(warm, dict(hot, lr_scheduler="constant", lr_warmup_steps=20))
    flat = LANDSCAPES["flat-noisy"]
    base = {"optimizer_type": "AdamW", "learning_rate": 3e-4, "lr_scheduler": "cosine", "lr_warmup_steps": 0}
    assert quality(flat, base) == quality(flat, dict(base, lr_scheduler="linear", lr_warmup_steps=20))


def test_short_overhead_benchmark_runs_and_writes_its_json(tmp_path):
    from bench import overhead

    data = overhead.run(short=True, results_dir=tmp_path, demo=False, sizes=(20,), gap_trials=5, log=lambda _: None)
    written = json.loads((tmp_path / "overhead.json").read_text())
    assert written["machine"]["cores"] >= 1
    gap = written["gap"]
    assert gap["status"] == "finished" and gap["trials"] == 5
    assert 0 <= gap["gap_median_s"] <= gap["gap_p95_s"] < 30
    (row,) = written["suggestion"]
    assert row["trials"] == 20 and row["next_s"] > 0 and row["store_mb"] > 0 and row["rss_mb"] > 10
    assert data["gap"]["trials"] == 5


def test_the_results_tab_probe_of_a_just_started_app_measures_both_halves(filled_demo_session):
    from bench.ui_poll import results_seconds

    folder = filled_demo_session(6, name="probe")
    measured = results_seconds(folder)
    assert "error" not in measured, measured["error"]
    assert measured["board_s"] > 0 and measured["report_s"] > 0
    assert (folder / "report" / "report.md").is_file()  # the report half ran: it wrote the report
