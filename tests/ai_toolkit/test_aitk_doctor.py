"""``bracket doctor`` on an ai-toolkit preset: models that would be downloaded, and the job file
handed to ai-toolkit's own config classes when a checkout is there."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from bracket.cli.doctor import run_doctor
from bracket.trainer.ai_toolkit.models_cache import model_problem
from tests.ai_toolkit.helpers import image_folder

ROOT = Path(__file__).resolve().parents[2]
CHECKOUT = Path(os.environ.get("BRACKET_TEST_AI_TOOLKIT_DIR") or ROOT / "vendor" / "ai-toolkit")


def _cache(tmp_path: Path, monkeypatch, *repos: str) -> Path:
    hub = tmp_path / "hub"
    for repo in repos:
        (hub / f"models--{repo.replace('/', '--')}" / "snapshots" / "abc123").mkdir(parents=True)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    return hub


def test_a_model_id_is_usable_only_when_it_is_cached_or_local(tmp_path, monkeypatch):
    _cache(tmp_path, monkeypatch, "org/cached")
    assert model_problem("org/cached") is None and model_problem(str(tmp_path)) is None
    assert "not in the Hugging Face cache" in model_problem("org/missing")
    assert "huggingface-cli download org/missing" in model_problem("org/missing")
    assert "does not exist" in model_problem(str(tmp_path / "nowhere"))
    assert "file.safetensors is not in the cached snapshot" in model_problem("org/cached/file.safetensors")


def _values(tmp_path: Path, checkout: Path, **extra: str) -> dict[str, str]:
    return {"ai_toolkit_dir": str(checkout), "trainer_python": sys.executable, "dataset": str(image_folder(tmp_path)),
            "vram_gb": "24", **extra}


def test_doctor_names_the_model_that_would_be_downloaded(tmp_path, monkeypatch):
    _cache(tmp_path, monkeypatch, "org/cached")
    checkout = tmp_path / "ai-toolkit"
    checkout.mkdir()
    report = run_doctor("aitk-sdxl-lora", _values(tmp_path, checkout, model="org/missing"))
    models = next(line for line in report.render().splitlines() if "inputs" in line)
    assert "org/missing is not in the Hugging Face cache" in models and not report.ok
    report = run_doctor("aitk-sdxl-lora", _values(tmp_path, checkout, model="org/cached"))
    assert "[ok] inputs" in report.render()
    assert "run.py is not at" in report.render()  # an empty folder is no checkout


@pytest.mark.slow
@pytest.mark.skipif(not (CHECKOUT / "run.py").is_file(), reason=f"no ai-toolkit checkout at {CHECKOUT}")
def test_doctor_hands_the_baseline_job_file_to_ai_toolkits_config_classes(tmp_path, monkeypatch):
    _cache(tmp_path, monkeypatch, "org/cached")
    report = run_doctor("aitk-flux1-dev-lora", _values(tmp_path, CHECKOUT, model="org/cached"))
    text = report.render()
    parser = next(line for line in text.splitlines() if "parser check" in line)
    # Bracket's python has torch but not every trainer package: the check names what is missing, or passes
    assert "accepts the baseline command" in parser or "lacks the package" in parser, text
