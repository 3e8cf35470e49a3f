"""``python app.py``'s own mistakes — a bad port, a port in use, a bad or missing login — end
with one ``error:`` line and exit 2, never a traceback, and serve nothing (seen in review:
``--port 99999`` and a port already taken printed Gradio's traceback after building the app)."""

from __future__ import annotations

import socket

import pytest


@pytest.fixture
def app_run(monkeypatch, runs_dir, capsys):
    """``app.main`` with the Blocks replaced by a stand-in whose launch can fail as Gradio's does;
    returns a runner giving (exit code, stderr, whether the app was launched)."""
    import app
    import ui.blocks

    state = {"launched": False, "fail": None}

    class Blocks:
        def launch(self, **kwargs):
            if state["fail"] is not None:
                raise state["fail"]
            state["launched"] = True

        def block_thread(self):
            pass

    monkeypatch.setattr(ui.blocks, "build_app", lambda manager: Blocks())
    monkeypatch.setenv("BRACKET_RUNS_DIR", str(runs_dir))
    monkeypatch.delenv("BRACKET_AUTH", raising=False)

    def run(args, fail=None):
        state.update(launched=False, fail=fail)
        try:
            code = app.main(args)
        except SystemExit as exit_:  # argparse's refusals
            code = exit_.code
        return code, capsys.readouterr().err, state["launched"]

    yield run
    import gc
    gc.unfreeze()  # main freezes what startup made; leave the test process as it was


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("port", ["99999", "-1", "0", "abc"])
def test_a_port_outside_1_to_65535_is_refused(app_run, port):
    code, err, launched = app_run(["--port", port])
    assert code == 2 and not launched
    assert "1 to 65535" in _one_error_line(err)


def test_a_port_in_use_is_one_error_line_naming_it(app_run):
    taken = OSError("Cannot find empty port in range: 7999-7999. You can specify a different port by setting "
                    "the GRADIO_SERVER_PORT environment variable or passing the `server_port` parameter to `launch()`.")
    code, err, launched = app_run(["--port", "7999"], fail=taken)
    line = _one_error_line(err)
    assert code == 2 and not launched
    assert "7999" in line and "--port" in line and "GRADIO_SERVER_PORT" not in line


def test_a_port_really_in_use_is_refused_by_the_real_launch(monkeypatch, runs_dir, capsys):
    """The same with Gradio's own launch against a port a socket holds (no browser needed)."""
    import gc

    import app

    monkeypatch.setenv("BRACKET_RUNS_DIR", str(runs_dir))
    monkeypatch.delenv("BRACKET_AUTH", raising=False)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        try:
            code = app.main(["--port", str(port)])
        finally:
            gc.unfreeze()
    assert code == 2
    assert str(port) in _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("args", [["--host", "0.0.0.0"], ["--share"], ["--host", "0.0.0.0", "--auth", "nocolon"],
                                  ["--auth", ":pw"]])
def test_a_missing_or_malformed_login_is_one_error_line(app_run, args):
    code, err, launched = app_run(args)
    assert code == 2 and not launched
    assert "--auth" in _one_error_line(err)
