"""Fixtures of the LLM adapter tests: a small dataset, a fake trainer python, fake modules,
and for the real-trainer tests the trainer venvs and the tiny model (built once a session)."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

from bracket.registry import get_preset
from tests.llm import tiny_model
from tests.llm.llm_helpers import FAKES, trainer_venv_python, write_alpaca


@pytest.fixture
def alpaca_file(tmp_path) -> Path:
    (tmp_path / "data").mkdir()
    return write_alpaca(tmp_path / "data" / "dataset.jsonl")


@pytest.fixture
def fake_python(tmp_path) -> Path:
    """An executable 'python' that runs the fake Axolotl/torchtune entry point."""
    path = tmp_path / "venv" / "bin" / "python"
    path.parent.mkdir(parents=True)
    script = FAKES / "fake_llm_trainer.py"
    path.write_text(
        f"#!{sys.executable}\nimport runpy, sys\nsys.argv = [{str(script)!r}] + sys.argv[1:]\n"
        f"runpy.run_path({str(script)!r}, run_name='__main__')\n",
        encoding="utf-8",
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def model_dir(tmp_path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    return folder


@pytest.fixture
def make_trainer(alpaca_file, fake_python, model_dir):
    """``make_trainer(preset_id, **fields)``: the preset's trainer with test inputs."""

    def make(preset_id: str, **fields: str):
        values = {"dataset": str(alpaca_file), "trainer_python": str(fake_python), "base_model": str(model_dir)}
        values.update(fields)
        return get_preset(preset_id).build_trainer(values)

    return make




@pytest.fixture(scope="session")
def tiny_llm(tmp_path_factory) -> Path:
    """The tiny random Llama of ``tests/llm/tiny_model.py``, built once per pytest session in
    its temporary folder with the first LLM trainer venv found (skips when there is none)."""
    pythons = [p for p in map(trainer_venv_python, ("torchtune", "axolotl", "unsloth")) if p]
    if not pythons:
        pytest.skip("no LLM trainer venv (vendor/{axolotl,torchtune,unsloth}/.venv): "
                    "run ./install.sh --llm-trainers")
    out = tmp_path_factory.mktemp("tiny-llm") / "model"
    for python in pythons[:-1]:
        try:
            return tiny_model.build_tiny_model(python, out)
        except subprocess.CalledProcessError:
            continue  # an incomplete venv: the next one may build it
    return tiny_model.build_tiny_model(pythons[-1], out)
