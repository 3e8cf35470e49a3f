"""A folder argument that names a file (``report --out``, ``export --out``/``--cache-dir``, ``demo-data``) is one
``error:`` line and exit 2, writing nothing (seen in review: FileExistsError and NotADirectoryError
tracebacks from ``mkdir``)."""

from __future__ import annotations

from bracket.cli import main


def _cli(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().err


def test_report_export_and_demo_data_refuse_a_file_where_a_folder_goes(capsys, demo_fields, runs_dir, tmp_path):
    sets = [arg for name, value in demo_fields.items() for arg in ("--set", f"{name}={value}")]
    code, err = _cli(capsys, "run", "--preset", "demo-cpu", *sets, "--budget", "1", "--steps", "4", "--name", "s",
                     "--out", str(runs_dir), "--quiet")
    assert code == 0, err
    session = str(runs_dir / "s")
    file = tmp_path / "notes.txt"
    file.write_text("mine", encoding="utf-8")
    for argv in (["report", session, "--out", str(file)], ["export", session, "--out", str(file)],
                 ["export", session, "--out", str(file / "sub")], ["export", session, "--cache-dir", str(file)],
                 ["demo-data", str(file)],
                 ["demo-data", str(file / "sub")]):
        code, err = _cli(capsys, *argv)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (argv, err)
        assert f"{file} is a file, not a folder" in lines[0] and "Traceback" not in err
        assert file.read_text(encoding="utf-8") == "mine"
    # a folder that does not exist yet is still made
    code, err = _cli(capsys, "export", session, "--out", str(tmp_path / "new" / "export"))
    assert code == 0, err
    assert any((tmp_path / "new" / "export").rglob("train.sh"))
