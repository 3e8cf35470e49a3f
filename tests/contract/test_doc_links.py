"""Every relative link and every file a doc names exists.

README.md and docs/*.md (not the dated logs in docs/log/, which describe the code as it was)
link other docs and cite the code and tests that prove what they say. When a file moves or a
test is renamed, this test names the doc and the dead reference. Checked:

* relative Markdown links ``[text](path)`` and ``[text](path#anchor)``, from the doc's folder;
* paths under the project's own folders (``bracket/…``, ``tests/…``, ``ui/…``, ``bench/…``,
  ``docs/…``): the file or folder, from the project root; ``file.py::test_name`` also needs
  a ``def test_name`` in that file;
* bare test file names (``test_x.py``): a file of that name under ``tests/`` (names are
  unique there).

Example code (```` ```python ```` blocks, such as a new trainer's adapter) and the folders
commands write (``GENERATED``) are not checked.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOP = ("bracket", "tests", "ui", "bench", "docs")
GENERATED = {"bench/results"}  # git-ignored output of `python -m bench`

_LINK = re.compile(r"\]\(([^)\s]+)\)")
_EXAMPLE = re.compile(r"^```python\n.*?^```", re.M | re.S)
_PATH = re.compile(r"(?<![\w./-])((?:%s)/[\w./*-]*)(?:::(\w+))?" % "|".join(TOP))
_BARE_TEST = re.compile(r"(?<![\w./-])(test_\w+\.py)(?:::(\w+))?")


def _docs(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def _test_files(root: Path) -> dict[str, Path]:
    return {p.name: p for p in (root / "tests").rglob("test_*.py")}


def _defines(path: Path, name: str) -> bool:
    return re.search(r"^\s*(?:async\s+)?def %s\b" % re.escape(name), path.read_text(encoding="utf-8"), re.M) is not None


def dead_references(doc: Path, root: Path) -> list[str]:
    """The references in ``doc`` that name nothing under ``root``, one line each."""
    text = _EXAMPLE.sub("", doc.read_text(encoding="utf-8"))
    dead: list[str] = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL, mailto: or an anchor in the same doc
        if not (doc.parent / target.split("#", 1)[0]).exists():
            dead.append(f"link ({target})")
    for path, name in _PATH.findall(text):
        path = path.rstrip(".")  # a path that ends a sentence
        if any(path == g or path.startswith(g + "/") for g in GENERATED):
            continue
        where = root / path
        if "*" in path:
            if not any(root.glob(path)):
                dead.append(f"path {path}")
        elif not where.exists():
            dead.append(f"path {path}")
        elif name and where.is_file() and not _defines(where, name):
            dead.append(f"{path}::{name} (no such test)")
    tests = _test_files(root)
    for base, name in _BARE_TEST.findall(text):
        if base not in tests:
            dead.append(f"test file {base}")
        elif name and not _defines(tests[base], name):
            dead.append(f"{base}::{name} (no such test)")
    return dead


def test_every_relative_link_and_cited_file_in_the_docs_exists():
    docs = _docs(ROOT)
    assert len(docs) > 5, "the docs were not found"
    dead = {d.relative_to(ROOT).as_posix(): refs for d in docs if (refs := dead_references(d, ROOT))}
    assert dead == {}, f"docs name files, tests or links that do not exist: {dead}"


def test_a_planted_dead_link_path_and_test_are_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "bracket").mkdir()
    (tmp_path / "bracket" / "real.py").write_text("", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_real.py").write_text("def test_there():\n    pass\n", encoding="utf-8")
    (tmp_path / "docs" / "OTHER.md").write_text("", encoding="utf-8")
    doc = tmp_path / "docs" / "A.md"
    doc.write_text(
        "[ok](OTHER.md#part) [web](https://example.com) [here](#x) `bracket/real.py`.\n"
        "`tests/test_real.py::test_there` and test_real.py\n"
        "`bracket/re*.py`, `bench/results/x.json`\n"
        "```python\nsource = 'docs/example-only.md'\n```\n"
        "[gone](MISSING.md) `bracket/moved.py` (`tests/test_real.py::test_gone`, test_renamed.py)\n"
        "`ui/old_*.py`\n",
        encoding="utf-8",
    )
    assert dead_references(doc, tmp_path) == [
        "link (MISSING.md)",
        "path bracket/moved.py",
        "tests/test_real.py::test_gone (no such test)",
        "path ui/old_*.py",
        "test file test_renamed.py",
    ]
