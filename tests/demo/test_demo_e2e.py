"""End to end: a real 2-trial demo-cpu search through the CLI — real accelerate, real training."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from bracket.session import Session
from bracket.session.scoring import read_scalars

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_NAME = re.compile(r"^demo_(e\d{6}|\d{6})_(\d{2})_\d{14}_(\d+)\.png$")


@pytest.mark.slow
def test_two_trial_demo_search_trains_for_real(tmp_path):
    env = dict(os.environ, BRACKET_RUNS_DIR=str(tmp_path / "runs"))
    data = tmp_path / "demo-data"
    subprocess.run([sys.executable, "-m", "bracket", "demo-data", str(data), "--count", "24"], cwd=ROOT, env=env,
                   check=True, timeout=120)
    result = subprocess.run(
        [sys.executable, "-m", "bracket", "run", "--preset", "demo-cpu", "--set", f"dataset={data}",
         "--budget", "2", "--steps", "12", "--sample-every", "6", "--name", "e2e", "--quiet",
         "--prompts", "a red circle --d 1\na blue square --d 2"],
        cwd=ROOT, env=env, timeout=900, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "finished — 2/2 runs" in result.stdout

    session = Session.open(tmp_path / "runs" / "e2e")
    runs = [r for r in session.snapshot().runs if r["kind"] != "setup"]
    assert [r["kind"] for r in runs] == ["baseline", "curated"]
    for run in runs:
        assert run["status"] == "done", run["failure_reason"]
        assert run["score"] is not None and 0.0 <= run["score"] <= 1.0
        scalars = read_scalars(Path(run["run_dir"]) / "logs" / "tb")
        steps = [step for step, _ in scalars["loss/current"]]
        assert steps == list(range(1, 13)) and "loss/average" in scalars
        names = sorted(Path(s["path"]).name for s in run["samples"])
        assert names and all(SAMPLE_NAME.match(n) for n in names), names
        rendered = {(SAMPLE_NAME.match(n).group(1), int(SAMPLE_NAME.match(n).group(3))) for n in names}
        assert {("e000000", 1), ("e000000", 2), ("000006", 1), ("000012", 2)} <= rendered
        with Image.open(run["samples"][0]["path"]) as image:
            assert image.format == "PNG" and image.size[0] >= 32
    # the same prompt renders with the same seed in both runs: a fair side-by-side grid
    seeds = [{(s["prompt_index"], s["seed"]) for s in run["samples"]} for run in runs]
    assert seeds[0] == seeds[1] == {(0, 1), (1, 2)}
    session.close()
