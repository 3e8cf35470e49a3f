"""The keys ostris/ai-toolkit reads from a job file, at the pinned commit, and the check of a job.

``ai-toolkit.json`` beside this file is generated from the checkout by
:mod:`bracket.trainer.inventory.ai_toolkit_regenerate` (docs/UPDATING_TRAINERS.md). ai-toolkit
ignores every key its config classes do not read, silently, so :func:`job_problems` is what
keeps Bracket from writing one: a key outside its section's list, a process type or model
``arch`` the pin does not have, each is a problem. The adapters' own test, the contract test and
``bracket doctor`` run it on every job file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = "ostris/ai-toolkit"
VENDOR = "vendor/ai-toolkit"
INVENTORY_PATH = HERE / "ai-toolkit.json"


@cache
def load_inventory(path: str = str(INVENTORY_PATH)) -> dict[str, Any]:
    """The stored inventory (``sections``: dotted section -> keys; ``[]`` marks a list's items)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _walk(value: Any, section: str, inventory: Mapping[str, Any], problems: list[str]) -> None:
    sections, open_sections = inventory["sections"], set(inventory["open_sections"])
    if section in open_sections:
        return
    if isinstance(value, list):
        item = f"{section}[]"
        if item in sections or item in open_sections:
            for n, entry in enumerate(value):
                if isinstance(entry, Mapping):
                    _walk(entry, item, inventory, problems)
                elif item in sections:
                    problems.append(f"{section}[{n}] must be a mapping")
        return
    if not isinstance(value, Mapping) or section not in sections:
        return
    known = set(sections[section])
    for key, inner in value.items():
        if key not in known:
            problems.append(f"{section}.{key} is not a key ai-toolkit reads (it would be ignored)")
            continue
        _walk(inner, f"{section}.{key}", inventory, problems)


def job_problems(job: Mapping[str, Any], inventory: Mapping[str, Any] | None = None) -> list[str]:
    """Every problem of ``job`` (a job file as a dict) against the inventory; [] when it is clean."""
    inventory = inventory or load_inventory()
    problems: list[str] = []
    unknown_top = [k for k in job if k not in inventory["sections"]["job"]]
    problems += [f"{k} is not a top-level key of an ai-toolkit job" for k in unknown_top]
    if job.get("job") != "extension":
        problems.append(f"job is {job.get('job')!r}, not 'extension'")
    config = job.get("config")
    if not isinstance(config, Mapping) or not config.get("name"):
        return problems + ["config.name is missing"]
    problems += [f"config.{k} is not a key ai-toolkit reads (it would be ignored)"
                 for k in config if k not in inventory["sections"]["config"]]
    processes = config.get("process")
    if not isinstance(processes, list) or not processes:
        return problems + ["config.process must be a non-empty list"]
    for n, process in enumerate(processes):
        if not isinstance(process, Mapping):
            problems.append(f"config.process[{n}] must be a mapping")
            continue
        if process.get("type") not in inventory["process_types"]:
            problems.append(f"config.process[{n}].type {process.get('type')!r} is not a process type of the pin")
        arch = (process.get("model") or {}).get("arch")
        if arch is not None and arch not in inventory["archs"] and arch not in inventory.get("legacy_archs", ()):
            problems.append(f"model.arch {arch!r} is not a model of the pin")
        local: list[str] = []
        _walk(process, "process", inventory, local)
        problems += [f"config.process[{n}]: {p}" for p in local]
    return problems
