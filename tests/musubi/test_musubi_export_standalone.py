"""An exported musubi-tuner ``train.sh`` stands on its own (issue 43, item 5).

musubi-tuner trains only from cached latents and text-encoder outputs. Seen on main: the exported
script's dataset TOML named the session's cache folder as ``cache_directory`` and ran no cache
script, so deleting ``<session>/cache`` broke it. Now the script writes its own TOML (the person's
dataset folder, a cache folder of its own), runs the model's two cache scripts — the same commands
the session's setup runs — and trains at the answer's length; while the session's caches are there
it trains from them instead, without caching again.

End to end on the inventory-parsing musubi stand-ins (real argparse of the pinned flags), whose
cache scripts write a file per item and whose training script fails, like the real one, when an
item has no cache.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bracket.report.export import export_run, script_command
from bracket.session import Session
from bracket.standings import require_winner, standings
from tests.musubi.helpers import finished_session, flag_value, image_folder, read_toml, video_folder
from tests.reliability.ps_parse import read_launcher

pytestmark = pytest.mark.timeout(300)


def _ran(script: Path, log: Path) -> list[list[str]]:
    """Run the exported script; every command the fake python got (accelerate launch prefix left on)."""
    env = {k: v for k, v in os.environ.items() if k != "BRACKET_FAKE_PYTHON_LOG"}
    env["BRACKET_FAKE_PYTHON_LOG"] = str(log)
    log.unlink(missing_ok=True)
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in log.read_text().splitlines()]


def _script_name(argv: list[str]) -> str:
    return next(Path(word).name for word in argv if word.endswith(".py"))


def _check_export(session: Session, tmp_path: Path, media: Path) -> None:
    folder = session.folder
    winner = require_winner(session, standings(session))
    result = export_run(session)
    cls = type(session.trainer)
    session.close()
    answer = winner.step
    assert answer == 4 and winner.steps == 6, "the answer's length is the best step, not the search's"
    own = script_command(result.script.read_text(encoding="utf-8"))
    assert own == result.command and flag_value(own, "--max_train_steps") == str(answer) == str(result.steps)
    toml = read_toml(Path(flag_value(own, "--dataset_config")))
    media_dirs = [d.get("image_directory") or d.get("video_directory") for d in toml["datasets"]]
    assert media_dirs == [str(media.resolve())], "the script reads the person's own folder"
    assert all(Path(d["cache_directory"]).is_relative_to(result.folder / "cache") for d in toml["datasets"])
    document = json.loads(result.json_path.read_text(encoding="utf-8"))
    assert [Path(c["command"][c["command"].index("--dataset_config") - 1]).name
            for c in document["cache_commands"]] == [cls.latent_cache_script, cls.text_cache_script]
    header = [line for line in result.script.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    assert any(f"caches: made in {result.folder / 'cache'}" in line for line in header), header

    log = tmp_path / "argv.jsonl"
    # the session's caches are there: train from them, cache nothing
    first = _ran(result.script, log)
    assert [_script_name(argv) for argv in first] == [cls.script]
    cached = read_toml(Path(flag_value(first[0], "--dataset_config")))
    assert all(Path(d["cache_directory"]).is_relative_to(folder / "cache") for d in cached["datasets"])
    assert not (result.folder / "cache").exists()

    # the session's caches deleted: the script caches from the person's folder, then trains
    shutil.rmtree(folder / "cache")
    argvs = _ran(result.script, log)
    assert [_script_name(argv) for argv in argvs] == [cls.latent_cache_script, cls.text_cache_script, cls.script]
    assert argvs[-1] == own[1:]
    for argv, step in zip(argvs[:2], document["cache_commands"]):
        assert argv == step["command"][1:]  # the commands the session's setup runs, into the export's folder
        assert "--skip_existing" in argv
        setup_toml = read_toml(Path(flag_value(argv, "--dataset_config")))
        caches = [d["cache_directory"] for d in toml["datasets"]]
        assert [d["cache_directory"] for d in setup_toml["datasets"]] == caches
    made = sorted(p.name for p in (result.folder / "cache").rglob("*.safetensors"))
    items = sorted(p.stem for p in media.iterdir() if p.suffix in (".png", ".mp4"))
    assert made == sorted(f"{stem}_fake_{kind}.safetensors" for stem in items for kind in ("latent", "text"))
    assert not list(media.glob("*.safetensors")), "nothing is written beside the person's media"
    # and again, on its own caches
    assert [_script_name(argv) for argv in _ran(result.script, log)][-1] == cls.script

    windows = read_launcher(result.windows_script)
    assert [windows["program"], *windows["arguments"]] == own
    assert [step["command"] for step in document["cache_commands"]] == [
        [program, *arguments] for program, arguments in windows["setup"]]
    assert "} else {" in windows["text"], "the Windows script skips the caching while the session's caches exist"


def test_an_exported_zimage_lora_caches_and_trains_without_the_session_cache(tmp_path, runs_dir, monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_SAMPLE_STYLE", "musubi")
    images = image_folder(tmp_path, count=3)
    session = finished_session("zimage-lora", "zimage_", images, tmp_path, runs_dir)
    _check_export(session, tmp_path, images)


@pytest.mark.slow
def test_an_exported_wan_video_lora_caches_and_trains_without_the_session_cache(tmp_path, runs_dir, monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_SAMPLE_STYLE", "musubi")
    videos = video_folder(tmp_path)
    session = finished_session("wan22-lora", "wan_", videos, tmp_path, runs_dir)
    _check_export(session, tmp_path, videos)


@pytest.mark.slow
def test_the_cli_exports_to_a_cache_folder_the_person_names(tmp_path, runs_dir, monkeypatch, capsys):
    from bracket.cli import main

    monkeypatch.setenv("BRACKET_FAKE_SAMPLE_STYLE", "musubi")
    images = image_folder(tmp_path)
    session = finished_session("zimage-lora", "zimage_", images, tmp_path, runs_dir)
    folder = session.folder
    session.close()
    shared, out = tmp_path / "my caches", tmp_path / "my export"
    capsys.readouterr()
    assert main(["export", str(folder), "--out", str(out), "--cache-dir", str(shared)]) == 0
    printed = capsys.readouterr().out
    assert f"to {out}" in printed and f"caches: {shared}" in printed
    header = [line for line in (out / "train.sh").read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    assert any(line.endswith(f"--cache-dir '{shared}'") for line in header), header
    shutil.rmtree(folder)  # the whole session gone
    argvs = _ran(out / "train.sh", tmp_path / "argv.jsonl")
    assert len(argvs) == 3 and list(shared.rglob("*_fake_latent.safetensors"))
    assert not (out / "cache").exists()


@pytest.mark.slow
def test_the_app_says_where_the_caches_go(tmp_path, runs_dir, monkeypatch):
    from bracket.app.manager import SessionManager
    from ui import results_tab

    monkeypatch.setenv("BRACKET_FAKE_SAMPLE_STYLE", "musubi")
    session = finished_session("zimage-lora", "zimage_", image_folder(tmp_path), tmp_path, runs_dir)
    folder = session.folder
    session.close()
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    manager.open(folder)
    message = results_tab.export(manager, 0)
    exported = next((folder / "export").iterdir())
    assert f"to `{exported}`" in message and f"caches in `{exported / 'cache'}`" in message, message
