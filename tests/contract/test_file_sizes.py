"""The project keeps each Python file short enough to read in one sitting: at most
``MAX_LINES`` lines (the engine, the app, the tests and ``app.py``).

A file that grows past it is split where it has a cohesive piece (as ``ui.setup_preset`` was
taken out of ``ui.setup_tab``), not squeezed."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 400


def test_no_python_file_is_over_the_line_limit():
    files = [ROOT / "app.py", *(p for part in ("bracket", "ui", "tests", "bench") for p in (ROOT / part).rglob("*.py"))]
    assert len(files) > 100, "the project's files were not found"
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in files}
    too_long = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert too_long == {}, f"over {MAX_LINES} lines: {too_long}"
