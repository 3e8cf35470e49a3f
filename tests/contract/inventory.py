"""Checks of commands and dataset TOMLs against the project's trainer inventory.

The inventory (``bracket/trainer/inventory/``) is read from the real parsers of the pinned
checkouts by ``python -m bracket.trainer.inventory.regenerate``. Shared by the command
contract test. A command is matched to its inventory entry by the script path in its argv:
an inventory key (``sdxl_train_network.py``, ``src/musubi_tuner/wan_train_network.py``)
matches when the argv word ends with it, and a musubi root wrapper name maps through
``script_aliases``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bracket.trainer.inventory import dataset_keys_by_repo, flags_by_repo


@dataclass(frozen=True)
class ScriptEntry:
    repo: str
    key: str
    index: int  # position of the script in the argv
    spec: dict[str, Any]


def load_inventory() -> tuple[dict[str, Any], dict[str, Any]]:
    """``(flags, keys)``: per trainer repo, its scripts' flag tables and its dataset-TOML sections."""
    return flags_by_repo(), dataset_keys_by_repo()


def find_script(cmd: list[str], flags: dict[str, Any]) -> ScriptEntry | None:
    """The first argv word that is a script of the inventory."""
    for index, word in enumerate(cmd):
        normal = word.replace("\\", "/")
        if not normal.endswith(".py"):
            continue
        for repo, data in flags.items():
            scripts = data["scripts"]
            aliases = data.get("script_aliases", {})
            for key in scripts:
                if normal == key or normal.endswith("/" + key):
                    return ScriptEntry(repo, key, index, scripts[key])
            base = normal.rsplit("/", 1)[-1]
            if base in aliases and aliases[base] in scripts:
                return ScriptEntry(repo, aliases[base], index, scripts[aliases[base]])
    return None


def flag_problems(argv: list[str], spec: dict[str, Any]) -> list[str]:
    """Problems of the trainer arguments ``argv`` (after the script) against one script's spec."""
    known = set(spec["flags"])
    no_value = set(spec.get("no_value", []))
    nargs = spec.get("nargs", {})
    choices = spec.get("choices", {})
    problems: list[str] = []
    seen: list[str] = []
    i = 0
    if argv and not argv[0].startswith("--"):
        problems.append(f"stray word {argv[0]!r} before the first flag")
    while i < len(argv):
        word = argv[i]
        if not word.startswith("--"):
            i += 1
            continue
        flag = word
        if "=" in flag:
            problems.append(f"{flag}: give the value as its own word")
            flag = flag.split("=", 1)[0]
        values = []
        j = i + 1
        while j < len(argv) and not argv[j].startswith("--"):
            values.append(argv[j])
            j += 1
        if flag not in known:
            problems.append(f"{flag} is not a flag of this script")
        elif flag in no_value and values:
            problems.append(f"{flag} takes no value, got {values}")
        elif flag not in no_value and flag not in nargs and len(values) != 1:
            problems.append(f"{flag} takes one value, got {values}")
        elif flag in nargs and nargs[flag] in ("+",) and not values:
            problems.append(f"{flag} needs at least one value")
        if flag in choices and values:
            allowed = [str(c) for c in choices[flag]]
            bad = [v for v in values if v not in allowed]
            if bad:
                problems.append(f"{flag} {bad} not among {allowed}")
        if flag in seen:
            problems.append(f"{flag} is given twice")
        seen.append(flag)
        i = j
    present = set(seen)
    for flag in spec.get("required", []):
        if flag not in present:
            problems.append(f"required flag {flag} is missing")
    for entry in spec.get("required_in_practice") or []:
        head = entry.strip()
        if " " in head or not head.startswith("--"):
            continue  # a conditional requirement ("--clip (Wan2.1 I2V ...)", "... when ...")
        if not any(option in present for option in head.split("|")):
            problems.append(f"flag {head} is required in practice and missing")
    return problems


def _section_keys(keys: dict[str, Any], prefix: str) -> list[set[str]]:
    return [set(v) for k, v in keys.items() if k == prefix or k.startswith(prefix + " (")]


def toml_problems(path: Path, repo: str, keys_json: dict[str, Any]) -> list[str]:
    """Keys of the dataset TOML at ``path`` that its trainer would reject."""
    keys = keys_json[repo]
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    problems: list[str] = []
    for top in document:
        if top not in ("general", "datasets"):
            problems.append(f"top-level key {top!r} is not allowed")
    allowed_general = set(keys["general"])
    for key in document.get("general", {}):
        if key not in allowed_general:
            problems.append(f"[general] key {key!r} is not allowed")
    dataset_sections = _section_keys(keys, "datasets")
    subset_sections = _section_keys(keys, "datasets.subsets")
    for n, dataset in enumerate(document.get("datasets", [])):
        own = {k for k in dataset if k != "subsets"}
        if not any(own <= section for section in dataset_sections):
            union = set().union(*dataset_sections)
            problems.append(f"[[datasets]] #{n} keys {sorted(own - union) or sorted(own)} are not allowed together")
        if "subsets" in dataset:
            if not subset_sections:
                problems.append("[[datasets.subsets]] is not allowed for this trainer")
            for m, subset in enumerate(dataset["subsets"]):
                if not any(set(subset) <= section for section in subset_sections):
                    union = set().union(*subset_sections)
                    problems.append(f"subset {n}.{m} keys {sorted(set(subset) - union)} are not allowed")
    return problems
