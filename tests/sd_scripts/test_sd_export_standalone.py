"""An exported sdxl-lora ``train.sh`` stands on its own (issue 43, item 5).

Seen on main: the script's dataset TOML pointed at links in the session's cache folder, so it
broke when that folder was cleaned. Now it reads the person's own image folder and caches in
memory; the session's caches are a speed-up it takes only while they are there. Checked end to
end on the inventory-parsing sd-scripts stand-ins (real argparse of the pinned flags) and the
fake python that logs what it ran.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from bracket.report.export import export_run, script_command
from bracket.session import SearchSettings, Session
from tests.fakes import install_inventory_scripts, make_fake_python
from tests.sd_scripts.helpers import value_of

pytestmark = pytest.mark.timeout(300)
SCRIPTS = ["sdxl_train_network.py", "tools/cache_latents.py", "tools/cache_text_encoder_outputs.py"]


def _image_dirs(toml: Path) -> list[str]:
    document = tomllib.loads(toml.read_text(encoding="utf-8"))
    return [s["image_dir"] for d in document["datasets"] for s in d["subsets"]]


def _ran(script: Path, log: Path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRACKET_FAKE")}
    env["BRACKET_FAKE_PYTHON_LOG"] = str(log)
    log.unlink(missing_ok=True)
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(log.read_text().splitlines()[-1])


def test_the_export_trains_from_the_persons_folder_and_survives_deleting_the_session_caches(
        field_values, image_folder, tmp_path, runs_dir, capsys):
    from bracket.cli import main

    scripts = install_inventory_scripts(tmp_path / "sd-scripts", "kohya-ss/sd-scripts", SCRIPTS)
    fields = field_values("sdxl-lora", dataset=str(image_folder), sd_scripts_dir=str(scripts),
                          trainer_python=str(make_fake_python(tmp_path / "bin")))
    settings = SearchSettings(budget=2, steps=4, confirm=0, sample_prompts="a photo of sks")
    session = Session.create("sdxl-lora", fields, settings, out_dir=runs_dir, name="exp")
    assert session.run() == "finished"
    folder = session.folder
    result = export_run(session)
    session.close()
    text = result.script.read_text(encoding="utf-8")
    own = script_command(text)
    assert own == result.command
    assert _image_dirs(Path(value_of(own, "--dataset_config"))) == [str(image_folder.resolve())]
    assert "--cache_latents" in own and "--cache_latents_to_disk" not in own and "--skip_cache_check" not in own
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert not any("lower is better" in line or "run score" in line for line in header), header
    assert any("your baseline" in line for line in header), header
    windows = result.windows_script.read_text(encoding="utf-8-sig")
    assert "session-cache" in windows and "Test-Path -LiteralPath" in windows

    # while the session's caches are there the script takes them (the faster twin)
    log = tmp_path / "argv.jsonl"
    cached = _ran(result.script, log)
    toml = Path(value_of(cached, "--dataset_config"))
    assert toml.name == "dataset.session-cache.toml" and "--cache_latents_to_disk" in cached
    assert all(Path(d).is_relative_to(folder / "cache") for d in _image_dirs(toml))
    # the caches deleted: the script still runs, on the person's own folder
    shutil.rmtree(folder / "cache")
    argv = _ran(result.script, log)
    assert argv == own[1:]
    assert all(Path(d).is_dir() for d in _image_dirs(Path(value_of(argv, "--dataset_config"))))
    assert not list(image_folder.glob("*.npz")), "no cache file is written beside the person's images"
    # the CLI says where it went
    capsys.readouterr()
    assert main(["export", str(folder)]) == 0
    assert f"to {result.folder}" in capsys.readouterr().out
