"""The report and the export of a successive-halving search (rows written as the session loop
writes them): the report lists every config's rung and names the full-length winner; the export
picks the winner's full-length run — never the lower-rung config whose short run has the lowest
loss — and a paused run named by hand is exported at the full length of its schedule."""

from __future__ import annotations

import json

import pytest

from bracket.cli import main
from bracket.report import export_run
from bracket.report.document import build_report, render_markdown
from bracket.session import Session
from tests.fakes.halving_rows import FULL, halving_session

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def halved(runs_dir, demo_fields):
    folder, ids = halving_session(runs_dir, demo_fields)
    session = Session.open(folder, validate=False)
    yield session, ids
    session.close()


def test_the_report_lists_each_configs_rung_and_names_the_full_length_run(halved):
    session, ids = halved
    report = build_report(session)
    assert report.winner.run_id == ids["search-0"] and report.winner.full_length
    assert report.rung_plan == "rungs 1/9 → 1/3 → full, the top 1/3 at each go on"
    assert [r[:3] for r in report.rungs] == [["search-0", "full", "full"], ["search-3", "1/9", "running to 1/3"],
                                             ["search-2", "1/9", "paused at 1/9"],
                                             ["search-1", "1/9", "stopped at 1/9 (5 of 7, top 2 go on)"]]
    text = render_markdown(report)
    section = text.split("## Rungs (successive halving)", 1)[1].split("\n## ", 1)[0]
    assert "the answer is a full-length run" in section
    assert f"run {ids['search-2']} paused at step 10 of 90, state saved" in section
    assert "promoted: 1 of 7 at 1/9, top 2 go on to 1/3" in section
    winner = text.split("## Winner", 1)[1].split("\n## ", 1)[0]
    assert f"full-length run {ids['search-0']}, {FULL} steps" in winner


def test_the_export_is_the_winners_full_length_run(halved, tmp_path, capsys):
    session, ids = halved
    result = export_run(session, out=tmp_path / "winner")
    assert (result.run_id, result.config_name, result.steps) == (ids["search-0"], "search-0", FULL)
    document = json.loads(result.json_path.read_text())
    assert document["rung"] == "full" and document["steps"] == FULL
    assert "# successive halving: full" in result.script.read_text()
    assert main(["export", str(session.folder), "--out", str(tmp_path / "cli")]) == 0
    assert f"exported run {ids['search-0']} (search-0, {FULL} steps)" in capsys.readouterr().out


def test_a_paused_run_exports_at_the_full_length_of_its_schedule(halved, tmp_path):
    session, ids = halved
    result = export_run(session, run_id=ids["search-2"], out=tmp_path / "paused")
    assert result.steps == FULL  # its schedule's length, not the rung it paused at
    script = result.script.read_text()
    assert f"# successive halving: paused at 1/9; run {ids['search-2']} paused at step 10 of 90, state saved" in script
    assert json.loads(result.json_path.read_text())["rung"] == "paused at 1/9"
