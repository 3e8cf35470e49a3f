"""Issue 34 item 8 in a real browser (Debian's Chromium via Playwright), at a 1280-px window.

The trial table's status, step and rank columns are on screen without a horizontal scroll
(they came after run, config, kind and a long "why"); the Results page shows each section
once: its leaderboard, charts and importance, and a link to the report — not the report's
copy of all of them below. Screenshots go to test-output/results-layout/."""

from __future__ import annotations

import pytest

from tests.fakes import FAKE_TRAINER
from tests.fakes.browser_page import ARGS, CHROMIUM, open_app, press_start

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]

#: where a header cell ends, and where the table's scroll box shows up to, in page pixels
_EDGES = """(table) => {
  const box = table.querySelector('.table-wrap, [role=grid]')?.closest('div') || table;
  const scroller = [...table.querySelectorAll('*')].find(e => e.scrollWidth > e.clientWidth + 1) || box;
  const right = scroller.getBoundingClientRect().right;
  const heads = {};
  for (const th of table.querySelectorAll('th')) {
    const name = th.innerText.trim().split('\\n')[0].trim();
    if (name && !(name in heads)) heads[name] = th.getBoundingClientRect().right;
  }
  return {right, heads, scrollLeft: scroller.scrollLeft};
}"""


def test_trial_columns_fit_1280_px_and_results_shows_each_section_once(demo_app, output_dir):
    from playwright.sync_api import expect, sync_playwright

    shots = output_dir / "results-layout"
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = open_app(browser, demo_app.url, 1280, 900)
        script = page.locator("#bk-field-train_script textarea, #bk-field-train_script input")
        script.fill(str(FAKE_TRAINER))
        script.press("Tab")
        page.locator("#bk-budget input").fill("7")  # a short search (the confirmation box follows it: 0)
        page.locator("#bk-budget input").press("Tab")
        # the confirmation box follows the typed budget (0 below 8 configs): Start pressed before it has
        # read the default budget's 4 and refused ("leave less than one config of the budget")
        expect(page.locator("#bk-confirm input")).to_have_value("0")
        press_start(page)
        expect(page.locator("#bk-progress")).to_contain_text("7 / 7 runs", timeout=180_000)
        expect(page.locator("#bk-status")).to_contain_text("finished")
        trials = page.locator("#bk-trials")
        expect(trials).to_contain_text("done")
        page.screenshot(path=str(shots / "1-search.png"), full_page=True)
        edges = trials.evaluate(_EDGES)
        for name in ("status", "step", "rank"):
            assert name in edges["heads"], edges
            assert edges["heads"][name] <= edges["right"] + 1, (name, edges)  # on screen, no scroll needed
        assert edges["scrollLeft"] == 0

        page.get_by_role("tab", name="Results").click()
        page.locator("#bk-results-refresh").click()
        report = page.locator("#bk-report")
        expect(report).to_contain_text("report.html", timeout=60_000)
        expect(page.locator("#bk-leaderboard")).to_contain_text("headline")
        page.screenshot(path=str(shots / "2-results.png"), full_page=True)
        # one leaderboard, one of each chart: the report is linked, not embedded a second time
        assert report.locator("table, img, h2").count() == 0
        assert page.get_by_text("Leaderboard (search runs)").count() == 0
        assert page.locator("#bk-leaderboard").count() == 1
        browser.close()
