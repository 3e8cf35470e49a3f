"""A one-seed session reads its ± the same way wherever a person reads it (issue 43, item 1).

Seen at the last stop: with one seed per config each headline carried a ± (the loss judge's noise
floor) while the verdict said "with fewer than 2 seeds per config no significance claim is
possible" and the report and ``status --json`` noted "no significance claim is possible". Now
the ± says it is the floor's, and the verdict, the stage's note, ``status`` (text and ``--json``),
the report, the app's Results tab and the export header say it in the same words (a real search
through the CLI, the fake trainer)."""

from __future__ import annotations

import json

import pytest

from bracket import cli
from bracket.report import write_report
from bracket.session import Session
from bracket.standings.interval import FLOOR_LABEL, FLOOR_ONLY

pytestmark = pytest.mark.timeout(240)


def _cli(capsys, *args: str) -> str:
    capsys.readouterr()
    assert cli.main(list(args)) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_one_seed_each_says_the_floor_in_status_json_report_app_and_export(capsys, demo_fields, runs_dir):
    sets = [arg for name, value in demo_fields.items() for arg in ("--set", f"{name}={value}")]
    _cli(capsys, "run", "--preset", "demo-cpu", *sets, "--budget", "3", "--steps", "8", "--seeds", "1",
         "--name", "one-seed", "--out", str(runs_dir), "--quiet")
    folder = runs_dir / "one-seed"
    data = json.loads(_cli(capsys, "status", str(folder), "--json"))
    rows = data["stages"]["search"]["rows"]
    shown = {row["name"]: row["headline"] for row in rows if row["headline_parts"]["loss"]["margin"] is not None}
    assert len(shown) == 2, rows  # the two configs beside the baseline
    assert all(f"({FLOOR_LABEL})" in text or f", {FLOOR_LABEL})" in text for text in shown.values()), shown
    assert all(row["headline_parts"]["loss"]["freedom"] == 0 for row in rows if row["name"] in shown)
    verdict = data["verdict"]
    assert FLOOR_ONLY in verdict and "no significance claim" not in verdict and "p = " not in verdict
    assert data["stages"]["search"]["notes"] == [FLOOR_ONLY]

    text = _cli(capsys, "status", str(folder))
    assert f"verdict: {verdict}" in text and "no significance claim" not in text
    for name, line in shown.items():
        assert f"best step of {name}: " in text and line in text, (name, line)

    session = Session.open(folder, validate=False)
    try:
        markdown = write_report(session).markdown.read_text(encoding="utf-8")
    finally:
        session.close()
    assert verdict in markdown and f"Note: {FLOOR_ONLY}." in markdown and "no significance claim" not in markdown
    assert all(line in markdown for line in shown.values())

    from bracket.app.manager import SessionManager
    from ui import results_tab

    manager = SessionManager(runs_dir, snapshot_ttl=0.0)
    manager.open(folder)
    board, said, *_ = results_tab.refresh(manager)
    assert verdict in said and set(shown.values()) <= set(board["headline"])

    # the export header of a config with a ± (the winner may be the baseline, which has none)
    row = next(row for row in rows if row["name"] in shown)
    out = _cli(capsys, "export", str(folder), "--run", str(row["runs"][0]["run_id"]),
               "--out", str(runs_dir / "exported"))
    script = (runs_dir / "exported" / "train.sh").read_text(encoding="utf-8")
    assert f"# config {row['name']!r}: {shown[row['name']]}" in script, (out, script[:800])
