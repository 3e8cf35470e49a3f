"""The GPU proof script's CPU mode with the real sd-scripts (slow; skips without vendor/sd-scripts).

It reuses the trainer venv and random SDXL weights of tests/sd_scripts/test_sdxl_real.py
(``BRACKET_TEST_TRAINER_PYTHON``, ``BRACKET_TEST_SDXL_WEIGHTS``) and runs one 2-run session
(``--quick``) at 1 step: about the cost of that test's search (~36 min on 2 loaded cores).
"""

from __future__ import annotations

import json

import pytest

from bench.gpu import orchestrate
from tests.sd_scripts.test_sdxl_real import SD_SCRIPTS, random_sdxl, trainer_python  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow


@pytest.mark.timeout(7200)
def test_the_script_on_cpu_with_the_real_sd_scripts(random_sdxl, trainer_python, tmp_path):  # noqa: F811
    out = tmp_path / "out"
    code = orchestrate.main(["--out", str(out), "--device", "cpu", "--steps", "2", "--quick", "--vram-gb", "24",
                             "--carry", str(tmp_path / "no-carry"), "--sd-scripts", str(SD_SCRIPTS),
                             "--trainer-python", str(trainer_python), "--model", str(random_sdxl["model"]),
                             "--tokenizers", str(random_sdxl["tokenizers"]), "--work", str(tmp_path / "work")])
    assert code == 0, (out / "orchestrate.log").read_text(errors="replace")[-4000:]
    runs = [r for r in json.loads((out / "gpu_proof.json").read_text())["runs"] if "steps" in r]
    assert [r["run"] for r in runs] == ["serial-a baseline", "serial-a curated"]
    assert all(r["steps"] == 2 and r["before_first_step_s"] > 0 for r in runs)
