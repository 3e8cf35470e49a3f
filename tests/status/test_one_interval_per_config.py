"""One config's interval reads the same everywhere (issue 43, seen in review): on a finished session
of two seeds per config, ``status`` printed "± 14 %" on each of a config's run rows and "± 12 %" on
its best-step line — the headline's formula over one run against over the config's two. A run row
now says its own seed's change without an interval; the config's ``±`` is one number in ``status``,
its ``--json``, the report and the app's leaderboard."""

from __future__ import annotations

import json
import re

import pytest

from bracket import cli
from bracket.report import write_report
from bracket.session import Session
from bracket.standings.run_reading import SEED_WORDS

pytestmark = pytest.mark.timeout(240)

_INTERVAL = re.compile(r"± ([0-9.]+) %")


def _sets(fields: dict[str, str]) -> list[str]:
    return [arg for name, value in fields.items() for arg in ("--set", f"{name}={value}")]


def _status(capsys, *args: str) -> str:
    capsys.readouterr()
    assert cli.main(["status", *args]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_run_rows_show_no_interval_and_each_config_reads_one(capsys, demo_fields, runs_dir):
    code = cli.main(["run", "--preset", "demo-cpu", *_sets(demo_fields), "--budget", "6", "--steps", "8",
                     "--seeds", "2", "--name", "two-seeds", "--out", str(runs_dir), "--quiet"])
    assert code == 0, capsys.readouterr().err
    folder = runs_dir / "two-seeds"
    text = _status(capsys, str(folder))
    table, _, rest = text.partition("\nbest step of ")
    run_rows = [line for line in table.splitlines() if line[:4].strip().isdigit()]
    assert len(run_rows) == 6 and not any(_INTERVAL.search(line) for line in run_rows), table
    assert any(SEED_WORDS in line for line in run_rows), table  # the non-baseline runs say whose change it is
    # each config's interval, from its best-step line: the one it has on every other screen
    intervals = {m.group(1): m.group(2) for m in re.finditer(r"^(?:best step of )?(\S+): \d+ \(\w+\): .*?± ([0-9.]+) %",
                                                              "best step of " + rest, re.M)}
    assert len(intervals) == 2, rest  # the two configs beside the baseline

    data = json.loads(_status(capsys, str(folder), "--json"))
    rows = [row for stage in data["stages"].values() for row in stage["rows"]]
    for row in rows:
        found = set(_INTERVAL.findall(row["headline"]))
        assert found == ({intervals[row["name"]]} if row["name"] in intervals else set()), row["headline"]
        assert not any(_INTERVAL.search(run["headline"]) for run in row["runs"])

    session = Session.open(folder, validate=False)
    try:
        markdown = write_report(session).markdown.read_text(encoding="utf-8")
        from bracket.standings import standings
        from ui.render import leaderboard_frame  # the app's leaderboard, as the Results tab fills it

        app_rows = leaderboard_frame(list(standings(session).boards.values())).values.tolist()
    finally:
        session.close()
    for name, margin in intervals.items():
        lines = [line for line in markdown.splitlines() if f"| {name} |" in line and "±" in line]
        assert lines and all(set(_INTERVAL.findall(line)) == {margin} for line in lines), (name, lines)
        app = [str(cell) for row in app_rows if name in row for cell in row if "±" in str(cell)]
        assert app and all(set(_INTERVAL.findall(cell)) == {margin} for cell in app), (name, app)
    assert all(set(_INTERVAL.findall(line)) <= set(intervals.values()) for line in markdown.splitlines())
