"""A worker runs only the programs configured on its own machine (issue 44, item 1).

Whoever can write the shared database could otherwise run code on every worker: here the session
row's trainer python is rewritten on a real PostgreSQL server to a script that records that it
ran. ``python -m bracket worker`` must refuse the session with one ``error:`` line, launch
nothing (the script never runs, not even as a version probe) and exit 2; with
``--allow-custom-executables`` (its owner's explicit opt-in) it runs what the session names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from bracket.session import SearchSettings, Session
from bracket.session.store import Store
from bracket.session.store.schema import sessions_table
from bracket.trainer.demo.adapter import DEMO_SCRIPT
from tests.fakes import make_fake_python

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]

_EVIL = '''#!/bin/sh
echo "$@" >> {ran}
exit 1
'''


def _worker(url: str, runs: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bracket", "worker", "--storage", url, "--session", "shared",
                           "--runs-dir", str(runs), "--quiet", *extra], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=180, check=False)


def test_a_worker_refuses_programs_its_machine_did_not_configure(postgres, tmp_path, monkeypatch, request):
    monkeypatch.setenv("PGPASSWORD", postgres.password)
    url = postgres.create_database("worker_programs")
    python = make_fake_python(tmp_path / "fakebin")  # this machine's configured trainer python
    monkeypatch.setenv("BRACKET_DEMO_PYTHON", str(python))
    data = tmp_path / "data"
    from tests.conftest import make_caption_folder

    make_caption_folder(data)
    runs = tmp_path / "runs"
    settings = SearchSettings(budget=2, steps=3, seeds=1, sample_prompts="a red circle --d 7")
    session = Session.create("demo-cpu", {"dataset": str(data), "trainer_python": str(python),
                                          "train_script": str(DEMO_SCRIPT)}, settings, out_dir=runs,
                             name="shared", storage_url=url)
    session.close()

    ran = tmp_path / "evil-ran.txt"
    evil = tmp_path / "evil.sh"
    evil.write_text(_EVIL.format(ran=ran), encoding="utf-8")
    evil.chmod(0o755)
    store = Store.open(url, create=False)
    with store.engine.begin() as connection:  # what write access to the database allows
        fields = json.loads(connection.execute(sa.select(sessions_table.c.fields_json)).scalar())
        connection.execute(sessions_table.update().values(fields_json=json.dumps({**fields,
                                                                                   "trainer_python": str(evil)})))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BRACKET_DEMO_PYTHON": str(python)}
    env.pop("BRACKET_STORAGE_URL", None)

    refused = _worker(url, runs, env)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    err = refused.stderr.strip()
    assert err.startswith("error: ") and len(err.splitlines()) == 1, err
    assert str(evil) in err and "--allow-custom-executables" in err, err
    assert not ran.exists()  # nothing launched, not even a probe
    assert not [r for r in store.runs("shared", with_series=False) if r["kind"] != "setup"]

    allowed = _worker(url, runs, env, "--allow-custom-executables")  # the explicit opt-in
    assert ran.exists(), allowed.stdout + allowed.stderr
    store.close()


@pytest.mark.parametrize("settings", ['[]', '{"budget": "lots"}', '"text"'])
def test_a_worker_on_a_damaged_session_row_says_one_line(postgres, tmp_path, monkeypatch, demo_fields, settings):
    """Issue 44, item 6: settings JSON ``[]`` or ``{"budget": "lots"}`` gave the worker 28 and 42 lines."""
    monkeypatch.setenv("PGPASSWORD", postgres.password)
    url = postgres.create_database(f"damaged_{abs(hash(settings)) % 10**8}")
    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=2, steps=3, sample_prompts="a --d 1"),
                             out_dir=tmp_path / "runs", name="shared", storage_url=url)
    session.close()
    store = Store.open(url, create=False)
    with store.engine.begin() as connection:
        connection.execute(sessions_table.update().values(settings_json=settings))
    store.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("BRACKET_STORAGE_URL", None)
    result = _worker(url, tmp_path / "runs", env, "--allow-custom-executables")
    err = result.stderr.strip()
    assert result.returncode == 2 and len(err.splitlines()) == 1, result.stdout + result.stderr
    assert err.startswith("error: The session's store is damaged (")
