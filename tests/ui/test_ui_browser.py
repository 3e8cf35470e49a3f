"""End to end in a real browser: Debian's Chromium driven by Playwright against ``python app.py``.

The demo preset runs the fake trainer (trainer python from BRACKET_DEMO_PYTHON, dataset
from BRACKET_DEMO_DATA_DIR, the training script typed into the form). The test starts a
2-trial search, watches it finish, compares and rates both runs, makes one blind pairwise
choice with the keyboard, sees the leaderboard change, and screenshots every tab into
the test output folder.
"""

from __future__ import annotations

import time

import pytest

from tests.fakes import FAKE_TRAINER
from tests.fakes.browser_page import ARGS, CHROMIUM, open_app, press_start

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium "
                       "(apt-get install chromium); Playwright's own browser download is not used"),
]


def test_search_compare_score_results(demo_app, output_dir):
    from playwright.sync_api import expect, sync_playwright

    shots = output_dir / "ui-browser"
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        began = time.monotonic()
        page = open_app(browser, demo_app.url)  # the form filled in by the page's load
        load_s = time.monotonic() - began
        print(f"\napp answered {demo_app.started_s:.1f} s after launch; page with form loaded in {load_s:.1f} s")

        # Setup: the preset's form, the script typed in, a 2-run search
        script = page.locator("#bk-field-train_script textarea, #bk-field-train_script input")
        script.fill(str(FAKE_TRAINER))
        script.press("Tab")
        expect(page.locator("#bk-preflight")).to_contain_text("Dataset pre-flight: 6 images")
        page.locator("#bk-budget input").fill("2")
        page.locator("#bk-budget input").press("Tab")
        expect(page.locator("#bk-plan")).to_contain_text("= 2 configs × 1 seed")
        page.locator("#bk-steps input").fill("30")
        page.locator("#bk-steps input").press("Tab")
        page.screenshot(path=str(shots / "1-setup.png"), full_page=True)
        press_start(page)

        # Search: progress to the end
        expect(page.locator("#bk-progress")).to_contain_text("2 / 2 runs", timeout=120_000)
        expect(page.locator("#bk-status")).to_contain_text("finished")
        expect(page.locator("#bk-trials")).to_contain_text("adamw-fast")
        # the live chart arrives as Plotly JSON written by ui.loss_plot: Plotly draws its two runs
        expect(page.locator("#bk-loss .js-plotly-plot")).to_be_visible()
        expect(page.locator("#bk-loss .legendtext")).to_have_count(2)
        page.screenshot(path=str(shots / "2-search.png"), full_page=True)

        # Results before scoring
        page.get_by_role("tab", name="Results").click()
        board = page.locator("#bk-leaderboard")
        expect(board).to_contain_text("baseline")
        before = board.inner_text()

        # Compare: grid, lightbox, ratings, one blind pairwise choice
        page.get_by_role("tab", name="Compare").click()
        page.locator("#bk-next-unrated").click()
        grid = page.locator("#bk-grid table.bk-grid")
        expect(grid.locator("img")).to_have_count(2 * 4)
        grid.locator(".bk-cell").first.click()
        caption = page.locator("#bk-lightbox .bk-lb-caption")
        expect(caption).to_contain_text("a red circle")
        first_caption = caption.inner_text()
        page.keyboard.press("ArrowRight")
        expect(caption).not_to_have_text(first_caption)
        page.keyboard.press("ArrowDown")
        expect(caption).to_contain_text("a blue square")
        # the full-size PNG really came through the file route
        page.wait_for_function("() => document.querySelector('#bk-lightbox img')?.naturalWidth > 0")
        page.screenshot(path=str(shots / "3-lightbox.png"))
        page.keyboard.press("Escape")
        expect(page.locator("#bk-lightbox")).to_be_hidden()
        rating_groups = page.locator("[id^=bk-rate-]")
        expect(rating_groups).to_have_count(2)
        for index, value in ((0, "8"), (1, "4")):
            rating_groups.nth(index).get_by_text(value, exact=True).click()
            expect(page.locator("#bk-rated")).to_contain_text(f"rated {value}")
        page.locator("#bk-next-pair").click()
        expect(page.locator("#bk-pair img")).to_have_count(2 * 4)
        expect(page.locator("#bk-pair")).not_to_contain_text("baseline")
        page.screenshot(path=str(shots / "4-compare.png"), full_page=True)
        page.locator("#bk-pair-mode input").check()  # keys vote only in pairwise mode, focus in its panel
        page.keyboard.press("1")
        expect(page.locator("#bk-pair-status")).to_contain_text("left is better")

        # Results after scoring: the leaderboard counts the ratings and the comparison
        page.get_by_role("tab", name="Results").click()
        page.locator("#bk-results-refresh").click()
        expect(board).not_to_have_text(before)
        expect(page.locator("#bk-winner-cmd")).to_contain_text("--learning_rate")
        page.screenshot(path=str(shots / "5-results.png"), full_page=True)
        after = board.inner_text()
        browser.close()
    assert before != after
