"""A path the file system refuses to look up (a name over 255 bytes: ``ENAMETOOLONG``), typed
where a command takes a folder or file, is bad input: one ``error:`` line, exit 2, nothing
written (a traceback before). The preset fields' case is in ``test_bad_input_matrix.py``."""

from __future__ import annotations

import pytest

from bracket.cli import main
from tests.reliability.rel_helpers import cli_args, launches

pytestmark = pytest.mark.timeout(120)

LONG = "n" * 300  # one name longer than any file system allows


def _finished_session(fields, runs_dir, capsys) -> str:
    code = main(["run", "--preset", "demo-cpu", *cli_args(fields), "--budget", "1", "--steps", "2",
                 "--out", str(runs_dir), "--name", "done", "--quiet"])
    capsys.readouterr()
    assert code == 0
    return str(runs_dir / "done")


COMMANDS = {
    "run --out": lambda f, tmp, done: ["run", "--preset", "demo-cpu", *cli_args(f), "--out", str(tmp / LONG)],
    "run --storage": lambda f, tmp, done: ["run", "--preset", "demo-cpu", *cli_args(f),
                                           "--storage", f"sqlite:///{tmp / LONG / 'x.db'}"],
    "run --warm-start-from": lambda f, tmp, done: ["run", "--preset", "demo-cpu", *cli_args(f),
                                                   "--warm-start-from", str(tmp / LONG)],
    "status": lambda f, tmp, done: ["status", str(tmp / LONG)],
    "resume": lambda f, tmp, done: ["resume", str(tmp / LONG)],
    "report": lambda f, tmp, done: ["report", str(tmp / LONG)],
    "export --out": lambda f, tmp, done: ["export", done, "--out", str(tmp / LONG)],
    "demo-data": lambda f, tmp, done: ["demo-data", str(tmp / LONG)],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_path_too_long_is_one_error_line(command, capsys, fast_fields, runs_dir, tmp_path, argv_log):
    done = _finished_session(fast_fields, runs_dir, capsys) if command.startswith("export") else ""
    before = len(launches(argv_log))
    code = main([*COMMANDS[command](fast_fields, tmp_path, done), "--quiet"] if command.startswith("run")
                else COMMANDS[command](fast_fields, tmp_path, done))
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert "too long" in err and "shorter" in err, err
    assert len(launches(argv_log)) == before, "nothing may be launched"
    assert sorted(p.name for p in runs_dir.iterdir()) == (["done"] if done else [])
