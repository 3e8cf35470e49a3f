"""The checker of tests/contract/test_private_names.py: no module reads another module's
private names.

Read from the source with :mod:`ast`: ``from x import _y`` (any ``x`` but ``__future__``) and
``obj._y`` where ``obj`` is anything but ``self`` / ``cls`` / ``super()`` (a module, another
object: its private attribute is its own business). Dunder names are public protocol.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOPS = ("bracket", "ui", "bench")

#: ``path: expression`` -> why it stays (each entry must still occur: a stale one fails)
ALLOWED: dict[str, str] = {
    "bracket/trainer/inventory/dump.py: parser._actions": "argparse has no public list of a parser's actions",
    "bracket/trainer/inventory/dump.py: argparse._HelpAction": "argparse has no public help-action class",
    "bracket/trainer/scripts/parser_check.py: parser._actions": "argparse has no public list of a parser's actions",
    "bracket/optuna_private.py: trial._trial_id": "the one read of Optuna's private trial id (pinned by a test)",
    "bracket/optuna_private.py: study._storage": "the one read of Optuna's private storage (pinned by a test)",
    "bench/common.py: no_problems._bench_skipped": "a marker the bench sets on its own stand-in function",
}


def _is_own(node: ast.expr) -> bool:
    if isinstance(node, ast.Name) and node.id in ("self", "cls"):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def reach_ins(source: str, label: str) -> list[str]:
    """``label: expression`` for every private name ``source`` reads from another module or object."""
    found = []
    for node in ast.walk(ast.parse(source, label)):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{label}: from {'.' * node.level}{node.module or ''} import {alias.name}")
        elif isinstance(node, ast.Attribute) and _private(node.attr) and not _is_own(node.value):
            found.append(f"{label}: {ast.unparse(node)}")
    return found


def house_reach_ins(root: Path = ROOT, tops: tuple[str, ...] = TOPS) -> list[str]:
    """Every reach-in of the house's packages (each distinct ``path: expression`` once)."""
    found: list[str] = []
    for top in tops:
        for path in sorted((root / top).rglob("*.py")):
            label = path.relative_to(root).as_posix()
            found += [f for f in reach_ins(path.read_text(encoding="utf-8"), label) if f not in found]
    return found
