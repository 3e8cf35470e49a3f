"""``python -m bracket doctor`` for every preset in the registry: it reports, it never crashes.

Each preset gets fake inputs (tests/contract/fakes.py) and, at every script path its adapter
runs (``Trainer.script_files``), a fake trainer script whose parser has exactly the flags of
that script in the project's inventory. Doctor then runs through the CLI entry, in process:
it must print its report and exit 0 or 1, never raise. For presets whose scripts are in the
inventory the report must pass: the baseline command and every pre-cache command parse
with the (inventory-built) parser, and the dataset pre-flight passes.

With ``BRACKET_TEST_TRAINER_PYTHON`` set to a trainer venv's python and real checkouts in
``vendor/``, ``test_doctor_against_the_real_scripts`` hands the same commands to the real
parsers (slow: each parse imports torch and the trainer, 1–3 minutes per preset on a busy
2-core machine; skipped otherwise, so CI does not pay for it).
"""

from __future__ import annotations

import os
import sys
from collections import namedtuple
from pathlib import Path

import pytest

from bracket import cli
from bracket.cli import doctor
from bracket.registry import PRESETS
from tests.contract.fakes import fake_values, image_folder, jsonl_file
from tests.contract.inventory import find_script, load_inventory
from tests.fakes import flag_table_from_spec
from tests.sd_scripts.fake_scripts import write_setup_parser_script

FLAGS, _ = load_inventory()
ROOT = Path(__file__).resolve().parents[2]
Usage = namedtuple("Usage", "total used free")
#: presets that run a script of a vendor/ checkout (not Bracket's own demo or Unsloth driver)
DIFFUSION = [p for p in PRESETS if (p.trainer_script or "").endswith(".py")
             and not p.trainer_script.startswith("bracket/")]


def _inputs(preset, root: Path, python: str) -> dict[str, str]:
    """Fake values with the dataset kind this preset reads (images first, else a JSONL file)."""
    for make in (image_folder, jsonl_file):
        attempt = root / make.__name__
        attempt.mkdir()
        values = fake_values(preset, attempt, make(attempt), python=python)
        try:
            preset.build_trainer(values)
        except Exception:  # noqa: BLE001 - the next dataset kind may suit it
            continue
        return values
    return fake_values(preset, root, image_folder(root / "last"), python=python)


def _run_doctor(preset_id: str, values: dict[str, str], capsys) -> tuple[int, str]:
    argv = ["doctor", "--preset", preset_id]
    for name, value in values.items():
        argv += ["--set", f"{name}={value}"]
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def quiet_machine(monkeypatch):
    monkeypatch.setattr(doctor, "ACCELERATE_PROBE", "print('1.0')")  # the test python has no accelerate
    monkeypatch.setattr(doctor, "detect_vram_gb", lambda: None)
    monkeypatch.setattr(doctor.shutil, "disk_usage", lambda path: Usage(10**12, 0, 500 * 1024**3))
    # hub tokenizers cannot be fetched here (tests/sd_scripts/test_doctor.py checks that line)
    monkeypatch.setattr(doctor, "missing_tokenizers", lambda wanted, folder: [])


@pytest.mark.parametrize("preset", PRESETS, ids=[p.id for p in PRESETS])
def test_doctor_reports_for_every_preset(preset, tmp_path, capsys, quiet_machine):
    values = _inputs(preset, tmp_path, sys.executable)
    trainer = preset.build_trainer(values)
    scripts = [Path(p) for p in trainer.script_files()]
    in_inventory = [find_script([str(p)], FLAGS) for p in scripts]
    for path, entry in zip(scripts, in_inventory):
        if entry is not None:
            write_setup_parser_script(path, flag_table_from_spec(entry.spec))
    code, text = _run_doctor(preset.id, values, capsys)
    assert code in (0, 1), text
    assert text.startswith(f"bracket doctor: {preset.id}\n"), text
    assert "Traceback" not in text
    if scripts and all(in_inventory):
        assert code == 0, text
        assert "[ok] parser check: the trainer's parser accepts the baseline command" in text
        assert "[ok] dataset:" in text or "[warn] dataset:" in text  # warn: 2 images, batches up to 4
        # `presets` prints needs_pre_cache as its pre-cache column: it must say what the adapter does
        # (it said "no" for SDXL and FLUX.1, which pre-cache with sd-scripts' tools)
        assert preset.needs_pre_cache == ("pre-cache parser check" in text), text
        if preset.needs_pre_cache:
            assert "[ok] pre-cache parser check" in text and text.count("the trainer's parser accepts") >= 2


@pytest.mark.parametrize("preset", PRESETS, ids=[p.id for p in PRESETS])
def test_doctor_reports_on_nonsense_values(preset, tmp_path, capsys, quiet_machine):
    values = {spec.name: "no such thing ?" for spec in preset.fields}
    code, text = _run_doctor(preset.id, values, capsys)
    assert code == 1 and text.startswith(f"bracket doctor: {preset.id}\n") and "[FAIL]" in text, text


def test_doctor_names_a_package_missing_from_the_trainer_venv(tmp_path, capsys, quiet_machine):
    preset = next(p for p in PRESETS if p.id == "zimage-lora")
    values = _inputs(preset, tmp_path, sys.executable)
    for path in preset.build_trainer(values).script_files():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("import torchvision_not_installed_here\n", encoding="utf-8")
    code, text = _run_doctor(preset.id, values, capsys)
    assert code == 1
    assert "lacks the package 'torchvision_not_installed_here'" in text
    assert f"{sys.executable} -m pip install torchvision_not_installed_here" in text
    assert "Update the trainer checkout" not in text and "submodule" not in text


def test_doctor_fails_on_an_empty_dataset_folder(tmp_path, capsys, quiet_machine):
    preset = next(p for p in PRESETS if p.id == "sdxl-lora")
    values = _inputs(preset, tmp_path, sys.executable)
    empty = tmp_path / "empty"
    empty.mkdir()
    code, text = _run_doctor(preset.id, {**values, "dataset": str(empty)}, capsys)
    assert code == 1
    assert "[FAIL] dataset:" in text and "holds no images or videos" in text
    assert "All checks passed" not in text


def test_doctor_prints_dataset_warnings(tmp_path, capsys, quiet_machine):
    preset = next(p for p in PRESETS if p.id == "sdxl-lora")
    values = _inputs(preset, tmp_path, sys.executable)
    dataset = Path(values["dataset"])
    (dataset / "cap_9.txt").write_text("an orphan", encoding="utf-8")
    _, text = _run_doctor(preset.id, values, capsys)
    assert "[warn] dataset:" in text and "cap_9.txt" in text


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("BRACKET_TEST_TRAINER_PYTHON"),
                    reason="set BRACKET_TEST_TRAINER_PYTHON to a trainer venv's python to use the real parsers")
@pytest.mark.parametrize("preset", DIFFUSION, ids=[p.id for p in DIFFUSION])
def test_doctor_against_the_real_scripts(preset, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(doctor, "detect_vram_gb", lambda: None)
    monkeypatch.setattr(doctor, "missing_tokenizers", lambda wanted, folder: [])
    monkeypatch.setattr(doctor.shutil, "disk_usage", lambda path: Usage(10**12, 0, 500 * 1024**3))
    values = _inputs(preset, tmp_path, os.environ["BRACKET_TEST_TRAINER_PYTHON"])
    for name, folder in (("sd_scripts_dir", "sd-scripts"), ("musubi_dir", "musubi-tuner")):
        if name in values:
            values[name] = str(ROOT / "vendor" / folder)
    scripts = preset.build_trainer(values).script_files()
    if not all(Path(p).is_file() for p in scripts):
        pytest.skip(f"vendor/ has no checkout of {scripts}")
    code, text = _run_doctor(preset.id, values, capsys)
    assert code == 0, text


def test_doctor_on_a_fresh_clone_makes_the_demo_dataset_as_a_search_would(runs_dir, capsys, quiet_machine,
                                                                         monkeypatch):
    """No runs/demo-data yet: doctor does not fail the demo for data a search makes itself."""
    monkeypatch.delenv("BRACKET_DEMO_DATA_DIR", raising=False)
    code, text = _run_doctor("demo-cpu", {"trainer_python": sys.executable}, capsys)
    assert f"[ok] setup: made the demo dataset in {runs_dir / 'demo-data'} (it was missing)" in text, text
    assert "[ok] inputs:" in text and "[ok] dataset:" in text and "[FAIL]" not in text, text
    assert code == 0 and (runs_dir / "demo-data" / "dataset.toml").is_file()
    # its own script is checked, and a CPU preset skips the GPU memory check
    assert "[ok] trainer script:" in text and "no script file" not in text, text
    assert "[skip] vram: CPU preset" in text and "nvidia-smi" not in text, text
