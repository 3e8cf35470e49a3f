"""Local helpers of the musubi adapter tests: fake inputs for a preset, datasets, the flag inventory."""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path

from PIL import Image

from bracket.registry import get_preset
from bracket.session import SearchSettings, Session
from bracket.trainer.inventory import dataset_keys_by_repo, flags_by_repo
from tests.fakes import install_inventory_scripts, make_fake_python

MUSUBI = flags_by_repo()["kohya-ss/musubi-tuner"]
KEYS = dataset_keys_by_repo()["kohya-ss/musubi-tuner"]
MUSUBI_IDS = (
    "zimage-lora", "zimage-full", "flux2-klein-lora", "flux1-kontext-lora", "qwen-image-lora", "qwen-image-full",
    "qwen-image-edit-lora", "hunyuan-video-lora", "hunyuan-video-full", "wan22-lora", "wan21-lora", "framepack-lora",
    # issue 22: the rest of the pinned musubi-tuner's scripts and modes
    "flux2-dev-lora", "hidream-o1-lora", "hidream-o1-full", "hunyuan-video-15-lora", "kandinsky5-lora", "krea2-lora",
    "ideogram4-lora", "framepack-1f-lora", "wan21-1f-lora",
)


def fake_python(root: Path) -> Path:
    """An executable 'python' that records its arguments, one per line, in argv.log."""
    path = root / "venv" / "bin" / "python"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done >> "$(dirname "$0")/argv.log"\n', encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def image_folder(root: Path, name: str = "images", count: int = 2) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        Image.new("RGB", (32, 32), (40 * n, 0, 0)).save(folder / f"img{n}.png")
        (folder / f"img{n}.txt").write_text(f"caption {n}", encoding="utf-8")
    return folder


def video_folder(root: Path) -> Path:
    folder = root / "videos"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "clip0.mp4").write_bytes(b"not really a video")
    (folder / "clip0.txt").write_text("a clip", encoding="utf-8")
    return folder


def fields_for(preset_id: str, root: Path, dataset: Path, **overrides: str) -> dict[str, str]:
    """Every field of ``preset_id`` filled with fake but existing inputs under ``root``."""
    preset = get_preset(preset_id)
    values: dict[str, str] = {}
    musubi = root / "musubi"
    for spec in preset.fields:
        if spec.name == "musubi_dir":
            values[spec.name] = str(musubi)
            (musubi / "src" / "musubi_tuner").mkdir(parents=True, exist_ok=True)
        elif spec.name == "trainer_python":
            values[spec.name] = str(fake_python(root))
        elif spec.name == "dataset":
            values[spec.name] = str(dataset)
        elif spec.name == "vram_gb":
            values[spec.name] = "80"
        elif spec.name in ("control_dir", "sample_control_image", "sample_start_image", "cache_dir", "clip",
                           "base_weights") and not spec.required:
            values[spec.name] = ""
        elif spec.kind in ("file", "path"):
            path = root / "models" / f"{spec.name}.safetensors"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"x")
            values[spec.name] = str(path)
    values.update(overrides)
    return values


def build(preset_id: str, root: Path, dataset: Path, **overrides: str):
    return get_preset(preset_id).build_trainer(fields_for(preset_id, root, dataset, **overrides))


def script_spec(cmd: list[str]) -> tuple[int, dict]:
    """Index of the musubi script in ``cmd`` and its inventory entry."""
    for index, word in enumerate(cmd):
        for key, spec in MUSUBI["scripts"].items():
            if word.endswith("/" + key):
                return index, spec
    raise AssertionError(f"no musubi script in {cmd}")


def flag_value(cmd: list[str], flag: str) -> str:
    return cmd[cmd.index(flag) + 1]


def read_toml(path: Path) -> dict:
    return tomllib.loads(Path(path).read_text(encoding="utf-8"))


def finished_session(preset_id: str, prefix: str, dataset: Path, root: Path, runs_dir: Path,
                     **overrides: str) -> Session:
    """A finished 2-config, 6-step session of ``preset_id`` on the inventory-parsing musubi stand-ins
    (its scripts: those whose name starts with ``prefix``), every run rated best at step 4."""
    scripts = [k for k in MUSUBI["scripts"] if f"/{prefix}" in k]
    musubi = install_inventory_scripts(root / "musubi", "kohya-ss/musubi-tuner", scripts)
    fields = fields_for(preset_id, root, dataset, **overrides)
    fields.update(musubi_dir=str(musubi), trainer_python=str(make_fake_python(root / "bin")))
    settings = SearchSettings(budget=2, steps=6, confirm=0, sample_every_n_steps=2, sample_prompts="a photo of zqx")
    session = Session.create(preset_id, fields, settings, out_dir=runs_dir, name=preset_id)
    assert session.run() == "finished"
    for run in session.store.runs(session.name, with_series=False):  # the person liked step 4 best
        session.add_rating(run["id"], 9, step=4)
        session.add_rating(run["id"], 2, step=6)
    return session
