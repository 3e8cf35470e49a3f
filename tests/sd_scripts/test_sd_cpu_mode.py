"""The CPU mode of the sd-scripts presets (field ``device``): fp32 throughout, no GPU-only flags.

A CPU without native bf16 (AVX2 only) runs bf16 about 90x slower than fp32, so on the CPU
every command — training and the pre-cache tools — says ``--mixed_precision no`` to both
accelerate and the script, and the memory flags that need a GPU are left out. The flag
names are checked against the inventory by tests/contract/test_command_contract.py (both
modes); these tests pin which flags each mode emits.
"""

from __future__ import annotations

import pytest

from bracket.cli import doctor
from bracket.cli.doctor import run_doctor
from tests.sd_scripts.helpers import run_of, value_of


def _precisions(cmd: list[str]) -> list[str]:
    return [cmd[n + 1] for n, word in enumerate(cmd) if word == "--mixed_precision"]


def test_cpu_runs_and_caches_in_fp32(build, image_folder, tmp_path):
    for device, expected in (("gpu", "bf16"), ("cpu", "no")):
        trainer = build("sdxl-lora", device=device)
        run = run_of(trainer, tmp_path / device / "run", trainer.baseline_config().knobs, image_folder)
        assert _precisions(run.cmd) == [expected, expected]  # accelerate launch, then the script
        assert value_of(run.cmd, "--save_precision") == "fp16"  # saved as the model is released, either way
        assert "--gradient_checkpointing" in run.cmd
        setup = trainer.session_setup_commands(dataset=image_folder, run_dir=tmp_path / device / "setup")
        assert [_precisions(s.cmd) for s in setup] == [[expected, expected]] * 2


def test_cpu_cache_is_not_the_gpu_cache(build, image_folder, tmp_path):
    """Text-encoder outputs cached in fp32 are not those of a bf16 run: another cache folder."""
    folders = {device: build("sdxl-lora", device=device).cache_folder(image_folder, tmp_path / "session" / "run")
               for device in ("gpu", "cpu")}
    assert folders["gpu"] != folders["cpu"] and folders["gpu"].parent == folders["cpu"].parent


@pytest.mark.parametrize(("preset", "vram", "gpu_only"), [
    ("sdxl-full", "24", [("--full_bf16",)]),
    ("sd35-lora", "12", [("--fp8_base",), ("--blocks_to_swap", "16")]),
    ("flux1-lora", "12", [("--fp8_base",), ("--blocks_to_swap", "16")]),
    ("flux1-full", "16", [("--full_bf16",), ("--blocks_to_swap", "20")]),
])
def test_cpu_leaves_out_gpu_only_memory_flags(preset, vram, gpu_only, build, image_folder, tmp_path):
    commands = {}
    for device in ("gpu", "cpu"):
        trainer = build(preset, device=device, vram_gb=vram)
        cmd = run_of(trainer, tmp_path / device, trainer.baseline_config().knobs, image_folder).cmd
        commands[device] = [w.replace(str(tmp_path / device), "RUN") for w in cmd]
    gpu, cpu = commands["gpu"], commands["cpu"]
    # the CPU command is the GPU one less exactly those words, with fp32 for bf16
    expected = ["no" if w == "bf16" and gpu[n - 1] == "--mixed_precision" else w for n, w in enumerate(gpu)]
    for words in gpu_only:
        start = expected.index(words[0])
        assert tuple(expected[start:start + len(words)]) == words
        del expected[start:start + len(words)]
    assert cpu == expected
    assert "--gradient_checkpointing" in cpu


def test_auto_is_the_cpu_without_nvidia_smi(build, monkeypatch):
    monkeypatch.setattr("bracket.trainer.vram.shutil.which", lambda name: None)
    assert build("sdxl-lora", device="auto").on_cpu
    monkeypatch.setattr("bracket.trainer.vram.shutil.which", lambda name: "/usr/bin/nvidia-smi")
    assert not build("sdxl-lora", device="auto").on_cpu
    assert build("sdxl-lora", device="cpu").on_cpu


def test_doctor_does_not_ask_for_gpu_memory_on_the_cpu(field_values, image_folder, monkeypatch):
    monkeypatch.setattr(doctor, "ACCELERATE_PROBE", "print('1.0')")
    monkeypatch.setattr(doctor, "detect_vram_gb", lambda: 8)  # a GPU far below sdxl-full's 24 GB
    values = field_values("sdxl-full", dataset=str(image_folder), vram_gb="auto")
    on_gpu = next(c for c in run_doctor("sdxl-full", values).checks if c.name == "vram")
    on_cpu = next(c for c in run_doctor("sdxl-full", {**values, "device": "cpu"}).checks if c.name == "vram")
    assert not on_gpu.ok and "needs at least 24 GB" in on_gpu.message
    assert on_cpu.ok and "device cpu" in on_cpu.message
