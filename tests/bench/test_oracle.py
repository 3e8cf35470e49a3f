"""The steering benchmark's ``oracle`` mode: runs that train on the rater's taste itself."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from bench.landscape_trainer import LR_RANGE, OPTIMIZERS, SCHEDULERS, diverges, quality
from bench.oracle import landscape_for, landscape_name, oracle_landscape
from bench.raters import TASTES
from bench.steering import run_session, summarise, trials_to_target
from bracket.judge.loss import score_loss_runs
from bracket.session.scoring import read_scalars

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_torch_probe(monkeypatch):
    monkeypatch.setattr("bracket.trainer.demo.adapter.trainer_python_problems", lambda *a, **k: [])


def _grid():
    low, high = (math.log10(v) for v in LR_RANGE)
    rates = [10 ** (low + (high - low) * i / 24) for i in range(25)]
    return [{"optimizer_type": o, "learning_rate": lr, "lr_scheduler": s, "lr_warmup_steps": w}
            for o in OPTIMIZERS for s in SCHEDULERS for w in (0, 10) for lr in rates]


@pytest.mark.parametrize("name", list(TASTES))
def test_the_oracle_landscape_is_the_tastes_value_divergence_included(name):
    taste = TASTES[name]
    oracle = landscape_for(landscape_name(name))
    assert oracle == oracle_landscape(taste) and oracle.seed_sigma == oracle.step_sigma == 0.0
    grid = _grid()
    assert [quality(oracle, p) for p in grid] == [taste.value(p) for p in grid]
    broken = [p for p in grid if diverges(taste.loss, p)]
    assert broken and all(diverges(oracle, p) for p in broken), "a run the rater sees as broken diverges"


def test_the_loss_and_its_taste_disagree_somewhere_only_the_oracle_sees():
    # linear-bold's own surface diverges later than its loss landscape: the oracle must follow the loss there
    taste = TASTES["linear-bold"]
    only_loss = [p for p in _grid() if diverges(taste.loss, p) and not diverges(taste.surface, p)]
    assert only_loss and all(diverges(oracle_landscape(taste), p) for p in only_loss)
    assert landscape_for("oracle:nobody") is None and landscape_for("reference") is None


def _train(tmp_path, landscape, params, tag, steps=40):
    args = ["--output_dir", str(tmp_path / tag / "out"), "--logging_dir", str(tmp_path / tag / "logs"),
            "--max_train_steps", str(steps), "--seed", "3"]
    args += [f"--{k}={v}" for k, v in params.items()]
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "landscape_trainer.py"), *args],
                          env={"BRACKET_BENCH_LANDSCAPE": landscape, "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60, check=False)
    return done, (read_scalars(tmp_path / tag / "logs")["loss/current"] if done.returncode == 0 else None)


def test_the_trainer_trains_on_the_taste_and_the_loss_judge_orders_runs_as_the_taste_does(tmp_path):
    taste = TASTES["softer"]
    liked = taste.optimum(40)[1]
    bolder = dict(liked, learning_rate=4 * liked["learning_rate"])  # towards the loss optimum, still trains
    assert taste.value(liked, 40) < taste.value(bolder, 40) and not diverges(oracle_landscape(taste), bolder)
    assert quality(taste.loss, bolder, 40) < quality(taste.loss, liked, 40), "the loss prefers the bolder rate"
    for landscape, favourite in ((landscape_name("softer"), liked), (taste.loss_landscape, bolder)):
        series = {}
        for i, params in enumerate((liked, bolder)):
            done, series[i] = _train(tmp_path, landscape, params, f"{landscape}-{i}")
            assert done.returncode == 0, done.stderr
        scores = score_loss_runs(series)
        assert not any(result.disqualified for result in scores.values())
        best = min(scores, key=lambda run: scores[run].score)
        assert (liked, bolder)[best] == favourite, f"{landscape}: the judge's favourite"
    # a config that diverges on the loss only looks broken to the rater: the oracle's run diverges
    bold = TASTES["linear-bold"]
    broken = next(p for p in _grid() if diverges(bold.loss, p) and not diverges(bold.surface, p))
    done, curve = _train(tmp_path, landscape_name("linear-bold"), broken, "broken")
    assert done.returncode == 0 and score_loss_runs({1: curve})[1].disqualified
    unknown, _ = _train(tmp_path, "oracle:nobody", liked, "unknown")
    assert unknown.returncode == 2 and "unknown" in unknown.stderr


def test_an_oracle_session_has_no_rater_picks_by_the_taste_and_is_summarised(tmp_path):
    control = run_session("softer", "control", 0, 7, 30, str(tmp_path))
    perfect = run_session("softer", "oracle", 0, 7, 30, str(tmp_path))
    assert perfect["status"] == "finished" and perfect["mode"] == "oracle"
    assert perfect["ratings"] == perfect["pairs"] == 0 and perfect["events"] == []
    tastes = [t["taste"] for t in perfect["trials"]]
    assert len(tastes) == 7 and sum(t["picked"] for t in perfect["trials"]) == 1
    picked = next(t["taste"] for t in perfect["trials"] if t["picked"])
    # the loss judge smooths the loss, which can favour a faster near neighbour (run O: <= 3.6 %)
    assert picked <= 1.05 * min(tastes), "a perfect rater's session picks what the taste likes best"
    assert set(perfect["picks"]) >= {"mean", "rated"}
    summary = summarise([control, perfect])["softer"]
    assert summary["modes"] == ["control", "oracle"]
    assert summary["oracle"]["median_trials_to_target"] == trials_to_target(perfect)
    assert summary["oracle"]["median_pick_ratio"] == picked
    assert summary["oracle_vs_control"]["trials_ratio"] == trials_to_target(perfect) / trials_to_target(control)
