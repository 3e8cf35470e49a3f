"""The test tree mirrors the packages and stands on its own: no test outside ``tests/bench``
imports the benchmarks, and no two test modules share a name (they are collected without
``__init__.py``, so a second ``test_x.py`` would break collection)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def bench_imports(source: str) -> list[str]:
    """The ``bench`` modules ``source`` imports (any depth, ``import`` or ``from``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name == "bench" or a.name.startswith("bench.")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "bench" or node.module.startswith("bench."):
                found.append(node.module)
    return found


def test_no_test_outside_tests_bench_imports_the_benchmarks():
    offenders = {}
    for path in TESTS.rglob("*.py"):
        if (TESTS / "bench") in path.parents:
            continue
        names = bench_imports(path.read_text(encoding="utf-8"))
        if names:
            offenders[str(path.relative_to(TESTS))] = names
    assert not offenders, f"tests import bench/ (move the helper into tests/fakes/): {offenders}"


def test_the_check_sees_a_planted_bench_import():
    planted = "def f():\n    from bench.overhead import fill_store\n    import bench.tables\n"
    assert bench_imports(planted) == ["bench.overhead", "bench.tables"]
    assert bench_imports("from tests.fakes import bench_fields\nimport benchmark\n") == []


def test_test_module_names_are_unique():
    counts = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert not [name for name, n in counts.items() if n > 1]
