"""Install the carried wheels on the bare device machine: no index, no network, into a target folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def install_command(wheels: Path, target: Path, python: str = sys.executable) -> list[str]:
    """The pip command that installs every wheel of ``wheels`` into ``target`` (offline)."""
    found = sorted(str(w) for w in wheels.glob("*.whl"))
    return [python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
            "--no-cache-dir", "--upgrade", "--target", str(target), *found]


def install(wheels: Path, target: Path, log: Path, python: str = sys.executable) -> dict[str, str]:
    """Install the wheels (none is fine) and return the environment that sees them."""
    target.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(target), os.environ.get("PYTHONPATH", "")) if p))
    if not any(wheels.glob("*.whl")):
        return env
    with log.open("ab") as out:
        code = subprocess.run(install_command(wheels, target, python), stdout=out, stderr=subprocess.STDOUT,
                              check=False).returncode
    if code:
        raise RuntimeError(f"installing the carried wheels failed (exit {code}); see {log}")
    return env
