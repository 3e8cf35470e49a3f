"""Input that still got through (issue 35, item 10): each mistake exits 2 with one ``error:``
line, before anything is created or launched.

A symlink loop as the dataset, an in-memory ``--storage sqlite://`` (it left a session folder
behind), a ``.env`` with a NUL byte or invalid UTF-8, ``export --out /proc/x``,
``BRACKET_RUNS_DIR`` naming a file, a newline in a path (it split the ``error:`` line), a prompt
file with a NUL byte (it reached the trainer), and the numbers without a bound:
``--judge-repeats``, ``finals --steps`` / ``--seeds`` (the same bounds as ``run``),
``demo-data --count``, ``worker --grace nan`` and ``worker --gpu``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bracket import settings
from bracket.cli import main
from tests.reliability.rel_helpers import cli_args, launches

pytestmark = pytest.mark.timeout(300)


def _run(capsys, argv: list[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    return code, capsys.readouterr().err


def _one_error(code: int, err: str, piece: str) -> None:
    assert code == 2, err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert piece in err and "Traceback" not in err, err


def _search(fields: dict[str, str], runs: Path, *extra: str) -> list[str]:
    return ["run", "--preset", "demo-cpu", *cli_args(fields), "--budget", "2", "--steps", "3", "--out", str(runs),
            "--quiet", *extra]


@pytest.fixture
def finished(fast_fields, runs_dir, capsys, argv_log) -> Path:
    assert main(_search(fast_fields, runs_dir, "--name", "done")) == 0
    capsys.readouterr()
    argv_log.unlink()
    return runs_dir / "done"


def test_run_refuses_a_symlink_loop_an_in_memory_store_and_a_prompt_file_with_nul(fast_fields, runs_dir, tmp_path,
                                                                               capsys, argv_log):
    loop = tmp_path / "loop-a"
    loop.symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(loop)
    prompts = tmp_path / "prompts.txt"
    prompts.write_bytes(b"a red circle\x00 --d 1\n")
    newline_dir = tmp_path / "line\nbreak" / "set"
    cases = [
        ({**fast_fields, "dataset": str(loop)}, (), "does not exist"),
        (fast_fields, ("--storage", "sqlite://"), "names no file"),
        (fast_fields, ("--storage", "sqlite:///:memory:"), "names no file"),
        (fast_fields, ("--prompts", str(prompts)), "NUL byte"),
        ({**fast_fields, "dataset": str(newline_dir)}, (), "line\\nbreak"),
        (fast_fields, ("--judge-url", "http://127.0.0.1:1/v1", "--judge-model", "m", "--judge-repeats", "1000000"),
         "Judge repeats must be from 1 to 20"),
    ]
    for fields, extra, piece in cases:
        _one_error(*_run(capsys, _search(fields, runs_dir, *extra)), piece)
        assert list(runs_dir.iterdir()) == [], f"{extra}: nothing may be written"
        assert launches(argv_log) == []


def test_finals_take_the_bounds_of_run(finished, capsys, argv_log):
    for extra, piece in ((("--steps", str(10**12)), "--steps 1000000000000 is larger than 10000000"),
                         (("--seeds", "221"), "--seeds 221 is larger than 100"),
                         (("--top", "1000", "--seeds", "50"), "runs 50000 is larger than 10000")):
        _one_error(*_run(capsys, ["finals", str(finished), *extra]), piece)
    assert launches(argv_log) == [], "no final run may be launched"


def test_export_into_a_folder_nothing_can_be_made_in(finished, capsys, tmp_path):
    before = sorted(p.name for p in finished.iterdir())
    _one_error(*_run(capsys, ["export", str(finished), "--out", "/proc/x"]), "nothing can be written in /proc")
    assert sorted(p.name for p in finished.iterdir()) == before
    # a writable one still works
    assert main(["export", str(finished), "--out", str(tmp_path / "exported")]) == 0


@pytest.mark.parametrize("argv, piece", [
    (["demo-data", "{tmp}/demo", "--count", str(10**9)], "--count must be from 1 to 10000"),
    (["worker", "--session", "s", "--storage", "postgresql+psycopg://u@127.0.0.1:1/db", "--grace", "nan"],
     "--grace must be a number"),
    (["worker", "--session", "s", "--storage", "postgresql+psycopg://u@127.0.0.1:1/db", "--grace", "inf"],
     "--grace must be a number"),
    (["worker", "--session", "s", "--storage", "postgresql+psycopg://u@127.0.0.1:1/db", "--gpu", "0; rm -rf ~"],
     "is not a GPU"),
    (["worker", "--session", "s", "--storage", "postgresql+psycopg://u@127.0.0.1:1/db", "--gpu", "x\n1"],
     "is not a GPU"),
])
def test_unbounded_numbers_and_an_unchecked_gpu_are_refused(argv, piece, tmp_path, capsys):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    _one_error(*_run(capsys, argv), piece)
    assert not (tmp_path / "demo").exists()


def test_the_gpu_forms_cuda_takes_pass_the_check(capsys):
    """The check refuses only what is no GPU: these fail later, on the unreachable store."""
    for gpu in ("0", "0,1", "GPU-8b7f3c2a-1d2e-4f5a-9b8c-7d6e5f4a3b2c"):
        code, err = _run(capsys, ["worker", "--session", "s", "--storage", "postgresql+psycopg://u@127.0.0.1:1/db",
                                  "--gpu", gpu])
        assert code == 2 and "Cannot open the store" in err, err


@pytest.mark.parametrize("content, piece", [(b"BRACKET_RUNS_DIR=/tmp/a\x00b\n", "NUL byte"),
                                            (b"BRACKET_AUTH=\xff\xfe\n", "cannot be read as UTF-8")])
def test_a_damaged_env_file_is_one_error_line(content, piece, tmp_path, monkeypatch, capsys, runs_dir):
    (tmp_path / ".env").write_bytes(content)
    monkeypatch.setattr(settings, "PROJECT_ROOT", tmp_path)
    monkeypatch.setattr(settings, "_ENV_LOADED", False)
    _one_error(*_run(capsys, ["run", "--preset", "demo-cpu", "--out", str(runs_dir), "--quiet"]), piece)
    assert list(runs_dir.iterdir()) == []


def test_runs_dir_set_to_a_file(tmp_path, monkeypatch, capsys):
    file = tmp_path / "runs-file"
    file.write_text("x", encoding="utf-8")
    monkeypatch.setenv("BRACKET_RUNS_DIR", str(file))
    _one_error(*_run(capsys, ["run", "--preset", "demo-cpu", "--quiet"]), "BRACKET_RUNS_DIR")
    import app

    assert app.main(["--port", "7999"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: BRACKET_RUNS_DIR") and "Traceback" not in err, err
    assert file.read_text(encoding="utf-8") == "x"
