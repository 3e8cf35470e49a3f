"""One real small session (fake trainer) shared by the report and export tests.

Budget 4 = 2 configs × 2 seeds, steps 10; ``BRACKET_FAKE_PLAN`` makes the third run exit 1
and the fourth log NaN, so the report has a failed and a disqualified/pruned run. A human
rating is added, then finals (top 1 config, 2 seeds, 20 steps) run as a separate stage.
The training script lives in a folder whose name is full of shell metacharacters, so the
exported script must quote it. The settings carry a VLM key (never stored) and a VLM URL
with a password; both must stay out of every report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from bracket.app.stages import run_finals
from bracket.report import write_report
from bracket.session import SearchSettings, Session
from bracket.trainer.demo.adapter import DemoLoRA
from tests.conftest import make_caption_folder
from tests.fakes import copy_fake_trainer, make_fake_python

#: harmless payloads: if quoting ever broke, bash would only create these files
METACHAR_DIR = "we ird; touch PWNED_SEMI $(touch PWNED_SUBST) `touch PWNED_TICK` & |"
VLM_KEY = "sk-VLMKEY-in-memory-1234"
VLM_URL_PASSWORD = "vlmpass9876"
ENV_VLM_KEY = "sk-ENVKEY-5678"
STORE_PASSWORD = "hunter2pw"
SECRETS = (VLM_KEY, VLM_URL_PASSWORD, ENV_VLM_KEY, STORE_PASSWORD)


@dataclass
class Demo:
    folder: Path
    tmp: Path
    script: Path
    name: str
    live_markdown: str
    live_html: str


@pytest.fixture(scope="session")
def demo_session(tmp_path_factory) -> Demo:
    tmp = tmp_path_factory.mktemp("report")
    python = make_fake_python(tmp / "fakebin")
    data = make_caption_folder(tmp / "data")
    script_dir = tmp / METACHAR_DIR
    script_dir.mkdir()
    script = copy_fake_trainer(script_dir / "fake_trainer.py")
    fields = {"dataset": str(data), "trainer_python": str(python), "train_script": str(script)}
    plan = tmp / "plan.json"
    plan.write_text(json.dumps(["ok", "ok", "exit1", "nan"]))
    settings = SearchSettings(
        budget=4, steps=10, seeds=2, sample_prompts="a red circle --d 7\na blue square --d 8",
        vlm={"enabled": False, "api_key": VLM_KEY, "model": "judge",
             "base_url": f"http://vlmuser:{VLM_URL_PASSWORD}@127.0.0.1:9/v1"})
    with pytest.MonkeyPatch.context() as patch:
        # the trainer-python probe imports torch (seconds); it is not what these tests are about
        patch.setattr(DemoLoRA, "preflight_problems", lambda self: [])
        patch.setenv("BRACKET_FAKE_PLAN", str(plan))
        session = Session.create("demo-cpu", fields, settings, out_dir=tmp / "runs", name="rep")
        assert session.run() == "finished"
        session.add_rating(1, 9)
        vlm = session.settings.vlm
        session.close()
        session = Session.open(tmp / "runs" / "rep")  # finals run on a fresh object (run() leaves it stopped)
        session.settings.vlm = vlm  # as the UI keeps the key in memory
        run_finals(session, top_k=1, steps=20, seeds=2)
        # the live session still holds the VLM key in memory; secrets also sit in the environment
        patch.setenv("BRACKET_VLM_API_KEY", ENV_VLM_KEY)
        patch.setenv("BRACKET_STORAGE_URL", f"postgresql+psycopg://bob:{STORE_PASSWORD}@db.invalid:5432/bracket")
        real_url = session.store.url
        session.store.url = f"postgresql+psycopg://bob:{STORE_PASSWORD}@db.invalid:5432/bracket"
        assert session.settings.vlm["api_key"] == VLM_KEY
        files = write_report(session)
        live_markdown, live_html = files.markdown.read_text(), files.html.read_text()
        session.store.url = real_url
        folder = session.folder
        session.close()
    return Demo(folder, tmp, script, "rep", live_markdown, live_html)


@pytest.fixture
def opened(demo_session):
    session = Session.open(demo_session.folder, validate=False)
    yield session
    session.close()
