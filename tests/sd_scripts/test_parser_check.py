"""The parser check: a command handed to the trainer's own argparse parser, nothing trained."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bracket.trainer.parser_check import RUNNER, parse_report
from tests.sd_scripts.fake_scripts import flag_table, write_setup_parser_script
from tests.sd_scripts.helpers import run_of


def _run(spec_cmd: list[str], cwd: Path, log: Path) -> tuple[int, dict | None]:
    with log.open("w") as out:
        code = subprocess.run(spec_cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, timeout=60).returncode
    return code, parse_report(log.read_text())


def test_generated_command_parses_with_the_real_flag_set(build, image_folder, tmp_path):
    trainer = build("sdxl-lora")
    write_setup_parser_script(trainer.script_path(), flag_table("sdxl_train_network.py"))
    launch = run_of(trainer, tmp_path / "run", trainer.curated_configs()[1].knobs, image_folder)
    spec = trainer.parser_check_spec(launch)
    assert spec.cmd[:2] == [sys.executable, str(RUNNER)] and "-m" not in spec.cmd
    code, report = _run(spec.cmd, spec.cwd, tmp_path / "log")
    assert (code, report) == (0, {"ok": True, "problems": []})


def test_unknown_flag_and_bad_choice_are_reported(build, image_folder, tmp_path):
    trainer = build("sdxl-lora")
    write_setup_parser_script(trainer.script_path(), flag_table("sdxl_train_network.py", drop=("--sdpa",)))
    launch = run_of(trainer, tmp_path / "run", trainer.baseline_config().knobs, image_folder)
    code, report = _run(trainer.parser_check_spec(launch).cmd, trainer.sd_scripts_dir(), tmp_path / "log")
    assert code == 1 and not report["ok"]
    assert any("--sdpa" in p for p in report["problems"])
    script = str(trainer.script_path())
    bad = [sys.executable, str(RUNNER), "--script", script, "--", "--mixed_precision", "fp64", "--seed_x", "1"]
    code, report = _run(bad, tmp_path, tmp_path / "log2")
    assert code == 1 and "invalid choice" in report["problems"][0]


def test_abbreviated_flag_is_reported(tmp_path):
    script = write_setup_parser_script(tmp_path / "t.py", {"--max_data_loader_n_workers": "value"})
    code, report = _run([sys.executable, str(RUNNER), "--script", str(script), "--", "--max_data_loader", "2"],
                        tmp_path, tmp_path / "log")
    assert code == 1 and report["problems"] == ["--max_data_loader is not an exact flag name of this parser"]


def test_main_style_script_in_a_package(tmp_path):
    package = tmp_path / "src" / "fake_tuner"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "common.py").write_text(
        "import argparse\n\ndef setup_parser_common():\n    p = argparse.ArgumentParser()\n"
        "    p.add_argument('--dit')\n    return p\n")
    (package / "wan_train_network.py").write_text(
        "from fake_tuner.common import setup_parser_common\n\n"
        "def main():\n    parser = setup_parser_common()\n    parser.add_argument('--task', choices=['t2v'])\n"
        "    args = parser.parse_args()\n    raise SystemExit('trained!')\n")
    script = str(package / "wan_train_network.py")
    code, report = _run([sys.executable, str(RUNNER), "--script", script, "--", "--dit", "x", "--task", "t2v"],
                        tmp_path, tmp_path / "log")
    assert (code, report) == (0, {"ok": True, "problems": []})
    code, report = _run([sys.executable, str(RUNNER), "--script", script, "--", "--task", "i2v"],
                        tmp_path, tmp_path / "log2")
    assert code == 1 and "i2v" in report["problems"][0]


def test_unimportable_script_is_reported(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("import module_that_does_not_exist\n")
    code, report = _run([sys.executable, str(RUNNER), "--script", str(script), "--"], tmp_path, tmp_path / "log")
    assert code == 3 and "module_that_does_not_exist" in report["problems"][0]
