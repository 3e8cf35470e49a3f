"""Every preset's job files, at every VRAM tier, handed to ai-toolkit's own loader and config classes.

Needs the pinned checkout: ``vendor/ai-toolkit`` (``git submodule update --init vendor/ai-toolkit``) or
``BRACKET_TEST_AI_TOOLKIT_DIR``; skipped without one. Runs ``bracket/trainer/scripts/
ai_toolkit_config_check.py`` in Bracket's python with the packages it lacks (torchaudio, torchao, …)
stubbed: the config classes only name them.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import optuna
import pytest

from bracket.trainer.base import RunRequest
from bracket.trainer.heldout import ValidationPlan
from bracket.trainer.prompts import SamplePrompt
from bracket.trainer.vram import TIERS
from tests.ai_toolkit.helpers import AITK_IDS, build, image_folder

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "bracket" / "trainer" / "scripts" / "ai_toolkit_config_check.py"
CHECKOUT = Path(os.environ.get("BRACKET_TEST_AI_TOOLKIT_DIR") or ROOT / "vendor" / "ai-toolkit")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600),
              pytest.mark.skipif(not (CHECKOUT / "toolkit" / "config_modules.py").is_file(),
                                 reason=f"no ai-toolkit checkout at {CHECKOUT}")]


def test_ai_toolkit_accepts_every_job_file_of_every_preset(tmp_path):
    dataset = image_folder(tmp_path)
    optuna.logging.set_verbosity(logging.WARNING)
    files = []
    for preset_id in AITK_IDS:
        for tier in TIERS:
            trainer = build(preset_id, tmp_path, dataset, vram_gb=str(tier))
            study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=tier))
            configs = [trainer.baseline_config().knobs, *(c.knobs for c in trainer.curated_configs()),
                       *(trainer.declare_search_space().suggest(study.ask()) for _ in range(5))]
            for n, knobs in enumerate(configs):
                trainer.validation = ValidationPlan(0.3, n) if n % 2 else None  # validation_config on every other
                spec = trainer.prepare_run(RunRequest(
                    run_dir=tmp_path / preset_id / f"{tier}-{n}", knobs=trainer.config_from_dict(knobs),
                    dataset=dataset, max_steps=100, seed=n, sample_prompts=[SamplePrompt("a fox", seed=3)],
                    sample_every_n_steps=25))
                files.append(spec.cmd[-1])
    log = tmp_path / "check.log"
    with open(log, "w", encoding="utf-8") as handle:
        code = subprocess.run([sys.executable, str(CHECK), str(CHECKOUT), *files, "--stub-missing"], stdout=handle,
                              stderr=subprocess.STDOUT, cwd=tmp_path, timeout=500).returncode
    text = log.read_text(encoding="utf-8")
    assert code == 0, text[-3000:]
    assert text.count('{"ok": true, "file"') == len(files) and 'BRACKET_PARSER_CHECK {"ok": true' in text


def test_the_check_fails_a_value_the_config_classes_refuse(tmp_path):
    dataset = image_folder(tmp_path)
    trainer = build("aitk-flux1-dev-lora", tmp_path, dataset)
    spec = trainer.prepare_run(RunRequest(run_dir=tmp_path / "r", knobs=trainer.config_from_dict(
        trainer.baseline_config().knobs), dataset=dataset, max_steps=10, seed=1))
    job = Path(spec.cmd[-1])
    job.write_text(job.read_text().replace('"save_every"', '"save_format": "ckpt", "save_every"'))
    result = subprocess.run([sys.executable, str(CHECK), str(CHECKOUT), str(job), "--stub-missing"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 1 and "save_format must be safetensors or diffusers" in result.stderr
