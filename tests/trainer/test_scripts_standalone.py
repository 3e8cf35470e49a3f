"""The scripts under bracket/trainer/scripts/ run in a trainer's interpreter, which has no
Bracket: they must import nothing from ``bracket`` and must start when run by path."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "bracket" / "trainer" / "scripts"
SCRIPT_FILES = sorted(p for p in SCRIPTS.glob("*.py") if p.name != "__init__.py")


def bracket_imports(path: Path) -> list[str]:
    """Every ``import bracket...`` / ``from bracket... import`` in ``path``, at any depth."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "bracket"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "bracket":
            found.append(node.module or "")
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            found.append("." * node.level + (node.module or ""))  # relative: part of the bracket package
    return found


def test_the_four_scripts_are_there():
    assert {p.name for p in SCRIPT_FILES} >= {"demo_train.py", "unsloth_driver.py", "llm_generate.py",
                                              "parser_check.py"}


@pytest.mark.parametrize("script", SCRIPT_FILES, ids=lambda p: p.name)
def test_script_imports_nothing_from_bracket(script):
    assert bracket_imports(script) == [], f"{script.name} imports {bracket_imports(script)}"


def test_the_checker_sees_a_bracket_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\ndef f():\n    from bracket.trainer.base import LaunchSpec\n", encoding="utf-8")
    assert bracket_imports(bad) == ["bracket.trainer.base"]


@pytest.mark.parametrize("script", SCRIPT_FILES, ids=lambda p: p.name)
def test_script_starts_by_path_without_bracket(script, tmp_path):
    # -I: no PYTHONPATH, no user site, the cwd is not on sys.path: only the script's folder is
    result = subprocess.run([sys.executable, "-I", str(script), "--help"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "usage" in result.stdout.lower()
