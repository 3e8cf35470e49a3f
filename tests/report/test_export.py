"""Exporting the winner: the script runs exactly the rebuilt command, quoting survives hostile values."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from bracket.cli import main
from bracket.report.export import ExportError, export_run, promote_weights, safe_env, script_command, shell_script
from bracket.trainer.base import RunRequest


def _array(text: str) -> list[str]:
    lines = text.splitlines()
    start, end = lines.index("cmd=("), len(lines) - 1 - lines[::-1].index(")")
    return shlex.split("\n".join(lines[start + 1:end]))


def test_script_command_is_the_rebuilt_launch_spec(opened, demo_session, tmp_path):
    result = export_run(opened, run_id=1, steps=37, out=tmp_path / "exp")
    run = opened.store.get_run(1)
    spec = opened.trainer.prepare_run(RunRequest(
        run_dir=tmp_path / "exp" / "run", knobs=opened.trainer.config_from_dict(run["params"]),
        dataset=Path(opened.parts.fields["dataset"]), max_steps=37, seed=run["seed"],
        sample_prompts=opened.settings.prompts(), sample_every_n_steps=opened.settings.sample_every_n_steps))
    text = result.script.read_text()
    assert _array(text) == spec.cmd == result.command == script_command(text)
    assert result.command[result.command.index("--max_train_steps") + 1] == "37"
    assert str(demo_session.script) in result.command  # the metacharacter path is one argument
    assert f"cd -- {shlex.quote(str(spec.cwd))}" in text and os.access(result.script, os.X_OK)
    config = json.loads(result.json_path.read_text())
    assert config["command"] == spec.cmd and config["knobs"]["learning_rate"] == run["params"]["learning_rate"]
    import tomllib
    assert tomllib.loads(result.toml_path.read_text())["steps"] == 37


def test_exported_script_runs_and_metacharacters_stay_literal(opened, demo_session, tmp_path):
    result = export_run(opened, steps=12, out=tmp_path / "exp")
    log = tmp_path / "argv.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRACKET_FAKE")}
    env["BRACKET_FAKE_PYTHON_LOG"] = str(log)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    done = subprocess.run(["bash", str(result.script)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    argv = json.loads(log.read_text().splitlines()[0])
    assert argv == result.command[1:]
    assert (result.cwd / "output" / "demo.safetensors").is_file()
    for root in (demo_session.tmp, tmp_path, Path.cwd()):
        assert not list(root.rglob("PWNED*")), "a metacharacter was executed by the shell"


def test_shell_script_quotes_hostile_values(tmp_path):
    hostile = ["a; rm -rf ~", "$(rm -rf ~)", "`id`", "it's", "", "two  spaces", "new\nline", ")", "*", "~",
               "--flag=$HOME", "\\", "'\"'"]
    text = shell_script(["python", *hostile], Path("/tmp/a b;c"), {"X": "$(id)"})
    assert _array(text) == ["python", *hostile]
    lines = text.splitlines()
    assert shlex.split(next(line for line in lines if line.startswith("cd "))) == ["cd", "--", "/tmp/a b;c"]
    assert shlex.split(next(line for line in lines if line.startswith("export "))) == ["export", "X=$(id)"]
    # bash itself hands the (harmless) payloads over as literal arguments
    safe = [f"x; touch {tmp_path}/P1", f"$(touch {tmp_path}/P2)", f"`touch {tmp_path}/P3`", "it's", "", "a\nb"]
    script = tmp_path / "t.sh"
    script.write_text(shell_script([sys.executable, "-c", "import json,sys; print(json.dumps(sys.argv[1:]))", *safe],
                                   tmp_path, {"X": f"$(touch {tmp_path}/P4)"}))
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=30, check=True)
    assert json.loads(done.stdout) == safe and not list(tmp_path.glob("P*"))


def test_secrets_are_not_written_into_the_environment():
    env = {"HF_TOKEN": "hf_abc", "OMP_NUM_THREADS": "1", "SAME": "x", "NEW": "y", "DB": "postgresql://u:pw@h/db",
           "WANDB_API_KEY": "k"}
    needed, dropped = safe_env(env, base={"SAME": "x", "OMP_NUM_THREADS": "1"})
    assert needed == {"NEW": "y", "OMP_NUM_THREADS": "1"} and dropped == ["DB", "HF_TOKEN", "WANDB_API_KEY"]
    text = shell_script(["python"], Path("."), needed, dropped_env=dropped)
    assert "hf_abc" not in text and "pw@" not in text and "# HF_TOKEN is not written here" in text


def test_cli_report_and_export_print_the_paths_they_wrote(demo_session, tmp_path, capsys):
    assert main(["report", str(demo_session.folder)]) == 0
    out = capsys.readouterr().out
    report = demo_session.folder / "report"  # where the app's Results tab writes it too
    assert f"wrote {report / 'report.md'}" in out and f"wrote {report / 'report.html'}" in out
    assert main(["export", str(demo_session.folder), "--steps", "15", "--out", str(tmp_path / "x")]) == 0
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 'x' / 'train.sh'}" in out and (tmp_path / "x" / "config.toml").is_file()
    assert "--max_train_steps 15" in shlex.join(script_command((tmp_path / "x" / "train.sh").read_text()))
    # its header says how to make it again, with the session's own folder (it read SESSION_FOLDER)
    header = (tmp_path / "x" / "train.sh").read_text()
    assert f"# Re-create with: python -m bracket export {shlex.quote(str(demo_session.folder))} --run " in header
    assert main(["export", str(demo_session.folder), "--run", "999"]) == 2
    assert "Run 999 is not a training run" in capsys.readouterr().err


def test_promote_weights_copies_the_trained_model(opened, tmp_path):
    copies = promote_weights(opened, 1, tmp_path / "keep")
    assert [p.name for p in copies] == ["demo.safetensors"] and copies[0].is_file()
    with pytest.raises(ExportError, match="no weight files"):
        promote_weights(opened, 3, tmp_path / "none")  # the run that exited 1 saved nothing


def test_the_report_and_export_leave_out_the_same_secrets(monkeypatch):
    """One rule (bracket.report.redaction) for both: a name the export keeps out of train.sh is a setting
    or field the report leaves out, and a URL's password is hidden in both."""
    from bracket.report import redaction
    from bracket.report.redaction import known_secrets, looks_secret, scrub, without_secrets

    monkeypatch.setattr(redaction.app_settings, "env", lambda name, default="": "")  # no .env secrets here

    names = ["HF_TOKEN", "api_key", "WANDB_API_KEY", "db_password", "AUTH", "learning_rate", "dataset", "NEW"]
    values = {name: f"value-of-{name}" for name in names}
    _, dropped = safe_env(values, base={})
    shown = without_secrets(values)
    assert set(dropped) == {n for n in names if n not in shown} == {n for n in names if looks_secret(n)}
    assert set(shown) == {"learning_rate", "dataset", "NEW"}
    url = "postgresql://bob:hunter22@db.invalid/x"
    assert safe_env({"DB": url}, base={})[1] == ["DB"] and without_secrets({"storage": url}) == {
        "storage": "postgresql://bob:***@db.invalid/x"}
    assert scrub("key sk-secret-123 and sk-secret-1234", ["sk-secret-123", "sk-secret-1234", "ab"]) == "key *** and ***"

    class _Session:  # what known_secrets reads
        settings = type("S", (), {"vlm": {"api_key": "sk-vlm-key"}})()
        store = type("St", (), {"url": url})()

    assert known_secrets(_Session()) == ["sk-vlm-key", "hunter22"]


def test_the_app_and_the_cli_share_one_export_folder_without_clobbering(demo_session, tmp_path, monkeypatch):
    """The Results tab's working export of the winner and `bracket export` (from another folder, with a
    relative session path) write into ``<session>/export``: the CLI's export of the winner is the app's,
    byte for byte, and the CLI's export of another run of the same config and length leaves it alone."""
    from bracket.app.results import winner_command
    from bracket.session import Session
    from bracket.standings import standings

    session = Session.open(demo_session.folder, validate=False)
    try:
        winner = standings(session).winner
        app = winner_command(session, winner)
        same_config = [r["id"] for r in session.store.runs(session.name, with_series=False)
                       if r.get("config_id") == winner.config_id and r.get("stage") == winner.stage
                       and r["id"] != winner.run_id and r.get("status") == "done"]
    finally:
        session.close()
    assert same_config, "the fixture's finals train the winner's config with two seeds"
    folder = app.json_path.parent
    assert folder.parent == demo_session.folder / "export"
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    monkeypatch.chdir(demo_session.folder.parent.parent)
    relative = demo_session.folder.relative_to(demo_session.folder.parent.parent)
    assert main(["export", str(relative)]) == 0  # the winner again: the same files, unchanged
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
    assert main(["export", str(relative), "--run", str(same_config[0]), "--steps", str(app.steps)]) == 0
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
    assert json.loads(app.json_path.read_text())["run_id"] == winner.run_id
