"""The code passes ruff at the rules and line length pyproject.toml sets (``[tool.ruff]``).

Those rules include SLF001 and PLC2701: no module of ``bracket``, ``ui`` or ``bench`` reads another
module's private attributes or imports its private names; the few that must carry a ``noqa``
with their reason beside it."""

import json
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


def _codes(path: Path) -> list[str]:
    config = str(ROOT / "pyproject.toml")
    result = _ruff("check", "--output-format", "json", "--no-cache", "--config", config, str(path))
    assert result.returncode in (0, 1), result.stderr[-2000:]
    return sorted(finding["code"] for finding in json.loads(result.stdout))


def test_ruff_reads_the_projects_rules(tmp_path):
    """A planted unused import and an over-long line are reported under the project's config."""
    planted = tmp_path / "planted.py"
    planted.write_text("import os\n\nTEXT = '" + "x" * 130 + "'\n", encoding="utf-8")
    assert _codes(planted) == ["E501", "F401"]


def test_ruff_catches_a_planted_reach_in(tmp_path):
    """Another object's private attribute and another module's private name are reported; the
    object's own (self, cls, super()) and dunders are not."""
    planted = tmp_path / "reach.py"
    planted.write_text(
        "from bracket.errors import _hidden\n\n\nclass A:\n    def f(self, other):\n"
        "        return self._mine, super().__len__(), other.__len__(), other._theirs, _hidden\n",
        encoding="utf-8")
    assert _codes(planted) == ["PLC2701", "SLF001"]
