"""The session report: sections, numbers that match the store, finals apart, no secrets, one HTML file."""

from __future__ import annotations

import re
import statistics

from bracket.report.document import build_report, render_markdown
from bracket.report.writing import write_report
from bracket.standings import importance, parameter_importance
from tests.report.conftest import SECRETS, STORE_PASSWORD

SECTIONS = ("Verdict", "Leaderboard (search runs)", "Finals (long runs, scored separately)", "Winner",
            "Parameter importance", "Loss curves", "Score history", "Samples: best and worst run",
            "Failed, disqualified and pruned runs", "Judges and weights", "Settings")


def _stage_runs(session, stage):
    configs = {c["id"] for c in session.store.configs(session.name, stage=stage)}
    return [r for r in session.store.runs(session.name) if r["config_id"] in configs]


def test_every_section_is_present_and_pictures_are_written_beside_the_markdown(opened):
    files = write_report(opened)
    markdown, page = files.markdown.read_text(), files.html.read_text()
    report = opened.folder / "report"  # one place, the app's and the CLI's
    assert files.markdown == report / "report.md" and files.html == report / "report.html"
    for title in SECTIONS:
        assert f"\n## {title}\n" in markdown
        assert f"<h2>{title}</h2>" in page
    stems = {p.stem for p in files.images}
    assert {"report-loss", "report-final-loss", "report-history", "report-best-samples",
            "report-worst-samples"} <= stems
    for name in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", markdown):
        assert (report / name).is_file(), name
    for path in files.images:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the sample grid has one 256-px tile per prompt (two prompts)
    from PIL import Image
    with Image.open(report / "report-best-samples.png") as grid:
        assert grid.width == 2 * 256


def test_leaderboard_winner_ratings_and_problems_match_the_store(opened):
    report = build_report(opened)
    scores = opened.scores()
    search_runs = _stage_runs(opened, "search")
    expected = {}
    for run in search_runs:
        if run["id"] in scores and scores[run["id"]].value is not None:
            expected.setdefault(run["config_id"], []).append(scores[run["id"]].value)
    means = {cid: statistics.fmean(v) for cid, v in expected.items()}
    rows = {r.config_id: r for r in report.search.rows}
    assert set(rows) == {c["id"] for c in opened.store.configs(opened.name, stage="search")}
    for cid, mean in means.items():
        assert abs(rows[cid].mean - mean) < 1e-12
        assert rows[cid].seeds == len(expected[cid])
        assert len(rows[cid].runs) == sum(1 for r in search_runs if r["config_id"] == cid)
    # the rating on run 1 counts for its config, and moved its score (human judge used)
    rated = next(r for r in search_runs if r["id"] == 1)["config_id"]
    assert rows[rated].ratings == 1 and "human" in scores[1].used
    # a rating of 9 is the only judgement: nothing unjudged outranks it (bracket.standings.evidence)
    assert report.search.rows[0].config_id == rated and report.search.rows[0].rank == 1
    assert report.search.stats.best.config_id == rated
    markdown = render_markdown(report)
    board = markdown.split("## Leaderboard (search runs)")[1].split("## Finals")[0]
    for cid in means:
        assert f"| {rows[cid].name} | {rows[cid].headline.text} |" in board  # its headline, as the app shows it
        if "loss" in rows[cid].figures:  # the raw figure stands beside the score
            assert f"loss {rows[cid].figures['loss']:.4g}" in board
    assert report.verdict in markdown and report.verdict.startswith("Best config is")
    # the failed run (exit 1) and the NaN run are listed with their reasons
    problems = {int(p[0]): p for p in report.problems}
    assert problems[3][3] == "failed"  # with the trainer's own error line, not just the exit code
    assert problems[3][4] == "RuntimeError: fake trainer failure (exit1) (exit code 1)"
    assert problems[4][3] in ("pruned", "disqualified") and "nan" in problems[4][4].lower()
    section = markdown.split("## Failed, disqualified and pruned runs")[1].split("## Judges")[0]
    assert "| 3 | adamw-fast seed 42 | search | failed | RuntimeError: fake trainer failure (exit1) (exit code 1) |" \
        in section
    judges = {row[0]: row for row in report.judges}
    assert judges["human"][1] == "2" and judges["loss"][1] == "1"
    # one run rated by a person; the human part is used there and wherever it was estimated
    assert judges["human"][2].startswith("1 of") and int(judges["human"][4]) == 1 + int(judges["human"][3])


def test_finals_have_their_own_section_and_are_never_mixed_with_search_scores(opened):
    report = build_report(opened)
    final_configs = {c["id"] for c in opened.store.configs(opened.name, stage="final")}
    final_runs = _stage_runs(opened, "final")
    assert report.finals is not None and len(final_runs) == 2
    assert {r.config_id for r in report.finals.rows} == final_configs
    assert not final_configs & {r.config_id for r in report.search.rows}
    assert not {r["id"] for r in final_runs} & {r["id"] for r in report.search.runs}
    scores = opened.scores()
    row = report.finals.rows[0]
    assert row.seeds == 2 and abs(row.mean - statistics.fmean(scores[r["id"]].value for r in final_runs)) < 1e-12
    # the same config's search row averages its search runs only (mixing in the finals would move it)
    same = next(r for r in report.search.rows if r.name == row.name)
    search_values = [scores[r["id"]].value for r in _stage_runs(opened, "search")
                     if r["config_id"] == same.config_id and r["id"] in scores]
    assert same.mean == statistics.fmean(search_values)
    assert same.mean != statistics.fmean(search_values + [scores[r["id"]].value for r in final_runs])
    # the finals decide the winner; its command runs the final's step count
    assert report.winner.stage == "final" and report.winner.run_id in {r["id"] for r in final_runs}
    assert report.command[report.command.index("--max_train_steps") + 1] == "20"
    markdown = render_markdown(report)
    finals = markdown.split("## Finals (long runs, scored separately)")[1].split("## Winner")[0]
    assert report.finals.verdict in finals and "| 2 / 2 |" in finals


def test_html_is_self_contained(opened):
    page = write_report(opened).html.read_text()
    links = re.findall(r"""\b(?:src|href)\s*=\s*["']([^"']*)["']""", page, flags=re.IGNORECASE)
    assert len([u for u in links if u.startswith("data:image/png;base64,")]) >= 5
    assert all(u.startswith("data:") for u in links), [u[:40] for u in links if not u.startswith("data:")]
    assert "<script" not in page.lower() and "<link" not in page.lower() and "url(" not in page


def test_no_secret_reaches_the_report(demo_session):
    for text in (demo_session.live_markdown, demo_session.live_html):
        for secret in SECRETS:
            assert secret not in text
    assert "bob:***@db.invalid" in demo_session.live_markdown
    assert STORE_PASSWORD not in (demo_session.folder / "report" / "report.md").read_text()


def test_importance_is_one_method_on_current_scores_with_a_warning_below_the_minimum(opened):
    values, note = importance(opened)
    assert values and set(values) <= set(opened.space.searched())
    assert abs(sum(values.values()) - 1.0) < 1e-6 and "PED-ANOVA" in note
    assert "Warning: fewer than 8 configs" in note  # two configs only: a hint, not a finding
    assert parameter_importance([], opened.space) == (
        {}, "Parameter importance needs at least 2 scored search configs; there are 0.")


def test_a_session_without_runs_gets_a_report_that_says_so(demo_fields, runs_dir, monkeypatch):
    from bracket.session import SearchSettings, Session
    from bracket.trainer.demo.adapter import DemoLoRA

    monkeypatch.setattr(DemoLoRA, "preflight_problems", lambda self: [])
    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=2, steps=5), out_dir=runs_dir)
    try:
        files = write_report(session)
    finally:
        session.close()
    markdown = files.markdown.read_text()
    assert files.images == [] and "No config has a finished score yet" in markdown
    assert "No final runs yet" in markdown and "No loss was logged." in markdown
    assert "Parameter importance needs at least 2 scored search configs" in markdown


def test_the_stats_interval_is_clipped_to_the_score_range():
    """Seen in review: the report printed "0.160 ± 2.689" (reaching below 0 and above 1) where the
    app printed "0.000 – 1.000". One rule clips every interval to the score range [0, 1]."""
    from bracket.stats import ConfigScores, summarise_config

    two_seeds = summarise_config(ConfigScores(1, "a", "search", [0.02, 0.30]))  # t with 1 df: very wide
    assert (two_seeds.ci_low, two_seeds.ci_high) == (0.0, 1.0)
    narrow = summarise_config(ConfigScores(2, "b", "search", [0.30, 0.31, 0.32]))
    assert 0.0 < narrow.ci_low < 0.30 and 0.32 < narrow.ci_high < 1.0  # inside the range: unchanged


def test_the_report_shows_the_headline_the_app_and_status_show(demo_session, opened):
    from bracket.report.document import build_report, render_markdown
    from bracket.standings import standings
    from bracket.status import winner_lines

    table = standings(opened)
    text = render_markdown(build_report(opened))
    rows = [r for board in table.boards.values() for r in board.rows if r.mean is not None]
    assert rows and all(r.headline.text in text for r in rows)
    assert table.winner.headline.text in winner_lines(table)[0] and table.winner.headline.text in text
    assert "quality" not in text.lower().replace("image quality", "").replace("image_quality", "")


def test_report_prints_no_optuna_chatter_on_stderr(demo_session, tmp_path):
    """Optuna is imported lazily now; wherever it is first imported (here: parameter importance's
    in-memory study), its INFO line "A new study created in memory" must stay off stderr, which
    a command keeps for its one ``error:`` line and warnings."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "bracket", "report", str(demo_session.folder),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "A new study created" not in done.stderr and "[I " not in done.stderr, done.stderr


def test_an_importance_warning_of_optuna_is_in_the_note_not_on_stderr(capfd):
    import warnings

    from bracket.registry import get_preset
    from bracket.standings import ConfigRow

    trainer = get_preset("demo-cpu").trainer_factory({})
    space = trainer.session_space({}, steps=60)
    base = {k: v for k, v in trainer.baseline_config().knobs.items() if k != "lr_warmup_steps"}
    knobs = [{"lr_scheduler": "constant", "learning_rate": rate} for rate in (1e-4, 2e-4, 3e-4)]
    # the one config with a warm-up: that knob's "set" regime holds a single config
    knobs.append({"lr_scheduler": "cosine", "learning_rate": 1e-3, "lr_warmup_steps": 5})
    rows = [ConfigRow(i + 1, i, i, f"c{i}", "search", "search", 0.1 * (i + 1), None, None, 1, 0, {**base, **k}, [])
            for i, k in enumerate(knobs)]
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # as a plain `python -m bracket report` shows them
        values, note = parameter_importance(rows, space)
    assert values and "Optuna: Some regimes for parameter `lr_warmup_steps` have less than 2 trials" in note
    assert "UserWarning" not in capfd.readouterr().err


def test_the_report_draws_the_rank_history_the_app_draws(opened, monkeypatch):
    """Seen in review: the report plotted each run's combined score on 0–1 (internal, docs/SCORING.md)
    while the app's Results tab draws each config's leaderboard rank: both draw the same points now."""
    import bracket.report.document as document
    from bracket.standings import standings
    from bracket.standings.history import rank_history

    drawn: list = []
    real = document.history_chart
    monkeypatch.setattr(document, "history_chart", lambda points: drawn.append(list(points)) or real(points))
    files = write_report(opened)
    table = standings(opened)
    board_ranks = {row.name: row.rank for row in table.board("search").rows if row.rank is not None}
    assert drawn and drawn[0] == rank_history(table)
    assert {p["config"]: p["rank"] for p in drawn[0]} == board_ranks
    assert [p["best_rank"] for p in drawn[0]] == [min(p["rank"] for p in drawn[0][:i + 1])
                                                   for i in range(len(drawn[0]))]
    assert "report-history" in {p.stem for p in files.images}
    assert "Rank of each config" in files.markdown.read_text()


def test_the_best_step_table_gives_the_loss_that_scores_on_the_app_charts_scale(opened):
    """Seen in review (issue 43): the report's best-step table printed each config's steps rescaled to its own
    1.00 … 0.00 (every config read 1.00 at its first sampled step), while the app's chart draws the loss that
    scores, one scale for all configs. The report gives that loss at each sampled step, the best step starred."""
    from bracket.standings import standings

    report = build_report(opened)
    rows = {r.name: r for r in standings(opened).board("search").rows if r.rank is not None}
    assert report.best_steps and len(report.best_steps) == len(rows) and any(r.step_loss for r in rows.values())
    for name, best, _basis, cells in report.best_steps:
        row = rows[name]
        if not row.step_loss:  # a config whose runs logged no loss at a sampled step
            assert cells == "no loss per step"
            continue
        shown = {int(step): cell for step, cell in (c.split(": ") for c in cells.split(", "))}
        assert set(shown) == set(row.step_loss) and len(shown) >= 2
        for step, cell in shown.items():
            assert abs(float(cell.removesuffix(" ★")) - row.step_loss[step]) <= 1e-3 * abs(row.step_loss[step])
            assert cell.endswith(" ★") == (step == row.best_step) and best == str(row.best_step)
    assert "| config | best step | based on | loss per step |" in render_markdown(report)
