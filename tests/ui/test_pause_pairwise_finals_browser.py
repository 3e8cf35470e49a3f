"""The app's round 2 in a real browser (Debian's Chromium via Playwright, like test_ui_browser).

The demo preset with the fake trainer: a plan that reaches TPE is shown before Start, the
search is paused (the tab says paused, the button Resume) and resumed, and the Search tab
says where the search is in its plan. On Compare, an arrow key outside pairwise mode
records nothing; inside it (checkbox ticked, focus in the panel) it votes, and Undo takes
the vote back; the grid's columns sort by learning rate. On Results, finals run from a button
with a steps field, the winner is exported, a reload stays on Results, and the linked
report.html opens. Screenshots go to test-output/ui-round2/.
"""

from __future__ import annotations

import re

import pytest

from tests.fakes import FAKE_TRAINER
from tests.fakes.browser_page import ARGS, CHROMIUM, open_app, press_start

#: the grid's column headers are in the order of their learning rates (the sorted grid is there)
SORTED_BY_LR = """() => {
  const rates = [...document.querySelectorAll('#bk-grid thead th[title]')]
    .map((th) => Number((th.innerText.match(/learning_rate=([0-9.e+-]+)/) || [])[1]));
  return rates.length >= 2 && rates.every((rate, i) => !Number.isNaN(rate) && (i === 0 || rates[i - 1] <= rate));
}"""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]


def comparisons(runs_dir) -> list[dict]:
    """The pairwise votes stored in the one session of ``runs_dir``."""
    from bracket.session.store import open_session_store

    store, name = open_session_store(next(p.parent for p in runs_dir.rglob("session.json")))
    try:
        return store.comparisons(name)
    finally:
        store.close()


def test_plan_pause_pairwise_mode_finals_export_report(demo_app, output_dir):
    from playwright.sync_api import expect, sync_playwright

    shots = output_dir / "ui-round2"
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = open_app(browser, demo_app.url)
        script = page.locator("#bk-field-train_script textarea, #bk-field-train_script input")
        script.fill(str(FAKE_TRAINER))
        script.press("Tab")
        # Setup: the demo's quick start reaches TPE past the shape draws, and the plan says so before Start
        expect(page.locator("#bk-budget input")).to_have_value("16")
        expect(page.locator("#bk-plan")).to_contain_text(
            "baseline, 3 curated, 2 LR bracket, 4 shape draws, 2 TPE, 4 confirm")
        page.locator("#bk-steps input").fill("30")
        page.locator("#bk-steps input").press("Tab")
        page.screenshot(path=str(shots / "1-setup-plan.png"), full_page=True)
        press_start(page)

        # Search: pause shows as paused with Resume; resume goes on to the end, through TPE
        pause = page.locator("#bk-pause")
        expect(pause).to_be_enabled()
        pause.click()
        expect(page.locator("#bk-status")).to_contain_text("status paused")
        expect(pause).to_have_text("Resume")
        expect(page.locator("#bk-resume")).to_be_disabled()
        page.screenshot(path=str(shots / "2-paused.png"), full_page=True)
        pause.click()
        expect(page.locator("#bk-control-status")).to_contain_text("Resumed")
        expect(page.locator("#bk-progress")).to_contain_text("16 / 16 runs", timeout=300_000)
        expect(page.locator("#bk-status")).to_contain_text("finished")
        expect(page.locator("#bk-status")).to_contain_text("shape draws 4/4 ✓ · TPE 2/2 ✓")
        expect(page.locator("#bk-status")).not_to_contain_text("processing")
        page.screenshot(path=str(shots / "3-search-finished.png"), full_page=True)

        # Compare: an arrow key outside pairwise mode records nothing; inside it votes; undo
        page.get_by_role("tab", name="Compare").click()
        page.locator("#bk-next-unrated").click()  # the grid, its columns sorted by learning rate
        expect(page.locator("#bk-grid table.bk-grid img").first).to_be_visible()
        page.locator("#bk-sort input").click()
        page.get_by_role("option", name="learning_rate").click()
        heads = page.locator("#bk-grid thead th[title]")
        expect(heads.first).to_contain_text("learning_rate=")
        page.wait_for_function(SORTED_BY_LR)  # the headers name learning rates before the sort too
        rates = [float(re.search(r"learning_rate=([0-9.e+-]+)", t).group(1)) for t in heads.all_inner_texts()]
        assert rates == sorted(rates) and len(rates) >= 2
        page.screenshot(path=str(shots / "4a-grid-by-learning-rate.png"), full_page=True)
        page.locator("#bk-next-pair").click()
        expect(page.locator("#bk-pair img")).to_have_count(2 * 4)
        page.locator("body").click(position={"x": 5, "y": 5})
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("1")  # outside pairwise mode: no vote (the store holds only the last vote at the end)
        expect(page.locator("#bk-pair-status")).not_to_contain_text("Saved")
        page.locator("#bk-pair-mode input").check()  # the focus is now in the pairwise panel
        page.keyboard.press("ArrowLeft")
        expect(page.locator("#bk-pair-status")).to_contain_text("left is better")
        page.screenshot(path=str(shots / "4-pairwise-mode.png"), full_page=True)
        page.locator("#bk-pair-undo").click()
        expect(page.locator("#bk-pair-status")).to_contain_text("Undone")
        page.keyboard.press("ArrowRight")  # the undo button is in the panel: still pairwise mode
        expect(page.locator("#bk-pair-status")).to_contain_text("right is better")
        # one vote stored, the last: the keys outside pairwise mode voted nothing (a vote they sent would
        # be stored before the later ones: the votes are answered in turn) and the undo took its vote back
        assert [c["winner"] for c in comparisons(demo_app.runs_dir)] == ["right"]

        # Results: finals from a button with a steps field, export, the linked report
        page.get_by_role("tab", name="Results").click()
        page.locator("#bk-results-refresh").click()
        expect(page.locator("#bk-leaderboard")).to_contain_text("baseline")
        page.locator("#bk-job-steps input").fill("30")
        page.locator("#bk-finals").click()
        expect(page.locator("#bk-job")).to_contain_text("finals: done", timeout=240_000)
        page.locator("#bk-export").click()
        expect(page.locator("#bk-export-msg")).to_contain_text("train.sh")
        page.locator("#bk-results-refresh").click()
        expect(page.locator("#bk-leaderboard")).to_contain_text("final")
        page.screenshot(path=str(shots / "5-results-finals-export.png"), full_page=True)
        script_href = page.locator("#bk-export-msg a", has_text="train.sh").get_attribute("href")
        page.reload()  # returns to the tab you were on
        expect(page.get_by_role("tab", name="Results")).to_have_attribute("aria-selected", "true")
        page.locator("#bk-results-refresh").click()
        expect(page.locator("#bk-verdict a", has_text="report.html")).to_be_visible()
        report_href = page.locator("#bk-verdict a", has_text="report.html").get_attribute("href")
        assert script_href and report_href and "gradio_api/file=" in report_href
        assert "set -euo pipefail" in page.request.get(demo_app.url + script_href.lstrip("/")).text()
        report = browser.new_page(viewport={"width": 1200, "height": 900})
        report.goto(demo_app.url + report_href.lstrip("/"))
        expect(report.locator("body")).to_contain_text("Bracket report")
        report.screenshot(path=str(shots / "6-report.png"), full_page=True)
        browser.close()
