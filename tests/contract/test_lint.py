"""The code passes ruff at the rules and line length pyproject.toml sets (``[tool.ruff]``)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_the_code_passes_ruff():
    result = _ruff("check", "--output-format", "concise", "--no-cache", ".")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_ruff_reads_the_projects_rules(tmp_path):
    """A planted unused import and an over-long line are reported under the project's config."""
    planted = tmp_path / "planted.py"
    planted.write_text("import os\n\nTEXT = '" + "x" * 130 + "'\n", encoding="utf-8")
    result = _ruff("check", "--output-format", "concise", "--no-cache", "--config", str(ROOT / "pyproject.toml"),
                   str(planted))
    assert result.returncode == 1
    assert "F401" in result.stdout and "E501" in result.stdout
