"""The operator's judge key and the judge URL typed in the form (issue 35, items 2 and 10).

``BRACKET_VLM_API_KEY`` belongs to the ``BRACKET_VLM_BASE_URL`` the operator configured: a
session whose judge URL is another one (typed in the web form or on the command line) must
not send that key — the requests reach the stand-in judge server for real and their
``Authorization`` header is read there. A key typed with a URL goes to that URL. The web form
(the manager exactly as ``python app.py`` builds it) refuses a judge URL other than the
configured one — the server would send requests wherever it names — unless
``--allow-custom-executables``. A judge URL carrying ``user:password@`` is refused (it would
be stored with the session and printed in messages), without echoing the password.
"""

from __future__ import annotations

import contextlib
import io

import pytest

from bracket.app.forms import judge_server_settings
from bracket.cli import main as cli_main
from bracket.errors import BracketError
from bracket.judge.server import JudgeServer
from bracket.session.scoring.vlm import vlm_config
from tests.judge import stand_in_server
from tests.reliability.rel_helpers import app_manager, inline_error, launches

pytestmark = pytest.mark.timeout(240)

ENV_KEY = "sk-operator-KEY-5521"
TYPED_KEY = "sk-typed-KEY-8830"
PASSWORD = "judge-PASSWORD-4417"


@pytest.fixture
def judge(monkeypatch):
    server = stand_in_server.start()
    monkeypatch.setenv("BRACKET_VLM_BASE_URL", server.url("ok"))
    monkeypatch.setenv("BRACKET_VLM_API_KEY", ENV_KEY)
    yield server
    server.shutdown()


def _auth_sent(server, vlm: dict) -> str | None:
    """The ``Authorization`` header the judge server received for one question."""
    before = len(server.requests)
    JudgeServer(vlm_config({**vlm, "model": "stand-in"}), sleep=lambda s: None).ask(
        [{"role": "system", "content": "rate"}, {"role": "user", "content": "Model's answer:\nx\n"}], str)
    assert len(server.requests) == before + 1
    return server.requests[-1]["auth"]


def test_the_environments_key_goes_only_to_the_environments_judge_url(judge):
    assert _auth_sent(judge, {"base_url": judge.url("ok")}) == f"Bearer {ENV_KEY}"
    assert _auth_sent(judge, {"base_url": judge.url("ok") + "/"}) == f"Bearer {ENV_KEY}"
    # another URL (here: the same stand-in under another path) gets no key at all ...
    assert _auth_sent(judge, {"base_url": judge.url("vary")}) is None
    # ... only the one typed with it
    assert _auth_sent(judge, {"base_url": judge.url("vary"), "api_key": TYPED_KEY}) == f"Bearer {TYPED_KEY}"
    assert all(ENV_KEY not in str(r) for r in judge.requests if "/vary/" in r["path"])


def _start(manager, fields, judge_url: str, key: str = ""):
    from ui.setup_tab import start_search

    return start_search(manager, preset_id="demo-cpu", fields=fields, budget=2, steps=3, seeds=1,
                        prompts="a red circle --d 1", vlm_base_url=judge_url, vlm_model="stand-in", vlm_api_key=key)


def test_the_web_form_sends_judge_requests_only_to_the_configured_url(monkeypatch, judge, fast_fields,
                                                                      runs_dir, argv_log):
    monkeypatch.setenv("BRACKET_RUNS_DIR", str(runs_dir))
    monkeypatch.setenv("BRACKET_DEMO_PYTHON", fast_fields["trainer_python"])
    configured = {k: v for k, v in fast_fields.items() if k != "train_script"}  # the programs pass
    manager = app_manager(monkeypatch)
    for typed in ("http://169.254.169.254/latest/v1", judge.url("vary"), "http://attacker.example/v1"):
        message = inline_error(_start(manager, configured, typed, TYPED_KEY))
        assert message.startswith("Judge model server URL") and "not the configured one" in message, message
        assert "--allow-custom-executables" in message
    assert launches(argv_log) == [] and list(runs_dir.iterdir()) == [] and judge.requests == []
    manager.close()


def test_the_person_starting_the_app_may_allow_another_judge_url(monkeypatch, judge, fast_fields, runs_dir):
    monkeypatch.setenv("BRACKET_RUNS_DIR", str(runs_dir))
    manager = app_manager(monkeypatch, "--allow-custom-executables")
    _start(manager, fast_fields, judge.url("vary"))
    assert manager.session.wait(120) and manager.session.snapshot().status == "finished"
    manager.close()


@pytest.mark.parametrize("url", [f"http://user:{PASSWORD}@127.0.0.1:1234/v1", f"https://{PASSWORD}@judge.example/v1"])
def test_a_judge_url_with_credentials_is_refused_without_echoing_them(url, runs_dir):
    with pytest.raises(BracketError) as refused:
        judge_server_settings(url, "stand-in")
    assert "API key" in str(refused.value) and PASSWORD not in str(refused.value)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(["run", "--preset", "demo-cpu", "--out", str(runs_dir), "--name", "cred",
                         "--judge-url", url, "--judge-model", "stand-in", "--budget", "1"])
    assert code == 2 and err.getvalue().startswith("error: ") and PASSWORD not in out.getvalue() + err.getvalue()
    assert list(runs_dir.iterdir()) == []


def test_judge_messages_hide_a_url_password():
    server = JudgeServer(vlm_config({"base_url": f"http://u:{PASSWORD}@127.0.0.1:9/v1", "model": "m"}),
                         sleep=lambda s: None)
    with pytest.raises(RuntimeError) as failed:
        server.ask([{"role": "user", "content": "x"}], str)
    assert PASSWORD not in str(failed.value) and "127.0.0.1:9" in str(failed.value)
