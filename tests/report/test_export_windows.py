"""``export`` writes train.ps1 beside train.sh: the same command, folder and environment, no secret."""

from __future__ import annotations

from bracket.cli import main
from bracket.report.export import export_run, script_command
from tests.reliability.ps_parse import read_launcher
from tests.report.conftest import SECRETS


def test_train_ps1_is_the_twin_of_train_sh(opened, demo_session, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_not_in_any_script")
    result = export_run(opened, run_id=1, steps=21, out=tmp_path / "exp")
    assert result.windows_script == tmp_path / "exp" / "train.ps1"
    launcher = read_launcher(result.windows_script)
    assert [launcher["program"], *launcher["arguments"]] == result.command == script_command(result.script.read_text())
    assert str(demo_session.script) in launcher["arguments"], "the metacharacter path is one argument"
    assert launcher["cwd"] == str(result.cwd)
    assert launcher["env"] == result.env
    text = launcher["text"]
    for secret in (*SECRETS, "hf_not_in_any_script"):
        assert secret not in text


def test_cli_export_prints_the_windows_launcher(demo_session, tmp_path, capsys):
    assert main(["export", str(demo_session.folder), "--steps", "9", "--out", str(tmp_path / "w")]) == 0
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 'w' / 'train.ps1'}" in out
    assert "--max_train_steps" in read_launcher(tmp_path / "w" / "train.ps1")["arguments"]
