"""Fixtures of the UI tests: demo fields pointing at the fake trainer, and the app in a subprocess."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from bracket.dataset.demo_data import make_demo_dataset
from tests.fakes import FAKE_TRAINER, make_fake_python
from tests.fakes.waiting import wait_for_answer

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def demo_fields(tmp_path) -> dict[str, str]:
    toml = make_demo_dataset(tmp_path / "data", count=6)
    return {"dataset": str(toml), "trainer_python": str(make_fake_python(tmp_path / "bin")),
            "train_script": str(FAKE_TRAINER)}


@pytest.fixture
def no_torch_probe(monkeypatch):
    """The demo adapter checks that the trainer python imports torch (seconds); the fake needs none."""
    monkeypatch.setattr("bracket.trainer.demo.adapter.trainer_python_problems", lambda *a, **k: [])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LaunchedApp:
    url: str
    process: subprocess.Popen
    runs_dir: Path
    cwd: Path
    started_s: float
    log: Path


@contextmanager
def launch_app(tmp_path: Path, extra_env: dict[str, str], extra_args: list[str],
               script: Path = ROOT / "app.py") -> Iterator[LaunchedApp]:
    """``python app.py`` (or ``script``, a fake around it) on a free port, cwd a scratch folder holding
    secrets, runs in tmp."""
    runs_dir, cwd = tmp_path / "runs", tmp_path / "cwd"
    runs_dir.mkdir(exist_ok=True)
    cwd.mkdir()
    port = free_port()
    env = dict(os.environ, BRACKET_RUNS_DIR=str(runs_dir), GRADIO_ANALYTICS_ENABLED="False",
               HF_HUB_DISABLE_TELEMETRY="1", GRADIO_TEMP_DIR=str(tmp_path / "gradio-tmp"),
               BRACKET_FAKE_STEP_SECONDS="0.03", PYTHONUNBUFFERED="1")
    env.pop("GRADIO_ALLOWED_PATHS", None)
    env.update(extra_env)
    log = tmp_path / "app.log"
    start = time.monotonic()
    with open(log, "wb") as handle:
        process = subprocess.Popen([sys.executable, str(script), "--port", str(port), *extra_args], cwd=cwd,
                                   env=env, stdout=handle, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_for_answer(url, process, log)
        yield LaunchedApp(url, process, runs_dir, cwd, time.monotonic() - start, log)
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@pytest.fixture
def launched_app(tmp_path) -> Iterator[LaunchedApp]:
    """The app as a person starts it: no demo trainer, no custom executables."""
    with launch_app(tmp_path, {}, []) as app:
        yield app


@pytest.fixture
def demo_app(tmp_path) -> Iterator[LaunchedApp]:
    """The app whose demo preset trains with the fake trainer: its python and the demo data come
    from the environment, and the form may type the fake training script (custom executables)."""
    toml = make_demo_dataset(tmp_path / "data", count=6)
    env = {"BRACKET_DEMO_PYTHON": str(make_fake_python(tmp_path / "bin")), "BRACKET_DEMO_DATA_DIR": str(toml.parent)}
    with launch_app(tmp_path, env, ["--allow-custom-executables"]) as app:
        yield app
