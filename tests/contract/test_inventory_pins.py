"""The project's trainer inventory: read at the pinned commits, complete, and readable by its dumper.

``test_inventory_commits_match_the_vendor_gitlinks`` is what makes a pin bump regenerate the
inventory: it reads the gitlinks from git (``git ls-tree HEAD vendor/``), so it also holds on
a clone whose ``vendor/`` folders are empty.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bracket.trainer.inventory import (
    TRAINERS,
    dataset_keys_by_repo,
    flags_by_repo,
    recorded_commits,
    required_in_practice,
)
from bracket.trainer.inventory.regenerate import DUMP, render

ROOT = Path(__file__).resolve().parents[2]
#: scripts a preset uses now or the new-presets issue will use; the inventory must hold each
EXPECTED = {
    "kohya-ss/sd-scripts": [
        "sdxl_train_network.py", "sdxl_train.py", "sd3_train_network.py", "sd3_train.py", "flux_train_network.py",
        "flux_train.py", "lumina_train_network.py", "lumina_train.py", "anima_train_network.py", "anima_train.py",
        "hunyuan_image_train_network.py", "tools/cache_latents.py", "tools/cache_text_encoder_outputs.py",
    ],
    "kohya-ss/musubi-tuner": [
        f"src/musubi_tuner/{name}.py" for name in (
            "hv_train_network", "hv_train", "wan_train_network", "fpack_train_network", "flux_kontext_train_network",
            "flux_2_train_network", "qwen_image_train_network", "qwen_image_train", "zimage_train_network",
            "zimage_train", "hidream_o1_train_network", "hidream_o1_train", "hidream_o1_cache_pixel",
            "hv_1_5_train_network", "kandinsky5_train_network", "krea2_train_network", "ideogram4_train_network",
            *(f"{arch}_cache_{what}" for arch in ("wan", "fpack", "flux_kontext", "flux_2", "qwen_image", "zimage",
                                                  "hv_1_5", "kandinsky5", "ideogram4", "krea2")
              for what in ("latents", "text_encoder_outputs")),
            "cache_latents", "cache_text_encoder_outputs", "hidream_o1_cache_text_encoder_outputs",
        )
    ],
}


def _gitlinks() -> dict[str, str]:
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        code = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "HEAD", "vendor/"], stdout=out,
                              stderr=subprocess.STDOUT, check=False).returncode
        out.seek(0)
        text = out.read()
    if code != 0:
        pytest.skip(f"not a git checkout ({text.strip()[:80]})")
    links = {}
    for line in text.splitlines():
        meta, _, path = line.partition("\t")
        mode, kind, sha = meta.split()
        if kind == "commit":
            links[path] = sha
    return links


def test_inventory_commits_match_the_vendor_gitlinks():
    links = _gitlinks()
    for vendor, commit in recorded_commits().items():
        assert links.get(vendor) == commit, (
            f"{vendor} is pinned at {links.get(vendor)} but the inventory was read at {commit}: run "
            "`python -m bracket.trainer.inventory.regenerate` (docs/UPDATING_TRAINERS.md) and commit the result"
        )


@pytest.mark.parametrize("repo", sorted(EXPECTED))
def test_every_script_a_preset_needs_is_in_the_inventory(repo):
    scripts = flags_by_repo()[repo]["scripts"]
    assert [s for s in EXPECTED[repo] if s not in scripts] == []
    for name, view in scripts.items():
        assert len(view["flags"]) >= 5, name  # a parser was really read
        assert all(flag in view["flags"] for entry in view["required_in_practice"] for flag in entry.split("|")), name


def test_curated_network_modules_exist_in_the_checkout():
    musubi = flags_by_repo()["kohya-ss/musubi-tuner"]
    for name, view in musubi["scripts"].items():
        if "_train_network" in name:
            assert view.get("network_module") in musubi["network_modules"], name


def test_views_derive_from_the_options():
    view = flags_by_repo()["kohya-ss/sd-scripts"]["scripts"]["sdxl_train_network.py"]
    assert "--gradient_checkpointing" in view["no_value"] and view["nargs"]["--network_args"] == "*"
    assert "fp16" in view["choices"]["--mixed_precision"] and view["types"]["--learning_rate"] == "float"
    assert view["required_in_practice"][-1] == "--dataset_config|--train_data_dir"
    musubi = flags_by_repo()["kohya-ss/musubi-tuner"]
    assert musubi["script_aliases"]["wan_train_network.py"] == "src/musubi_tuner/wan_train_network.py"
    assert required_in_practice("kohya-ss/musubi-tuner", "src/musubi_tuner/krea2_cache_latents.py") == [
        "--dataset_config", "--vae"]


def test_dataset_sections_are_read_from_the_schemas():
    keys = dataset_keys_by_repo()
    assert {"image_dir", "num_repeats"} <= set(keys["kohya-ss/sd-scripts"]["datasets.subsets (dreambooth)"])
    assert "batch_size" in keys["kohya-ss/sd-scripts"]["general"]
    musubi = keys["kohya-ss/musubi-tuner"]
    assert {"image_directory", "cache_directory", "control_directory"} <= set(musubi["datasets (image)"])
    assert {"video_directory", "target_frames"} <= set(musubi["datasets (video)"])


def test_the_stored_files_are_what_render_writes():
    for source in TRAINERS:
        text = source.path.read_text(encoding="utf-8")
        assert render(json.loads(text)) == text, f"{source.path} was edited by hand; regenerate it"


# -- the dumper, on a tiny fake checkout (no trainer venv needed) ------------------------------

FAKE_SCRIPT = '''import argparse
import not_installed_anywhere.sub as missing  # stubbed by the dumper
from not_installed_anywhere import Base


class Trainer(Base):
    pass


def setup_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--mode", choices=["a", "b"], default="a")
    parser.add_argument("--flag", action="store_true")
    parser.add_argument("--many", nargs="*", type=int)
    return parser


if __name__ == "__main__":
    args = setup_parser().parse_args()
    raise SystemExit("must never get here")
'''

FAKE_SCHEMA = '''class ConfigSanitizer:
    def __init__(self):
        self.general_schema = {"batch_size": int}
        self.image_dataset_schema = {"image_directory": str, "resolution": [int]}
        self.video_dataset_schema = {"video_directory": str}
'''


def _dump(root: Path, *arguments: str) -> tuple[int, dict]:
    out = root / "out.json"
    code = subprocess.run([sys.executable, str(DUMP), "--root", str(root), *arguments, "--out", str(out)],
                          check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    return code, json.loads(out.read_text())


def test_dump_reads_parsers_with_stubs(tmp_path):
    (tmp_path / "train.py").write_text(FAKE_SCRIPT, encoding="utf-8")
    (tmp_path / "broken.py").write_text("raise RuntimeError('no parser here')\n", encoding="utf-8")
    code, result = _dump(tmp_path, "--script", "train.py", "--script", "broken.py")
    assert code == 1 and result["errors"] == {"broken.py": "RuntimeError: no parser here"}
    assert result["stubbed"] == ["not_installed_anywhere"]
    options = {o["flags"][0]: o for o in result["scripts"]["train.py"]}
    assert set(options) == {"--flag", "--learning_rate", "--many", "--mode"}
    assert options["--learning_rate"]["type"] == "float" and options["--learning_rate"]["default"] == 1e-4
    assert options["--mode"]["choices"] == ["a", "b"] and options["--flag"]["nargs"] == 0
    assert options["--many"]["nargs"] == "*"


def test_dump_reads_a_dataset_schema(tmp_path):
    (tmp_path / "fake_config.py").write_text(FAKE_SCHEMA, encoding="utf-8")
    code, result = _dump(tmp_path, "--dataset-schema", "fake_config")
    assert code == 0 and result["stubbed"] == []
    sections = result["sections"]
    assert sections["general"] == {"batch_size": "int"}
    assert sections["datasets (image)"] == {"image_directory": "str", "resolution": "[int]"}
