"""The real app process: what it listens on, what it serves, and a SIGKILL of it mid-search.

One ``app.py`` (through ``ui_app_with_search.py``: the Setup tab's start handler is called as
the Start button would) trains a search whose second run hangs with a grandchild. The test
checks that the server listens on 127.0.0.1 only and serves a real sample but not
``~/.ssh``, ``.env`` files or anything reached with ``..`` (tests/ui/test_ui_security.py has
/etc/passwd, symlinks and the other routes); then it SIGKILLs the app and resumes the
session with ``Session.open(...).run()``: finished runs kept, orphans gone, slot re-run.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from urllib.parse import quote

import httpx
import psutil
import pytest

from bracket.session import Session
from tests.fakes import write_fake_plan
from tests.reliability.rel_helpers import ROOT, dead, kill_tree_now, read_pid, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
TOKEN = "RELIABILITY-SECRET-51e0"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _listening(pid: int) -> set[str]:
    process = psutil.Process(pid)
    connections = process.net_connections(kind="inet") if hasattr(process, "net_connections") \
        else process.connections(kind="inet")
    return {c.laddr.ip for c in connections if c.status == psutil.CONN_LISTEN}


def test_app_serves_only_runs_listens_locally_and_survives_a_sigkill(fast_fields, tmp_path, argv_log):
    runs, home, cwd = tmp_path / "runs", tmp_path / "home", tmp_path / "cwd"
    for folder in (runs, home / ".ssh", cwd):
        folder.mkdir(parents=True, exist_ok=True)
    (home / ".ssh" / "id_ed25519").write_text(TOKEN)
    (tmp_path / ".env").write_text(f"BRACKET_VLM_API_KEY={TOKEN}\n")
    plan = write_fake_plan(tmp_path / "plan.json", ["ok", "grandchild,hang", "ok", "ok"])
    fields_file = tmp_path / "fields.json"
    fields_file.write_text(json.dumps(fast_fields))
    port = _free_port()
    env = dict(os.environ, BRACKET_RUNS_DIR=str(runs), HOME=str(home), BRACKET_FAKE_PLAN=str(plan),
               GRADIO_ANALYTICS_ENABLED="False", HF_HUB_DISABLE_TELEMETRY="1", PYTHONUNBUFFERED="1",
               GRADIO_TEMP_DIR=str(tmp_path / "gradio-tmp"))
    env.pop("BRACKET_AUTH", None)
    env.pop("GRADIO_ALLOWED_PATHS", None)
    log = tmp_path / "app.log"
    with open(log, "wb") as handle:
        process = subprocess.Popen([sys.executable, str(ROOT / "tests" / "reliability" / "ui_app_with_search.py"),
                                    str(port), str(fields_file)], cwd=cwd, env=env, stdout=handle,
                                   stderr=subprocess.STDOUT)
    folder = runs / "ui-crash"
    url = f"http://127.0.0.1:{port}/"
    try:
        def answers() -> bool:
            assert process.poll() is None, log.read_text()[-3000:]
            try:
                return httpx.get(url, timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(answers, 120, "the app")
        assert _listening(process.pid) == {"127.0.0.1"}
        grandchild_file = wait_for(lambda: next(folder.glob("trials/*/output/grandchild.pid"), None), 90,
                                   "the hanging second run")
        grandchild, trainer = read_pid(grandchild_file), read_pid(grandchild_file.with_name("trainer.pid"))
        sample = next(folder.glob("trials/0001-*/output/sample/*.png"))

        secret_paths = [str(home / ".ssh" / "id_ed25519"), "~/.ssh/id_ed25519",
                        str(tmp_path / ".env"), f"{runs}/../.env", f"{sample.parent}/../../../../../.env",
                        f"{sample.parent}/../../../../../home/.ssh/id_ed25519", str(ROOT / ".env")]
        with httpx.Client(base_url=url, timeout=10) as client:
            served = client.get(f"gradio_api/file={sample}")
            assert served.status_code == 200 and served.content.startswith(b"\x89PNG")
            for path in secret_paths:
                for form in (path, quote(path, safe="/"), quote(path, safe="")):
                    for route in ("gradio_api/file={}", "file={}", "gradio_api/file/{}"):
                        response = client.get(route.format(form))
                        assert TOKEN not in response.text, (route, form, response.status_code)
                        if route == "gradio_api/file={}":
                            assert response.status_code in (403, 404), (form, response.status_code)

        process.send_signal(signal.SIGKILL)
        process.wait(10)
    finally:
        kill_tree_now(process)
    assert not dead(trainer) and not dead(grandchild), "a SIGKILLed app leaves its trainer behind"

    session = Session.open(folder)
    assert session.run() == "finished", session.error
    assert dead(trainer) and dead(grandchild)
    runs_ = session.store.runs(session.name)
    assert [r["status"] for r in runs_] == ["done", "interrupted", "done", "done"]
    assert runs_[1]["config_id"] == runs_[2]["config_id"]
    session.close()
