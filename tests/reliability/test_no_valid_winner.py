"""``export``/``promote`` never hand out a disqualified or unfinished run (issue 16, item 13).

Sessions of real (fake-trainer) runs: every run disqualified (no loss logged), every run
failed (exit 1), and one disqualified beside one good run. With no valid winner both commands
refuse with one ``error:`` line (exit 2) and write or launch nothing; otherwise they take the
good run, never the disqualified one.
"""

from __future__ import annotations

import pytest

from bracket.cli import main
from tests.fakes import write_fake_plan
from tests.reliability.rel_helpers import cli_args, launches

pytestmark = pytest.mark.timeout(240)


def _session(fields, runs_dir, tmp_path, monkeypatch, name: str, plan: list[str]):
    monkeypatch.setenv("BRACKET_FAKE_PLAN", str(write_fake_plan(tmp_path / f"{name}.json", plan)))
    main(["run", "--preset", "demo-cpu", *cli_args(fields), "--budget", "2", "--steps", "4", "--name", name,
          "--out", str(runs_dir), "--quiet", "--no-lr-bracket"])
    return runs_dir / name


@pytest.mark.parametrize("plan", [["noevents", "noevents"], ["exit1", "exit1"]], ids=["disqualified", "failed"])
def test_no_valid_winner_is_refused(plan, fast_fields, runs_dir, tmp_path, monkeypatch, capsys, argv_log):
    folder = _session(fast_fields, runs_dir, tmp_path, monkeypatch, "none", plan)
    launched = len(launches(argv_log))
    capsys.readouterr()
    for command in (["export", str(folder)], ["promote", str(folder), "--steps", "8"]):
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
        assert ("has no usable run" in err or "there is no winner" in err) and "--run ID" in err, err
    assert not (folder / "export").exists() and not (folder / "promote").exists()
    assert len(launches(argv_log)) == launched, "promote launched nothing"


def test_a_disqualified_run_is_never_the_winner(fast_fields, runs_dir, tmp_path, monkeypatch, capsys):
    folder = _session(fast_fields, runs_dir, tmp_path, monkeypatch, "mixed", ["noevents", "ok"])
    capsys.readouterr()
    assert main(["export", str(folder)]) == 0
    assert "exported run 2 " in capsys.readouterr().out
