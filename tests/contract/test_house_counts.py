"""The house's three counts (docs/ARCHITECTURE.md): at most 8 modules at ``bracket/``'s root, at
most 16 flat modules in any one folder of the session engine ``bracket/session/`` (a folder that
holds more is grouped into subpackages), and no module docstring over 2 KB (what a module needs
to teach longer than that belongs in docs/)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "bracket"
MAX_ROOT_MODULES = 8
MAX_FLAT_MODULES = 16
MAX_DOCSTRING_BYTES = 2048


def flat_modules(folder: Path) -> list[str]:
    """The modules directly in ``folder`` (its ``__init__`` and ``__main__`` not counted)."""
    return sorted(p.name for p in folder.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))


def long_docstrings(root: Path = PACKAGE, limit: int = MAX_DOCSTRING_BYTES) -> dict[str, int]:
    found = {}
    for path in sorted(root.rglob("*.py")):
        text = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False) or ""
        if len(text.encode("utf-8")) > limit:
            found[path.relative_to(root.parent).as_posix()] = len(text.encode("utf-8"))
    return found


def test_few_modules_at_the_root():
    assert len(flat_modules(PACKAGE)) <= MAX_ROOT_MODULES, flat_modules(PACKAGE)


def test_no_folder_of_the_session_engine_holds_too_many_flat_modules():
    engine = PACKAGE / "session"
    crowded = {folder.relative_to(PACKAGE.parent).as_posix(): len(flat_modules(folder))
               for folder in [engine, *(p for p in engine.rglob("*") if p.is_dir())]
               if len(flat_modules(folder)) > MAX_FLAT_MODULES}
    assert not crowded, f"folders with more than {MAX_FLAT_MODULES} modules (group them): {crowded}"


def test_no_module_docstring_is_over_2_kb():
    found = long_docstrings()
    assert not found, f"module docstrings over {MAX_DOCSTRING_BYTES} bytes (move the rest to docs/): {found}"


def test_the_counts_see_a_planted_crowd(tmp_path):
    package = tmp_path / "bracket"
    package.mkdir()
    for i in range(3):
        (package / f"m{i}.py").write_text(f'"""{"x" * (10 if i else 3000)}"""\n', encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    assert flat_modules(package) == ["m0.py", "m1.py", "m2.py"]
    assert long_docstrings(package) == {"bracket/m0.py": 3000}
