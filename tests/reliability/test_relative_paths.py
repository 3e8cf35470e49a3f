"""Relative paths on the command line: nothing Bracket writes or launches depends on where it started.

A real preset (sdxl-lora) runs against a fake sd-scripts checkout: its training script is the
fake trainer (which refuses a ``--dataset_config`` it cannot open, and reads the prompt file
it is given), its pre-cache tools refuse a dataset TOML they cannot open. The search is
started with a relative ``--out``, a relative dataset and a relative session path for
``export``, from one folder; the exported ``train.sh`` is then run from another.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bracket.cli import main
from bracket.report.export import script_command
from tests.conftest import make_caption_folder
from tests.fakes import copy_fake_trainer, make_fake_python

pytestmark = pytest.mark.timeout(240)

#: sd-scripts' pre-cache tools, faked: they open --dataset_config as the real ones do (and log their call)
_CACHE_TOOL = """#!/usr/bin/env python3
import argparse, json, os, sys
parser = argparse.ArgumentParser()
parser.add_argument("--dataset_config", required=True)
args, _ = parser.parse_known_args()
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.jsonl"), "a") as log:
    log.write(json.dumps({"tool": os.path.basename(__file__), "cwd": os.getcwd(), "argv": sys.argv[1:]}) + "\\n")
if not os.path.isfile(args.dataset_config):
    sys.exit(f"cache tool: dataset config {args.dataset_config} not found (cwd {os.getcwd()})")
"""


def _fake_sd_scripts(root: Path) -> Path:
    checkout = root / "sd-scripts"
    (checkout / "tools").mkdir(parents=True)
    copy_fake_trainer(checkout / "sdxl_train_network.py")
    for tool in ("cache_latents.py", "cache_text_encoder_outputs.py"):
        (checkout / "tools" / tool).write_text(_CACHE_TOOL, encoding="utf-8")
    return checkout


def test_relative_out_and_session_path_give_a_search_and_a_train_sh_that_run_anywhere(tmp_path, monkeypatch):
    start, elsewhere = tmp_path / "start", tmp_path / "elsewhere"
    start.mkdir()
    elsewhere.mkdir()
    checkout = _fake_sd_scripts(tmp_path)
    model = tmp_path / "models" / "sdxl.safetensors"
    model.parent.mkdir()
    model.write_bytes(b"fake")
    make_caption_folder(start / "data")
    python = make_fake_python(tmp_path / "fakebin")
    monkeypatch.chdir(start)
    code = main(["run", "--preset", "sdxl-lora", "--set", f"sd_scripts_dir={checkout}",
                 "--set", f"trainer_python={python}", "--set", f"model_path={model}", "--set", "dataset=data",
                 "--set", "vram_gb=24", "--set", "device=gpu", "--budget", "1", "--steps", "3",
                 "--prompts", "a red square --d 3", "--out", "runs", "--name", "rel", "--quiet"])
    calls = [json.loads(line) for line in (checkout / "tools" / "calls.jsonl").read_text().splitlines()]
    assert [c["tool"] for c in calls] == ["cache_latents.py", "cache_text_encoder_outputs.py"]
    assert code == 0, calls
    for call in calls:  # absolute, since the tools run in the sd-scripts folder
        config = call["argv"][call["argv"].index("--dataset_config") + 1]
        assert Path(config).is_absolute() and Path(config).is_file(), config

    assert main(["export", "runs/rel"]) == 0
    exports = list((start / "runs" / "rel" / "export").glob("*/train.sh"))
    assert len(exports) == 1
    script = exports[0]
    command = script_command(script.read_text())
    assert [a for a in command if "/" in a and not Path(a).is_absolute()] == []
    fake_args = script.parent / "run" / "output" / "fake_args.json"
    assert not fake_args.exists()

    monkeypatch.chdir(elsewhere)
    done = subprocess.run(["bash", str(script)], cwd=elsewhere, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    parsed = json.loads(fake_args.read_text())["args"]
    assert Path(parsed["dataset_config"]).is_absolute() and Path(parsed["sample_prompts"]).is_file()
    assert not list(elsewhere.iterdir()), "the exported script writes nothing where it is started"
