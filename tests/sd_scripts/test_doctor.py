"""``bracket doctor`` against fake trainer scripts: one test per failure it reports."""

from __future__ import annotations

import shutil
import stat
from collections import namedtuple
from pathlib import Path

import pytest

from bracket import doctor
from bracket.doctor import run_doctor
from tests.sd_scripts.fake_scripts import flag_table, write_setup_parser_script

Usage = namedtuple("Usage", "total used free")


@pytest.fixture
def values(field_values, image_folder, monkeypatch, request):
    if request.node.name != "test_all_checks_pass":  # importing the real accelerate takes seconds
        monkeypatch.setattr(doctor, "ACCELERATE_PROBE", "print('1.0')")
    monkeypatch.setattr(doctor, "detect_vram_gb", lambda: 24)
    monkeypatch.setattr(doctor.shutil, "disk_usage", lambda path: Usage(10**12, 0, 500 * 1024**3))
    values = field_values("sdxl-lora", dataset=str(image_folder))
    write_setup_parser_script(Path(values["sd_scripts_dir"]) / "sdxl_train_network.py",
                              flag_table("sdxl_train_network.py"))
    return values


def _check(report, name):
    return next(c for c in report.checks if c.name == name)


def test_all_checks_pass(values):
    report = run_doctor("sdxl-lora", values)
    assert report.ok, report.render()
    assert [c.name for c in report.checks] == ["trainer python", "inputs", "trainer script", "dataset", "disk",
                                               "vram", "parser check"]
    assert "All checks passed." in report.render()


def test_unknown_field(values):
    report = run_doctor("sdxl-lora", {**values, "learning_rat": "1"})
    assert not report.ok and "Unknown field(s) learning_rat" in _check(report, "inputs").message


def test_missing_trainer_python(values, tmp_path):
    report = run_doctor("sdxl-lora", {**values, "trainer_python": str(tmp_path / "nope" / "python")})
    check = _check(report, "trainer python")
    assert not check.ok and "does not exist; run ./install.sh --trainers" in check.message
    assert _check(report, "parser check").message == "skipped until the checks above pass"


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
