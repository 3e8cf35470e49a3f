"""Fixtures of the reliability suite (helpers are in ``tests.reliability.rel_helpers``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import make_caption_folder
from tests.fakes import FAKE_PYTHON_LOG_ENV, FAKE_TRAINER
from tests.reliability.rel_helpers import make_probe_python


@pytest.fixture
def fast_fields(tmp_path, monkeypatch) -> dict[str, str]:
    """demo-cpu fields: a caption folder, the probe-passing python, the fake trainer.

    Every launch of the trainer python is logged (JSON argv per line) to ``argv.log``.
    """
    monkeypatch.setenv(FAKE_PYTHON_LOG_ENV, str(tmp_path / "argv.log"))
    python = make_probe_python(tmp_path / "fakebin")
    data = make_caption_folder(tmp_path / "data")
    return {"dataset": str(data), "trainer_python": str(python), "train_script": str(FAKE_TRAINER)}


@pytest.fixture
def argv_log(tmp_path) -> Path:
    return tmp_path / "argv.log"

