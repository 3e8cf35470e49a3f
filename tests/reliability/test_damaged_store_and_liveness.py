"""A damaged store and a killed search, as the app's list and the CLI show them (issue 35,
items 7 and 9).

Item 7: beside a good session, copies whose store has a garbled row (a value that is not JSON)
or a dropped table. The app's past-sessions list lists every folder — the good one with its
status, each damaged one as ``damaged: …`` with the reason — and the good one still opens and
resumes; ``status``, ``report``, ``export`` and ``resume`` on a damaged one print one
``error:`` line, no traceback.

Item 9: a search SIGKILLed in the middle of a run: the app's list and ``status`` say
"interrupted" alike (one liveness rule, ``recovery.shown_status``).
"""

from __future__ import annotations

import shutil
import signal
import sqlite3

import pytest

from bracket.app.manager import SessionManager
from bracket.cli import main
from tests.reliability.rel_helpers import bracket_process, cli_args, dead, kill_now, kill_tree_now, read_pid, wait_for

pytestmark = pytest.mark.timeout(240)

DAMAGE = {
    "garbled-settings": "UPDATE bracket_sessions SET settings_json = '{garbled'",
    "garbled-run": "UPDATE bracket_runs SET params_json = '[not json'",
    "dropped-runs": "DROP TABLE bracket_runs",
    "dropped-sessions": "DROP TABLE bracket_sessions",
}


def _damage(folder, sql: str) -> None:
    connection = sqlite3.connect(folder / "bracket.db")
    try:
        connection.execute(sql)
        connection.commit()
    finally:
        connection.close()


def test_a_damaged_store_is_listed_as_damaged_and_each_command_says_one_line(fast_fields, runs_dir, capsys):
    assert main(["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "2", "--steps", "3",
                 "--name", "good", "--out", str(runs_dir), "--quiet"]) == 0
    good = runs_dir / "good"
    for name, sql in DAMAGE.items():
        shutil.copytree(good, runs_dir / name)
        _damage(runs_dir / name, sql)
    capsys.readouterr()

    manager = SessionManager(runs_dir, allow_custom_executables=True)
    listed = {info.folder.name: info for info in manager.list_sessions()}
    assert set(listed) == {"good", *DAMAGE}
    assert listed["good"].status == "finished" and listed["good"].runs_spent == 2
    for name in DAMAGE:
        assert listed[name].status.startswith("damaged: "), (name, listed[name].status)
        assert listed[name].label
    manager.open(good)  # the others open
    assert len(manager.snapshot().runs) == 2
    manager.close()

    outcomes: dict[tuple[str, str], int] = {}
    for name in DAMAGE:
        for command in (["status"], ["report"], ["export"], ["resume", "--quiet"]):
            try:
                code = main([command[0], str(runs_dir / name), *command[1:]])
            except SystemExit as exit_:
                code = exit_.code
            err = capsys.readouterr().err
            outcomes[name, command[0]] = code
            assert "Traceback" not in err, (name, command, err)
            if code == 0:  # e.g. status from its kept view, which does not read the garbled row
                continue
            assert code in (1, 2), (name, command, err)
            assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, (name, command, err)
    assert sum(code != 0 for code in outcomes.values()) >= len(DAMAGE) * 3, outcomes
    assert main(["resume", str(good), "--more-runs", "1", "--quiet"]) == 0  # the others resume
    assert main(["status", str(good)]) == 0


def test_a_killed_search_is_interrupted_in_the_app_and_in_status(fast_fields, runs_dir, tmp_path, capsys):
    args = ["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "2", "--steps", "5",
            "--name", "killed", "--out", str(runs_dir), "--quiet"]
    process = bracket_process(args, {"BRACKET_FAKE_MODE": "hang"}, tmp_path / "bracket.log")
    folder = runs_dir / "killed"
    trainer = None
    try:
        trainer = read_pid(wait_for(lambda: next(folder.glob("trials/*/output/trainer.pid"), None), 90, "a run"))
        process.send_signal(signal.SIGKILL)
        process.wait(30)
    finally:
        kill_tree_now(process)
        if trainer is not None:  # the hung trainer outlives the killed search (that is the point): end it here
            kill_now(trainer)
            wait_for(lambda: dead(trainer), 30, "the hung trainer gone")
    manager = SessionManager(runs_dir, allow_custom_executables=True)
    listed = {info.folder.name: info for info in manager.list_sessions()}
    manager.close()
    assert main(["status", str(folder)]) == 0
    said = capsys.readouterr().out.splitlines()[0]
    assert "interrupted" in said, said
    assert listed["killed"].status.startswith("interrupted"), listed["killed"].status


#: rows whose JSON or number columns have the wrong type or range (issue 44, item 6)
WRONG_TYPES = {
    "fields-a-string": "UPDATE bracket_sessions SET fields_json = '\"x\"'",
    "fields-not-text": "UPDATE bracket_sessions SET fields_json = '{\"dataset\": 5}'",
    "settings-a-list": "UPDATE bracket_sessions SET settings_json = '[]'",
    "budget-lots": "UPDATE bracket_sessions SET settings_json = json_set(settings_json, '$.budget', 'lots')",
    "steps-huge": "UPDATE bracket_sessions SET settings_json = json_set(settings_json, '$.steps', 1e300)",
    "pause-four": "UPDATE bracket_runs SET pause_step = 'four'",
    "pause-huge": "UPDATE bracket_runs SET pause_step = 25000000000000000",
    "loss-an-object": "UPDATE bracket_runs SET loss_json = '{\"a\": 1}'",
    "params-a-number": "UPDATE bracket_configs SET params_json = '7'",
    "value-text": "UPDATE bracket_configs SET value = 'good'",
}


def test_rows_of_the_wrong_type_or_range_say_one_line_for_every_command(fast_fields, runs_dir, capsys):
    assert main(["run", "--preset", "demo-cpu", *cli_args(fast_fields), "--budget", "2", "--steps", "3",
                 "--name", "good", "--out", str(runs_dir), "--quiet"]) == 0
    good = runs_dir / "good"
    for name, sql in WRONG_TYPES.items():
        shutil.copytree(good, runs_dir / name)
        _damage(runs_dir / name, sql)
        _damage(runs_dir / name, "DELETE FROM bracket_views")  # status reads the rows, not a view kept before
    capsys.readouterr()
    answered = []
    for name in WRONG_TYPES:
        for command in (["status"], ["status", "--json"], ["report"], ["export"], ["resume", "--quiet"],
                        ["resume", "--more-runs", "1", "--quiet"], ["finals", "--top", "1", "--seeds", "1"],
                        ["promote"]):
            code = main([command[0], str(runs_dir / name), *command[1:]])
            err = capsys.readouterr().err
            if code == 0 and not err:  # a command that never reads the damaged column (status: no loss series;
                answered.append((name, command[0]))  # resume of a finished search: its budget is spent)
                continue
            assert code == 2, (name, command, code, err)
            assert err.startswith("error: The session's store is damaged (") and len(err.strip().splitlines()) == 1, \
                (name, command, err)
    # the commands that read every row say it for every damage
    assert not [a for a in answered if a[1] in ("report", "export", "finals")], answered
    listed = {info.folder.name: info for info in SessionManager(runs_dir, allow_custom_executables=True)
              .list_sessions()}
    assert all(listed[name].status.startswith("damaged: ") for name in ("fields-a-string", "settings-a-list")), listed
    assert main(["status", str(good)]) == 0  # the good one is untouched
