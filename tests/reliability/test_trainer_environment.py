"""A trainer's environment holds what it needs, never Bracket's credentials (issue 35, item 4).

Bracket's process holds the app's login, the judge's key, the store's password and every
``.env`` value; a trainer inherited all of them, and what it prints is served as
``stdout.log`` and kept as the stored log tail. The fake trainer's ``printenv`` mode prints
its real environment, so the test reads what a trainer really got.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bracket import settings
from bracket.session import SearchSettings, Session
from bracket.trainer.environment import trainer_environment

pytestmark = pytest.mark.timeout(180)

SECRETS = {"PGPASSWORD": "pg-secret-4711", "BRACKET_VLM_API_KEY": "vlm-secret-4712",
           "BRACKET_AUTH": "admin:auth-secret-4713"}
NEEDED = {"HF_HOME": "/models/hf-home", "CUDA_VISIBLE_DEVICES": "0", "LC_ALL": "C.UTF-8",
          "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


def _dotenv(monkeypatch, tmp_path: Path) -> None:
    """A .env with an unrelated service's key, loaded as Bracket loads its own (into os.environ)."""
    env_file = tmp_path / ".env"
    env_file.write_text("OPENAI_API_KEY=dotenv-secret-4714\nMY_SERVICE_TOKEN=dotenv-secret-4715\n",
                        encoding="utf-8")
    for name in ("OPENAI_API_KEY", "MY_SERVICE_TOKEN"):
        monkeypatch.setenv(name, "x")  # so that monkeypatch removes what load_dotenv sets
        monkeypatch.delenv(name)
    settings.load_env_file(env_file)


def test_a_trainer_prints_no_credential_of_bracket_but_gets_what_it_needs(monkeypatch, tmp_path, fast_fields,
                                                                           runs_dir):
    for name, value in {**SECRETS, **NEEDED, "WANDB_PROJECT": "mine"}.items():
        monkeypatch.setenv(name, value)
    _dotenv(monkeypatch, tmp_path)
    monkeypatch.setenv("BRACKET_TRAINER_ENV", "BRACKET_FAKE_*,WANDB_*")  # the person passes W&B on
    monkeypatch.setenv("BRACKET_FAKE_MODE", "printenv")
    settings_ = SearchSettings(budget=1, steps=3, seeds=1, sample_prompts="a red circle --d 1")
    session = Session.create("demo-cpu", fast_fields, settings_, out_dir=runs_dir, name="env")
    assert session.run() == "finished", session.error
    run = session.store.runs(session.name)[0]
    log = (Path(run["run_dir"]) / "logs" / "stdout.log").read_text(encoding="utf-8")
    session.close()
    pairs = [line.split("=", 1) for line in log.splitlines() if "=" in line]
    printed = {name: value for name, value in pairs if name.isupper()}
    secrets = [*SECRETS.values(), "auth-secret-4713", "dotenv-secret-4714", "dotenv-secret-4715"]
    for where, text in (("stdout.log", log), ("the stored log tail", run["log_tail"])):
        assert not [s for s in secrets if s in text], f"a credential reached {where}"
    left_out = {"PGPASSWORD", "BRACKET_VLM_API_KEY", "BRACKET_AUTH", "OPENAI_API_KEY", "BRACKET_RUNS_DIR"}
    assert not left_out & set(printed)
    kept = {**NEEDED, "WANDB_PROJECT": "mine", "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
    for name, value in kept.items():
        assert printed.get(name) == value, name
    assert printed["PATH"] and printed["BRACKET_RUN_ID"], "the run marker and PATH must reach the trainer"


def test_the_store_password_and_values_holding_a_credential_are_left_out(monkeypatch):
    base = {"PATH": "/usr/bin", "BRACKET_STORAGE_URL": "postgresql://bk:store-pass-99@db/bracket",
            "HTTPS_PROXY": "http://bk:store-pass-99@proxy:3128", "HF_TOKEN": "hf_abc123", "HOME": "/home/me",
            "PGPASSWORD": "pg-secret-4711", "AWS_SECRET_ACCESS_KEY": "aws-1"}
    monkeypatch.setenv("BRACKET_TRAINER_ENV", "")
    # the adapter's own variables are kept; a credential is dropped even when the adapter lists it
    kept = trainer_environment({**base, "TQDM_DISABLE": "1", "PGPASSWORD": "pg-secret-4711"}, base=base)
    assert kept == {"PATH": "/usr/bin", "HF_TOKEN": "hf_abc123", "HOME": "/home/me", "TQDM_DISABLE": "1"}
