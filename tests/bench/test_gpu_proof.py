"""The GPU proof script (bench/gpu) on CPU: carry builder, offline install, measurements, table, and
the whole orchestration end to end with the fake sd-scripts trainer standing in for the real one."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from bench.gpu import bootstrap, carry, measure, orchestrate, table
from bracket.registry import get_preset
from tests.fakes import copy_fake_trainer, make_fake_python


def _vendor(root: Path) -> Path:
    vendor = root / "sd-scripts"
    (vendor / "library").mkdir(parents=True)
    (vendor / "sdxl_train_network.py").write_text("print('train')\n")
    (vendor / "library" / "train_util.py").write_text("X = 1\n")
    (vendor / ".git").mkdir()
    (vendor / ".git" / "HEAD").write_text("ref\n")
    (vendor / ".venv" / "bin").mkdir(parents=True)
    (vendor / ".venv" / "bin" / "python").write_text("big\n")
    return vendor


def _wheel(folder: Path, name: str = "tinypkg", version: str = "0.1") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{name}/__init__.py", "VALUE = 42\n")
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        archive.writestr(f"{info}/WHEEL",
                         "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(f"{info}/RECORD",
                         f"{name}/__init__.py,,\n{info}/METADATA,,\n{info}/WHEEL,,\n{info}/RECORD,,\n")
    return path


def test_carry_copies_the_source_and_wheels_without_git_or_venv_and_the_manifest_repeats(tmp_path):
    vendor, wheels = _vendor(tmp_path), tmp_path / "wheels"
    _wheel(wheels)
    first = carry.build_carry(vendor, wheels, tmp_path / "carry", repo_bytes=1000)
    paths = [entry["path"] for entry in first["files"]]
    assert paths == ["sd-scripts/library/train_util.py", "sd-scripts/sdxl_train_network.py",
                     "wheels/tinypkg-0.1-py3-none-any.whl"]
    assert first["wheels"] == ["tinypkg-0.1-py3-none-any.whl"] and first["total_bytes"] == first["carry_bytes"] + 1000
    again = carry.build_carry(vendor, wheels, tmp_path / "carry", repo_bytes=1000)
    assert again == first
    assert json.loads((tmp_path / "carry" / "manifest.json").read_text()) == first


def test_carry_over_the_limit_says_so_and_leaves_nothing(tmp_path, capsys):
    vendor = _vendor(tmp_path)
    with pytest.raises(carry.CarryError, match="pass the 0 MiB limit"):
        carry.build_carry(vendor, None, tmp_path / "carry", limit=10)
    assert not (tmp_path / "carry").exists()
    assert carry.main(["--vendor", str(tmp_path / "empty"), "--out", str(tmp_path / "c2"),
                       "--repo", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_the_download_command_asks_for_cp312_wheels_of_every_listed_name_without_dependencies(tmp_path):
    names = carry.wanted_wheels()
    assert "optuna==5.0.0" in names and all("==" in name for name in names)
    command = carry.download_command(tmp_path, names)
    assert command[3:6] == ["download", "--no-deps", "--only-binary=:all:"] and "3.12" in command
    assert command[-len(names):] == names
    assert carry.main(["--download", "--vendor", str(tmp_path)]) == 2  # no --wheels: refused before any download


def test_bootstrap_installs_a_carried_wheel_offline_into_a_target(tmp_path):
    wheels = tmp_path / "wheels"
    _wheel(wheels)
    command = bootstrap.install_command(wheels, tmp_path / "site")
    assert "--no-index" in command and "--target" in command
    env = bootstrap.install(wheels, tmp_path / "site", tmp_path / "install.log")
    code = subprocess.run([sys.executable, "-c", "import tinypkg, sys; sys.exit(0 if tinypkg.VALUE == 42 else 1)"],
                          env=env, cwd=tmp_path, check=False).returncode
    assert code == 0, (tmp_path / "install.log").read_text() if (tmp_path / "install.log").exists() else ""


def _events(folder: Path, points: list[tuple[int, float]]) -> None:
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(folder))
    for step, wall in points:
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="loss/current", simple_value=0.5)])
        writer.add_event(event_pb2.Event(wall_time=wall, step=step, summary=summary))
    writer.close()


def test_phases_split_a_run_at_its_first_and_last_logged_step(tmp_path):
    _events(tmp_path / "logs" / "r" / "network_train", [(1, 1032.0), (2, 1034.0), (3, 1036.0)])
    steps = measure.step_times(tmp_path / "logs")
    assert steps == [(1, 1032.0), (2, 1034.0), (3, 1036.0)]
    split = measure.phases(1000.0, 1049.0, steps)
    assert split["before_first_step_s"] == 32.0 and split["steps_s"] == 4.0 and split["after_s"] == 13.0
    assert split["steps_per_s"] == 0.5 and split["before_share"] == pytest.approx(32 / 49)
    assert measure.phases(0.0, 5.0, [])["before_first_step_s"] is None


def test_gpu_samples_give_the_peak_and_the_idle_time_between_runs(tmp_path):
    csv = tmp_path / "gpu.csv"
    csv.write_text("2026/12/01 10:00:00.000, 90, 30000\n2026/12/01 10:00:01.000, 0, 500\n"
                   "garbage line\n2026/12/01 10:00:03.000, 0, 500\n2026/12/01 10:00:04.000, 80, 31000\n"
                   "2026/12/01 10:00:0")
    samples = measure.gpu_samples(csv)
    assert len(samples) == 4
    assert measure.peak_mib(samples) == 31000
    assert measure.peak_mib(samples, samples[1].time, samples[2].time) == 500
    assert measure.idle_seconds(samples, samples[0].time, samples[3].time) == pytest.approx(3.0)


def test_plan_check_compares_the_peak_with_the_tier_of_the_preset(tmp_path):
    trainer = get_preset("sdxl-lora").trainer_factory({"vram_gb": "80", "device": "gpu"})
    check = measure.plan_check(trainer, 20 * 1024)
    assert check["tier_gb"] == 80 and check["fits_tier"] is True and check["smaller_tier_would_fit"] == [24]
    assert check["tier_flags"] == [] and check["min_vram_gb"] == 12
    assert measure.plan_check(trainer, None)["fits_tier"] is None


def test_table_writes_markdown_and_json(tmp_path):
    rows = [{"run": "serial-a baseline", "wall_s": 49.0, "before_first_step_s": 32.0, "fits_tier": True}]
    path = table.write(tmp_path, rows, {"serial_runs_per_hour": 120.0})
    text = path.read_text()
    assert ("| serial-a baseline | 49.00 | 32.00 |" in text and "| yes |" in text
            and "serial_runs_per_hour: 120.00" in text)
    assert json.loads((tmp_path / "gpu_proof.json").read_text())["runs"] == rows


_CACHE_TOOL = "import sys\nprint('cached', sys.argv[1:])\n"
_FAKE_SMI = """#!{python}
import time, datetime
while True:
    print(datetime.datetime.now().strftime('%Y/%m/%d %H:%M:%S.%f')[:-3] + ', 0, 512', flush=True)
    time.sleep(0.1)
"""


def _fake_stage(tmp_path: Path, monkeypatch) -> list[str]:
    """Fake sd-scripts, trainer python and nvidia-smi; the script's arguments that use them."""
    sd = tmp_path / "sd-scripts"
    (sd / "tools").mkdir(parents=True)
    copy_fake_trainer(sd / "sdxl_train_network.py")
    for tool in ("cache_latents.py", "cache_text_encoder_outputs.py"):
        (sd / "tools" / tool).write_text(_CACHE_TOOL)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(_FAKE_SMI.format(python=sys.executable))
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("BRACKET_FAKE_STEP_SECONDS", "0.05")
    carry_dir = tmp_path / "carry"
    _wheel(carry_dir / "wheels")
    model = tmp_path / "model.safetensors"
    model.write_bytes(b"fake")
    return ["--out", str(tmp_path / "out"), "--device", "cpu", "--steps", "4", "--carry", str(carry_dir),
            "--sd-scripts", str(sd), "--trainer-python", str(make_fake_python(tmp_path / "py")),
            "--model", str(model), "--work", str(tmp_path / "work")]


@pytest.mark.timeout(600)
def test_the_script_end_to_end_on_cpu_with_the_fake_trainer(tmp_path, monkeypatch):
    """Every step of the device script on CPU: the fake stands in for sd-scripts and nvidia-smi."""
    out = tmp_path / "out"
    code = orchestrate.main(_fake_stage(tmp_path, monkeypatch))
    log = (out / "orchestrate.log").read_text(errors="replace") if (out / "orchestrate.log").exists() else ""
    assert code == 0, log[-4000:]
    result = json.loads((out / "gpu_proof.json").read_text())
    trained = [r for r in result["runs"] if "steps" in r]
    assert [r["run"] for r in trained] == [f"{s} {k}" for s in ("serial-a", "serial-b", "packed-a", "packed-b")
                                           for k in ("baseline", "curated")]
    assert all(r["steps"] == 4 and r["before_first_step_s"] >= 0 and r["steps_per_s"] > 0 for r in trained)
    assert all(r["peak_gb"] == pytest.approx(0.5) and r["tier_gb"] == 80 for r in trained)
    assert all(r["samples"] == 6 and r["eval_points"] >= 1 for r in trained)  # 2 prompts at first, step 2, step 4
    assert any("cache latents" in r["run"] for r in result["runs"])
    summary = result["summary"]
    assert summary["export_rerun_exit"] == 0 and summary["packed_exit_codes"] == [0, 0]
    assert summary["serial_runs_per_hour"] > 0 and summary["packed_runs_per_hour"] > 0
    assert summary["gpu_idle_between_serial_runs_s"] is not None and summary["gpu_samples"] > 0
    assert "| serial-a baseline |" in (out / "gpu_proof.md").read_text()
    assert sorted(p.name for p in out.iterdir()) == ["gpu.csv", "gpu_proof.json", "gpu_proof.md", "orchestrate.log"]


def test_quick_mode_runs_one_session_and_no_packed_pair(tmp_path, monkeypatch):
    assert orchestrate.main([*_fake_stage(tmp_path, monkeypatch), "--quick"]) == 0
    result = json.loads((tmp_path / "out" / "gpu_proof.json").read_text())
    assert [r["run"] for r in result["runs"] if "steps" in r] == ["serial-a baseline", "serial-a curated"]
    assert result["summary"]["packed_runs_per_hour"] is None and result["summary"]["export_rerun_exit"] == 0


def test_no_sd_scripts_folder_is_one_error_line_and_nothing_made(tmp_path, capsys):
    code = orchestrate.main(["--out", str(tmp_path / "out"), "--carry", str(tmp_path / "none"),
                             "--work", str(tmp_path / "work")])
    assert code == 2 and capsys.readouterr().err.startswith("error: no sd-scripts folder")
    assert not (tmp_path / "work").exists()
