"""The ai-toolkit key inventory: read at the pinned commit, written by its generator, and the
generator itself on a tiny checkout shaped like ai-toolkit's (no venv, no torch: ``ast`` only)."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from bracket.trainer.inventory.ai_toolkit import INVENTORY_PATH, VENDOR, load_inventory
from bracket.trainer.inventory.ai_toolkit_regenerate import (
    JOB_FILES,
    PROCESS_FILES,
    SECTIONS,
    RegenerateError,
    Source,
    read_inventory,
    render,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_inventory_was_read_at_the_vendor_gitlink():
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        code = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "HEAD", VENDOR], stdout=out,
                              stderr=subprocess.STDOUT, check=False).returncode
        out.seek(0)
        text = out.read()
    if code != 0:
        pytest.skip(f"not a git checkout ({text.strip()[:80]})")
    fields = text.split()
    assert fields[1] == "commit" and fields[2] == load_inventory()["commit"], (
        f"{VENDOR} is pinned at {fields[2]} but ai-toolkit.json was read at {load_inventory()['commit']}: run "
        "`python -m bracket.trainer.inventory.ai_toolkit_regenerate` (docs/UPDATING_TRAINERS.md)")


def test_the_stored_file_is_what_the_generator_writes():
    text = INVENTORY_PATH.read_text(encoding="utf-8")
    assert render(json.loads(text)) == text, "ai-toolkit.json was edited by hand; regenerate it"


CONFIG_MODULES = '''
from typing import Literal
import torch
ModelArch = Literal['sdxl', 'flux']
class TrainConfig:
    def __init__(self, **kwargs):
        self.lr = kwargs.get('lr', 1e-6)
        self.steps = kwargs['steps']
        if 'ema_config' in kwargs:
            pass
class EMAConfig:
    def __init__(self, **kwargs):
        self.use_ema = kwargs.get('use_ema', False)
'''


def _fake_checkout(root: Path, *, drop: str = "") -> Path:
    files = {"toolkit/config_modules.py": CONFIG_MODULES,
             "extensions_built_in/sd_trainer/__init__.py": "class A:\n    uid = 'sd_trainer'\n",
             "extensions_built_in/diffusion_models/chroma/chroma.py":
                 "class C:\n    arch = 'chroma'\n    def f(self):\n        self.model_config.model_kwargs.get('x')\n"}
    for path in PROCESS_FILES:
        files[path] = "class P:\n    def __init__(self):\n        self.a = self.get_conf('training_folder')\n"
    for path in JOB_FILES:
        files[path] = "class J:\n    def f(self):\n        self.get_conf('name', required=True)\n"
    for name in [n for n in SECTIONS.values() if n not in ("TrainConfig", "EMAConfig")]:
        if name != drop:
            files["toolkit/config_modules.py"] += f"class {name}:\n    def __init__(self, **kwargs):\n        pass\n"
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


def test_the_generator_reads_the_keys_each_class_reads(tmp_path):
    inventory = read_inventory(Source(checkout=_fake_checkout(tmp_path)), "c0ffee")
    sections = inventory["sections"]
    assert sections["process.train"] == ["ema_config", "lr", "steps"]
    assert sections["process.train.ema_config"] == ["use_ema"]
    assert sections["process"] == ["training_folder", "type"] and sections["config"] == ["name", "process"]
    assert sections["process.model.model_kwargs"] == ["x"]
    assert inventory["process_types"] == ["sd_trainer"] and inventory["archs"] == ["chroma"]
    assert inventory["legacy_archs"] == ["flux", "sdxl"] and inventory["commit"] == "c0ffee"


def test_a_config_class_that_is_gone_fails_the_generator(tmp_path):
    with pytest.raises(RegenerateError, match="no class NetworkConfig"):
        read_inventory(Source(checkout=_fake_checkout(tmp_path, drop="NetworkConfig")), "c0ffee")
