"""``bracket doctor`` against fake trainer scripts: one test per failure it reports."""

from __future__ import annotations

import shutil
import stat
from collections import namedtuple
from pathlib import Path

import pytest

from bracket.cli import doctor
from bracket.cli.doctor import run_doctor
from bracket.trainer.sd_scripts.sdxl import SdxlLoRA
from tests.sd_scripts.fake_scripts import flag_table, write_setup_parser_script

Usage = namedtuple("Usage", "total used free")


@pytest.fixture
def values(field_values, image_folder, monkeypatch, request):
    if request.node.name != "test_all_checks_pass":  # importing the real accelerate takes seconds
        monkeypatch.setattr(doctor, "ACCELERATE_PROBE", "print('1.0')")
    monkeypatch.setattr(doctor, "detect_vram_gb", lambda: 24)
    monkeypatch.setattr(doctor.shutil, "disk_usage", lambda path: Usage(10**12, 0, 500 * 1024**3))
    values = field_values("sdxl-lora", dataset=str(image_folder))
    tokenizers = Path(values["sd_scripts_dir"]).parent / "tokenizers"
    for model_id in SdxlLoRA.tokenizer_ids:  # what sd-scripts saves with --tokenizer_cache_dir
        folder = tokenizers / model_id.replace("/", "_")
        folder.mkdir(parents=True)
        (folder / "vocab.json").write_text("{}", encoding="utf-8")
    values["tokenizer_cache_dir"] = str(tokenizers)
    for script in ("sdxl_train_network.py", "tools/cache_latents.py", "tools/cache_text_encoder_outputs.py"):
        write_setup_parser_script(Path(values["sd_scripts_dir"]) / script, flag_table(script))
    return values


def _check(report, name):
    return next(c for c in report.checks if c.name == name)


def test_all_checks_pass(values):
    report = run_doctor("sdxl-lora", values)
    assert report.ok, report.render()
    assert [c.name for c in report.checks] == ["trainer python", "inputs", "trainer script", "dataset", "disk",
                                               "vram", "tokenizers", "parser check", "pre-cache parser check"]
    assert "All checks passed." in report.render()


def test_unknown_field(values):
    report = run_doctor("sdxl-lora", {**values, "learning_rat": "1"})
    assert not report.ok and "Unknown field(s) learning_rat" in _check(report, "inputs").message


def test_missing_trainer_python(values, tmp_path):
    report = run_doctor("sdxl-lora", {**values, "trainer_python": str(tmp_path / "nope" / "python")})
    check = _check(report, "trainer python")
    assert not check.ok and "does not exist; run ./install.sh --trainers" in check.message
    skipped = _check(report, "parser check")
    assert skipped.skipped and skipped.message == "skipped: it needs trainer python, inputs to pass first"
    dataset = _check(report, "dataset")  # the pre-flight runs without the venv
    assert dataset.ok and not dataset.skipped and "3 images" in dataset.message, dataset
    text = report.render()
    assert "  [skip] parser check: skipped: it needs trainer python" in text and "[FAIL] parser check" not in text
    assert "[FAIL] trainer python:" in text and not report.ok  # the failure is the check it waits for


def test_the_dataset_pre_flight_runs_without_the_trainer_venv(values, tmp_path):
    """No venv yet (before ./install.sh --trainers) is when a person checks the data: doctor says
    what is wrong with it then, not only that the python is missing."""
    uncaptioned = tmp_path / "uncaptioned"
    uncaptioned.mkdir()
    for image in Path(values["dataset"]).glob("*.png"):
        shutil.copy(image, uncaptioned / image.name)
    report = run_doctor("sdxl-lora", {**values, "trainer_python": str(tmp_path / "no-venv" / "bin" / "python"),
                                      "dataset": str(uncaptioned)})
    assert not _check(report, "trainer python").ok and not _check(report, "inputs").ok
    dataset = _check(report, "dataset")
    assert not dataset.ok and not dataset.skipped and "caption" in dataset.message, report.render()
    gone = run_doctor("sdxl-lora", {**values, "dataset": str(tmp_path / "gone")})  # an unusable field: inputs says it
    assert (_check(gone, "dataset").skipped
            and "Dataset (TOML or folder) cannot be used" in _check(gone, "dataset").message)


def test_a_skipped_check_is_not_a_failure(capsys, monkeypatch):
    """Only failed checks fail doctor: ``[skip]`` lines do not change the exit status."""
    report = doctor.DoctorReport("sdxl-lora")
    report.add("disk", True, "500 GB free")
    report.skip("parser check", "skipped: it needs dataset to pass first")
    assert report.ok and "[skip] parser check" in report.render() and "All checks passed." in report.render()
    monkeypatch.setattr(doctor, "run_doctor", lambda preset, values, **chosen: report)
    from bracket.cli import main

    assert main(["doctor", "--preset", "sdxl-lora"]) == 0
    assert "[skip] parser check" in capsys.readouterr().out
    report.add("vram", False, "too small")
    assert not report.ok and main(["doctor", "--preset", "sdxl-lora"]) == 1


def test_python_without_accelerate(values, tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'accelerate'\" >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    check = _check(run_doctor("sdxl-lora", {**values, "trainer_python": str(fake)}), "trainer python")
    assert not check.ok and "cannot import accelerate (ModuleNotFoundError" in check.message


def test_script_missing(values, tmp_path):
    empty = tmp_path / "empty-sd-scripts"
    empty.mkdir()
    check = _check(run_doctor("sdxl-lora", {**values, "sd_scripts_dir": str(empty)}), "trainer script")
    assert not check.ok and "sdxl_train_network.py is not at" in check.message


def test_model_file_missing(values, tmp_path):
    check = _check(run_doctor("sdxl-lora", {**values, "model_path": str(tmp_path / "gone.safetensors")}), "inputs")
    assert not check.ok and "SDXL checkpoint" in check.message and "does not exist" in check.message


def test_low_disk(values, monkeypatch):
    monkeypatch.setattr(doctor.shutil, "disk_usage", lambda path: Usage(10**12, 0, 2 * 1024**3))
    check = _check(run_doctor("sdxl-full", {**values}), "disk")
    assert not check.ok and "Only 2 GB free" in check.message and "60 GB" in check.message


def test_gpu_too_small_for_the_preset(values, monkeypatch):
    monkeypatch.setattr(doctor, "detect_vram_gb", lambda: 16)
    check = _check(run_doctor("sdxl-full", {**values, "vram_gb": "auto"}), "vram")
    assert not check.ok and "needs at least 24 GB" in check.message
    assert _check(run_doctor("sdxl-lora", {**values, "vram_gb": "auto"}), "vram").ok


def test_vram_field_above_the_gpu(values, monkeypatch):
    monkeypatch.setattr(doctor, "detect_vram_gb", lambda: 16)
    check = _check(run_doctor("sdxl-lora", {**values, "vram_gb": "48"}), "vram")
    assert not check.ok and "says 48 GB but the GPU has 16 GB" in check.message


def test_parser_rejects_the_command(values):
    write_setup_parser_script(Path(values["sd_scripts_dir"]) / "sdxl_train_network.py",
                              flag_table("sdxl_train_network.py", drop=("--network_train_unet_only",)))
    check = _check(run_doctor("sdxl-lora", values), "parser check")
    assert not check.ok and "rejects the baseline command" in check.message
    assert "--network_train_unet_only" in check.message


def test_parser_check_without_report(values):
    (Path(values["sd_scripts_dir"]) / "sdxl_train_network.py").write_text("import os\nos._exit(5)\n")
    check = _check(run_doctor("sdxl-lora", values), "parser check")
    assert not check.ok and "gave no report (exit 5)" in check.message


def test_disk_probe_walks_up_to_an_existing_folder(values, monkeypatch, tmp_path):
    seen = []
    real_usage = shutil.disk_usage
    monkeypatch.setenv("BRACKET_RUNS_DIR", str(tmp_path / "not" / "yet"))
    monkeypatch.setattr(doctor.shutil, "disk_usage", lambda path: seen.append(path) or real_usage(tmp_path))
    run_doctor("sdxl-lora", values)
    assert seen == [tmp_path]


def test_tokenizers_missing_offline(values, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf-home"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    report = run_doctor("sdxl-lora", {**values, "tokenizer_cache_dir": str(tmp_path / "no-tokenizers")})
    check = _check(report, "tokenizers")
    assert not report.ok and not check.ok
    assert "openai/clip-vit-large-patch14, laion/CLIP-ViT-bigG-14-laion2B-39B-b160k" in check.message
    assert "BRACKET_TOKENIZER_CACHE_DIR" in check.message and "fails offline" in check.message


def test_tokenizers_found_in_the_hub_cache(values, tmp_path, monkeypatch):
    hub = tmp_path / "hf" / "hub"
    for model_id in SdxlLoRA.tokenizer_ids:
        snapshot = hub / f"models--{model_id.replace('/', '--')}" / "snapshots" / "abc123"
        snapshot.mkdir(parents=True)
        (snapshot / "merges.txt").write_text("", encoding="utf-8")
        (snapshot / "vocab.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    report = run_doctor("sdxl-lora", {**values, "tokenizer_cache_dir": ""})
    assert _check(report, "tokenizers").ok, report.render()


def test_every_preset_that_loads_hub_tokenizers_declares_them():
    from bracket.registry import PRESETS

    declared = {p.id: p.trainer_factory.tokenizer_ids for p in PRESETS if p.trainer_factory.tokenizer_ids}
    assert {"sdxl-lora", "sdxl-full", "sd35-lora", "sd35-full", "flux1-lora", "flux1-full"} <= set(declared)
    # every musubi preset too: tests/musubi/test_musubi_tokenizers.py
    assert "google/t5-v1_1-xxl" in declared["sd35-lora"] and "google/t5-v1_1-xxl" in declared["flux1-lora"]
