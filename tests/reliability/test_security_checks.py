"""Safe local serving and secrets: no shell anywhere, localhost by default, no secret written anywhere.

* The package, ``ui/`` and ``app.py`` never start a shell: no ``shell=True``, no ``os.system`` or
  ``os.popen``, and every subprocess call gets an argument list (checked on the syntax tree).
* ``app.py`` listens on 127.0.0.1 unless told otherwise; another interface or ``--share`` needs
  a login and prints a warning (the refusal without a login is in tests/ui/test_ui_security.py).
* A session with a VLM API key (typed into the Setup tab) and a storage URL with a password
  (``BRACKET_STORAGE_URL``): neither secret appears in the session folder, the store, the
  report, the exported command, the CLI's output, the trainer's argv or the log records —
  while the key really is sent to the VLM server (a local fake).
"""

from __future__ import annotations

import ast
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from tests.reliability.rel_helpers import ROOT, launches

pytestmark = pytest.mark.timeout(240)

API_KEY = "sk-live-SECRET-4c1d2e"
DB_PASSWORD = "pg-PASSWORD-93b7f0"
SUBPROCESS_CALLS = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}


def _python_files() -> list[Path]:
    return sorted([*(ROOT / "bracket").rglob("*.py"), *(ROOT / "ui").rglob("*.py"), ROOT / "app.py"])


def test_no_shell_anywhere_and_subprocess_arguments_are_lists():
    problems: list[str] = []
    files = _python_files()
    assert len(files) > 30
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            for keyword in node.keywords:
                if keyword.arg == "shell" and not (isinstance(keyword.value, ast.Constant)
                                                   and keyword.value.value is False):
                    problems.append(f"{where}: shell={ast.unparse(keyword.value)}")
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            owner = ast.unparse(func.value) if isinstance(func, ast.Attribute) else ""
            if owner == "os" and name in ("system", "popen") or name.startswith(("execl", "spawnl")) and owner == "os":
                problems.append(f"{where}: os.{name} runs a shell or a string command")
            if owner == "subprocess" and name in ("getoutput", "getstatusoutput"):
                problems.append(f"{where}: subprocess.{name} runs a shell")
            if owner == "subprocess" and name in SUBPROCESS_CALLS and node.args:
                first = node.args[0]
                if isinstance(first, (ast.JoinedStr, ast.BinOp)) or (
                        isinstance(first, ast.Constant) and isinstance(first.value, str)):
                    problems.append(f"{where}: subprocess.{name} gets a string, not an argument list")
    assert problems == []


class _LaunchRecorder:
    """Stands in for the Blocks: records how the app would be launched."""

    def __init__(self) -> None:
        self.kwargs: dict = {}

    def launch(self, **kwargs) -> None:
        self.kwargs = kwargs

    def block_thread(self) -> None:
        pass


@pytest.fixture
def fake_app(monkeypatch, runs_dir):
    import ui.blocks

    recorder = _LaunchRecorder()
    monkeypatch.setattr(ui.blocks, "build_app", lambda manager: recorder)
    monkeypatch.delenv("BRACKET_AUTH", raising=False)
    import app

    return app, recorder


def test_the_app_listens_on_localhost_unless_told_and_then_warns_and_needs_a_login(fake_app, capsys,
                                                                                   monkeypatch):
    app, recorder = fake_app
    assert app.main(["--port", "7999"]) == 0
    err = capsys.readouterr().err
    assert recorder.kwargs["server_name"] == "127.0.0.1" and recorder.kwargs["share"] is False
    assert recorder.kwargs["auth"] is None and "WARNING" not in err
    assert recorder.kwargs["allowed_paths"] == [str(Path(app.app_settings.get_settings().runs_dir).resolve())]
    assert str(ROOT / ".env") in recorder.kwargs["blocked_paths"]

    for args in (["--host", "0.0.0.0"], ["--share"], ["--host", "192.168.1.5", "--share"]):
        recorder.kwargs = {}
        assert app.main(args) == 2 and recorder.kwargs == {}, "no login: nothing is launched"
        assert "--auth" in capsys.readouterr().err

    assert app.main(["--host", "0.0.0.0", "--auth", "admin:pw1"]) == 0
    err = capsys.readouterr().err
    assert recorder.kwargs["server_name"] == "0.0.0.0" and recorder.kwargs["auth"] == ("admin", "pw1")
    assert "WARNING" in err and "0.0.0.0" in err and "pw1" not in err

    monkeypatch.setenv("BRACKET_AUTH", "me:pw2")
    assert app.main(["--share"]) == 0
    err = capsys.readouterr().err
    assert recorder.kwargs["share"] is True and recorder.kwargs["auth"] == ("me", "pw2")
    assert "WARNING" in err and "gradio.live" in err and "pw2" not in err


class _FakeVlm(BaseHTTPRequestHandler):
    """An OpenAI-compatible /chat/completions that always likes the image; remembers the headers."""

    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        _FakeVlm.seen.append(self.headers.get("Authorization", ""))
        content = json.dumps({"prompt_adherence": 7, "quality": 6, "artifacts": 8})
        body = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def fake_vlm():
    server = HTTPServer(("127.0.0.1", 0), _FakeVlm)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _FakeVlm.seen = []
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture
def password_store(monkeypatch, tmp_path):
    """``postgresql://…:PASSWORD@…`` URLs open a SQLite file instead; the rest of Bracket sees the URL."""
    from bracket.session.store import Store, sqlite_url

    url = f"postgresql+psycopg://bracket:{DB_PASSWORD}@db.example.invalid:5432/bracket"
    real_open = Store.open.__func__
    database = tmp_path / "external.db"

    def open_(cls, target, *, create=True):
        if target.startswith("postgresql"):
            store = real_open(cls, sqlite_url(database), create=create)
            store.url = target
            return store
        return real_open(cls, target, create=create)

    monkeypatch.setattr(Store, "open", classmethod(open_))
    monkeypatch.setenv("BRACKET_STORAGE_URL", url)
    return database


def _leaks(data: bytes | str) -> list[str]:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return [s for s in (API_KEY, DB_PASSWORD) if s in text]


def test_secrets_never_reach_the_folder_the_store_the_report_the_export_or_the_output(
        fast_fields, runs_dir, tmp_path, fake_vlm, password_store, argv_log, capsys, caplog):
    from bracket.app.manager import SessionManager
    from bracket.cli import main
    from ui.setup_tab import start_search

    caplog.set_level(logging.DEBUG)
    manager = SessionManager(runs_dir, allow_custom_executables=True)
    start_search(manager, preset_id="demo-cpu", fields=fast_fields, budget=2, steps=4, seeds=1,
                 prompts="a red circle --d 1", vlm_base_url=fake_vlm, vlm_model="fake-vision", vlm_api_key=API_KEY,
                 name="secret")
    session = manager.session
    assert session.wait(120) and session.snapshot().status == "finished", session.error
    assert _FakeVlm.seen and all(h == f"Bearer {API_KEY}" for h in _FakeVlm.seen), "the key is used"
    runs = session.store.runs(session.name)
    assert all("vlm" in r["judges"] for r in runs), "the VLM judge scored every run"
    assert not _leaks(repr(session.snapshot())) and not _leaks(manager.results.dashboard_command())
    folder = session.folder
    manager.close()

    for command in (["status", str(folder)], ["report", str(folder)], ["export", str(folder)]):
        assert main(command) == 0, command
    out, err = capsys.readouterr()
    assert not _leaks(out + err)
    files = [p for p in folder.rglob("*") if p.is_file()] + [password_store, *password_store.parent.glob(
        "external.db-*")]
    assert any(p.name == "report.html" for p in files) and any(p.suffix == ".sh" for p in files)
    leaking = {str(p): _leaks(p.read_bytes()) for p in files if _leaks(p.read_bytes())}
    assert leaking == {}
    assert json.loads((folder / "session.json").read_text())["storage"].startswith("postgresql+psycopg://bracket@")
    assert not any(_leaks(arg) for argv in launches(argv_log) for arg in argv)
    assert not _leaks(caplog.text)
