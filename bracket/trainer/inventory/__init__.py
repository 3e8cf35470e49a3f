"""The pinned trainers' command-line inventory: every flag of every script, read from the real parsers.

``<trainer>.json`` beside this file holds, for one trainer checkout in ``vendor/`` and the
commit it was read at, every option of every training and caching script (flags, dest,
action, nargs, type, choices, default, required) and the keys each section of its dataset
TOML accepts. ``python -m bracket.trainer.inventory.regenerate`` writes these files from the
real argparse parsers (see docs/UPDATING_TRAINERS.md); nothing here is typed by hand except
``curated.json``: flags a script needs at run time although its parser does not mark them
required (musubi-tuner's ``--optimizer_type`` has an empty default and fails later), and the
``--network_module`` each LoRA script is documented to use.

The contract tests check every preset's commands against :func:`flags_by_repo` and its
dataset TOMLs against :func:`dataset_keys_by_repo`; ``test_inventory_pins`` fails when a
recorded commit differs from the gitlink of its ``vendor/`` folder.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class TrainerSource:
    """One pinned trainer: its upstream name, its folder in ``vendor/`` and the inventory file."""

    repo: str
    vendor: str
    #: scripts read, as globs relative to the checkout
    scripts: tuple[str, ...]
    #: the module whose ``ConfigSanitizer`` defines the dataset TOML
    dataset_module: str

    @property
    def path(self) -> Path:
        return HERE / f"{Path(self.vendor).name}.json"


TRAINERS = (
    TrainerSource(
        "kohya-ss/sd-scripts", "vendor/sd-scripts",
        ("*_train_network.py", "*_train.py", "train_network.py", "tools/cache_latents.py",
         "tools/cache_text_encoder_outputs.py"),
        "library.config_util",
    ),
    TrainerSource(
        "kohya-ss/musubi-tuner", "vendor/musubi-tuner",
        ("src/musubi_tuner/*_train_network*.py", "src/musubi_tuner/*_train.py",
         "src/musubi_tuner/*cache_latents.py", "src/musubi_tuner/*cache_text_encoder_outputs.py",
         "src/musubi_tuner/*cache_pixel.py"),
        "musubi_tuner.dataset.config_utils",
    ),
)


@cache
def load_raw(repo: str) -> dict[str, Any]:
    """The generated inventory of ``repo`` as written by ``regenerate``."""
    source = next(t for t in TRAINERS if t.repo == repo)
    return json.loads(source.path.read_text(encoding="utf-8"))


@cache
def _curated() -> dict[str, Any]:
    return json.loads((HERE / "curated.json").read_text(encoding="utf-8"))


def _first_match(rules: dict[str, Any], script: str) -> Any:
    for pattern, value in rules.items():
        if fnmatch.fnmatch(script, pattern):
            return value
    return None


def required_in_practice(repo: str, script: str) -> list[str]:
    """Flags ``script`` needs at run time (``a|b`` = one of them), from the first matching rule."""
    return list(_first_match(_curated()["required_in_practice"].get(repo, {}), script) or [])


def network_module(repo: str, script: str) -> str | None:
    """The ``--network_module`` a LoRA script is documented to use (None when not curated)."""
    return _first_match(_curated()["network_module"].get(repo, {}), script)


def script_view(repo: str, script: str, options: list[dict[str, Any]]) -> dict[str, Any]:
    """One script's options as the lookup tables a checker wants (keyed by flag)."""
    view: dict[str, Any] = {"options": options, "flags": [], "no_value": [], "nargs": {}, "choices": {},
                            "types": {}, "defaults": {}, "required": []}
    for option in options:
        for flag in option["flags"]:
            if not flag.startswith("--"):
                continue
            view["flags"].append(flag)
            if option["nargs"] == 0:
                view["no_value"].append(flag)
            elif option["nargs"] is not None:
                view["nargs"][flag] = option["nargs"]
            if option["choices"] is not None:
                view["choices"][flag] = option["choices"]
            if option["type"]:
                view["types"][flag] = option["type"]
            if option["default"] is not None:
                view["defaults"][flag] = option["default"]
            if option["required"]:
                view["required"].append(flag)
    view["required_in_practice"] = required_in_practice(repo, script)
    module = network_module(repo, script)
    if module:
        view["network_module"] = module
    return view


@cache
def flags_by_repo() -> dict[str, dict[str, Any]]:
    """``{repo: {"commit", "scripts": {script: view}, "script_aliases": {wrapper: script}}}``."""
    result = {}
    for source in TRAINERS:
        raw = load_raw(source.repo)
        result[source.repo] = {
            "commit": raw["commit"],
            "network_modules": list(raw.get("network_modules", [])),
            "scripts": {name: script_view(source.repo, name, options) for name, options in raw["scripts"].items()},
            "script_aliases": dict(raw.get("script_aliases", {})),
        }
    return result


@cache
def dataset_keys_by_repo() -> dict[str, dict[str, dict[str, str | None]]]:
    """``{repo: {section: {key: type}}}``; sections are ``general``, ``datasets (…)``, ``datasets.subsets (…)``."""
    return {source.repo: load_raw(source.repo)["dataset_keys"] for source in TRAINERS}


def recorded_commits() -> dict[str, str]:
    """``{vendor folder: commit the inventory was read at}``."""
    return {source.vendor: load_raw(source.repo)["commit"] for source in TRAINERS}
