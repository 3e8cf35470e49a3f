"""Shared fixtures: the fake trainer, the fake python, and a temporary runs folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FAKES = Path(__file__).resolve().parent / "fakes"


@pytest.fixture(autouse=True)
def _isolated_runs_dir(tmp_path, monkeypatch):
    """Every test gets its own runs folder; nothing is written into the project."""
    runs = tmp_path / "runs"
    runs.mkdir()
    monkeypatch.setenv("BRACKET_RUNS_DIR", str(runs))
    yield runs


@pytest.fixture
def runs_dir(_isolated_runs_dir) -> Path:
    return _isolated_runs_dir


@pytest.fixture
def output_dir() -> Path:
    """A folder kept after the test (screenshots, reports) under test-output/."""
    base = Path(os.environ.get("BRACKET_TEST_OUTPUT", ROOT / "test-output"))
    base.mkdir(parents=True, exist_ok=True)
    return base
