"""The installed venv runs Bracket's commands from any folder, not only from the checkout.

``./install.sh`` installs Bracket into ``.venv`` in editable mode (``pyproject.toml``), so a
person's script or a worker started from their home folder reaches the same code.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _clean_env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


def test_python_m_bracket_runs_outside_the_checkout(tmp_path):
    probe = subprocess.run([sys.executable, "-c", "import bracket; print(bracket.__file__)"], cwd=tmp_path,
                           env=_clean_env(), capture_output=True, text=True, timeout=120, check=False)
    assert probe.returncode == 0, f"bracket is not installed in {sys.executable}; run ./install.sh: {probe.stderr}"
    assert Path(probe.stdout.strip()).resolve().is_relative_to(ROOT), \
        f"{sys.executable} imports another checkout's bracket ({probe.stdout.strip()}); run ./install.sh here"
    listed = subprocess.run([sys.executable, "-m", "bracket", "presets"], cwd=tmp_path, env=_clean_env(),
                            capture_output=True, text=True, timeout=120, check=False)
    assert listed.returncode == 0, listed.stderr
    assert "sdxl-lora" in listed.stdout and "demo-cpu" in listed.stdout
