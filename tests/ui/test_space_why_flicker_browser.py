"""Issue 20's second part in a real browser (Debian's Chromium via Playwright).

The demo preset with the fake trainer: the Setup tab shows the search space before Start
and is edited in its cells (narrow the learning rate, lock the warm-up; a bad cell gives
one inline line and Start starts nothing); after the search, the trial table's "why" column
explains the TPE proposal and a click on its row gives the full reason; after a reload the
Setup form (its space table included) shows the open session's settings and "Clone
settings" fills it from a past session; on Compare, the steps × prompts stack switches
runs with PageDown in the lightbox and, on screen, without a click in it; A/B flicker starts
with the first two picked runs and alternates them (a click holds it); on Results, the
session's space is the edited one, Optuna's parallel-coordinate and slice plots and the space table are
drawn, and "+N runs" resumes the search for two more runs. Screenshots go to
test-output/ui-round2b/.
"""

from __future__ import annotations

import pytest

from tests.fakes import FAKE_TRAINER
from tests.fakes.browser_page import ARGS, CHROMIUM, events_sent, open_app, press_start, wait_answered

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]


def cell(page, row: int, col: int):
    """A cell of the Setup tab's search-space table."""
    return page.locator(f'#bk-space-setup [data-testid="cell-{row}-{col}"]')


def edit_cell(page, row: int, col: int, text: str) -> None:
    """Type ``text`` into a cell of the search-space table as a person does (double-click, Enter)."""
    cell(page, row, col).dblclick()
    box = cell(page, row, col).locator("input, textarea").first
    box.fill(text)
    box.press("Enter")


def test_space_why_clone_matrix_flicker_plots_and_more_runs(demo_app, output_dir):
    from playwright.sync_api import expect, sync_playwright

    shots = output_dir / "ui-round2b"
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = open_app(browser, demo_app.url)
        script = page.locator("#bk-field-train_script textarea, #bk-field-train_script input")
        script.fill(str(FAKE_TRAINER))
        script.press("Tab")

        # Setup: the search space before Start, edited in its cells (rows: optimizer_type,
        # learning_rate, lr_scheduler, lr_warmup_steps, batch_size; columns 2-5: min, max, choices, lock)
        space = page.locator("#bk-space-setup")
        message = page.locator("#bk-space-msg")
        expect(space).to_contain_text("learning_rate")
        expect(space).to_contain_text("fixed")
        expect(cell(page, 1, 3)).to_contain_text("0.03")  # the LR's range is shown, not left blank
        edit_cell(page, 1, 3, "0.01")  # narrow the learning rate
        expect(cell(page, 1, 1)).to_contain_text("narrowed")
        edit_cell(page, 0, 5, "Lion")  # a bad lock: one inline line, the table as it was
        expect(message).to_contain_text("Lion is not among")
        page.locator("#bk-start").click()  # Start refuses the same table the same way, and starts nothing
        expect(page.locator("#bk-start-status")).to_contain_text("Lion is not among")
        expect(page.get_by_role("tab", name="Setup")).to_have_attribute("aria-selected", "true")
        assert not any(demo_app.runs_dir.iterdir())
        edit_cell(page, 0, 5, "")
        expect(message).to_contain_text("4 knobs searched")
        edit_cell(page, 3, 5, "0")  # lock the warm-up at 0 steps
        expect(cell(page, 3, 1)).to_contain_text("locked")
        expect(message).to_contain_text("3 knobs searched")
        sent = events_sent(page)
        page.locator("#bk-steps input").fill("20")
        page.locator("#bk-steps input").press("Tab")
        wait_answered(page, sent, at_least=1)  # the table redrawn for the new run length (it showed the edits before)
        expect(cell(page, 3, 5)).to_contain_text("0")  # a new run length keeps the edits
        expect(cell(page, 1, 3)).to_contain_text("0.01")
        page.locator("#bk-budget input").fill("7")  # a short search: warm start, bracket, 1 shape draw
        page.locator("#bk-budget input").press("Tab")
        expect(page.locator("#bk-confirm input")).to_have_value("0")  # the rung follows the typed budget
        page.screenshot(path=str(shots / "1-setup-space.png"), full_page=True)
        press_start(page)

        # Search: to the end, then why the TPE proposal was made
        expect(page.locator("#bk-progress")).to_contain_text("7 / 7 runs", timeout=180_000)
        expect(page.locator("#bk-status")).to_contain_text("finished")
        # the trial table says why in a column; a click on the sampler's first row (a shape draw
        # right after the learning-rate bracket) opens the full reason
        tpe = page.locator("#bk-trials [role=gridcell]", has_text="shape draw").first
        expect(tpe).to_be_visible()
        expect(tpe).to_contain_text("another shape · vs ")
        tpe.click()
        expect(page.locator("#bk-why-text")).to_contain_text("shape draw")
        expect(page.locator("#bk-why-text")).to_contain_text("Closest finished configs")
        page.screenshot(path=str(shots / "2-why.png"), full_page=True)

        # a reload: the Setup form shows the open session; Clone settings fills it from a past one
        page.reload()
        page.get_by_role("tab", name="Setup").click()
        expect(page.locator("#bk-form-source")).to_contain_text("open session")
        expect(cell(page, 1, 3)).to_contain_text("0.01")  # the open session's bounds fill the table
        expect(cell(page, 3, 5)).to_contain_text("0")
        expect(page.locator("#bk-steps input")).to_have_value("20")
        expect(page.locator("#bk-field-train_script textarea, #bk-field-train_script input")).to_have_value(
            str(FAKE_TRAINER))
        # the past-session list is filled last on load (it opens every past session); a person who
        # presses Clone before it is there gets "pick a past session first", so wait for its pick
        expect(page.locator("#bk-sessions input")).not_to_have_value("")
        page.locator("#bk-clone").click()
        expect(page.locator("#bk-form-source")).to_contain_text("Cloned the settings")
        page.screenshot(path=str(shots / "3-setup-reflects-and-clones.png"), full_page=True)

        # Compare: steps × prompts, PageDown switches runs in the lightbox; A/B flicker
        page.get_by_role("tab", name="Compare").click()
        page.locator("#bk-next-unrated").click()
        expect(page.locator("#bk-grid table.bk-grid img").first).to_be_visible()
        page.locator("#bk-grid .bk-cell").first.click()  # the grid's step is the last one, 20
        caption = page.locator("#bk-lightbox .bk-lb-caption")
        picture = page.locator("#bk-lightbox .bk-lb-media img")
        last = picture.get_attribute("src")
        page.keyboard.press("PageUp")  # the same run and prompt one sampled step earlier (every 20/5)
        expect(caption).to_contain_text("step 16")
        assert picture.get_attribute("src") != last
        page.keyboard.press("ArrowRight")  # the next run keeps step 16
        expect(caption).to_contain_text("step 16")
        page.keyboard.press("PageDown")
        expect(caption).to_contain_text("step 20")
        page.keyboard.press("Escape")
        page.locator("#bk-progression-btn").click()
        layers = page.locator("#bk-progression > .bk-layer")
        expect(layers).to_have_count(4)
        expect(layers.nth(0)).to_be_visible()
        expect(layers.nth(1)).to_be_hidden()
        layers.nth(0).scroll_into_view_if_needed()  # on screen, no click inside it: the keys turn it
        page.keyboard.press("PageDown")
        expect(layers.nth(1)).to_be_visible()
        page.keyboard.press("PageUp")
        expect(layers.nth(0)).to_be_visible()
        expect(layers.nth(1)).to_be_hidden()
        first_head = layers.nth(0).locator("thead th[title]").first.inner_text()
        layers.nth(0).locator(".bk-cell").first.click()
        expect(caption).to_contain_text(first_head.split(" · ")[0])
        page.keyboard.press("PageDown")
        second_head = layers.nth(1).locator("thead th[title]").first.inner_text()
        expect(caption).to_contain_text(second_head.split(" · ")[0])
        assert first_head.split(" · ")[0] != second_head.split(" · ")[0]
        page.keyboard.press("ArrowRight")  # the next step of the same run
        expect(caption).to_contain_text(second_head.split(" · ")[0])
        page.keyboard.press("Escape")
        expect(layers.nth(1)).to_be_visible()
        expect(layers.nth(0)).to_be_hidden()
        page.screenshot(path=str(shots / "4-steps-by-prompts.png"), full_page=True)
        # A/B start as the first two picked runs: no picking needed
        expect(page.locator("#bk-flicker-a input")).not_to_have_value("")
        expect(page.locator("#bk-flicker-b input")).not_to_have_value("")
        assert page.locator("#bk-flicker-a input").input_value() != page.locator("#bk-flicker-b input").input_value()
        page.locator("#bk-flicker-btn").click()
        flicker = page.locator("#bk-flicker-box .bk-flicker").first
        expect(flicker).to_be_visible()
        assert flicker.locator("img.bk-b").evaluate("e => getComputedStyle(e).animationName") == "bk-flick-b"
        flicker.click()
        expect(flicker).to_have_class("bk-flicker bk-hold")
        assert flicker.locator("img.bk-b").evaluate("e => getComputedStyle(e).animationPlayState") == "paused"
        page.screenshot(path=str(shots / "5-flicker.png"), full_page=True)

        # Results: Optuna's plots, the space table, +N runs
        page.get_by_role("tab", name="Results").click()
        page.locator("#bk-results-refresh").click()
        expect(page.locator("#bk-parallel .js-plotly-plot")).to_be_visible()
        expect(page.locator("#bk-slice .js-plotly-plot")).to_be_visible()
        expect(page.locator("#bk-space-results")).to_contain_text("learning_rate")
        # the session searched the edited space: LR narrowed to 0.01, the warm-up locked at 0
        expect(page.locator("#bk-space-results")).to_contain_text("1e-05 … 0.01 (log) (narrowed)")
        expect(page.locator("#bk-space-results")).to_contain_text("locked")  # the warm-up locked at 0 in Setup
        page.screenshot(path=str(shots / "6-results-plots.png"), full_page=True)
        page.locator("#bk-more-runs input").fill("2")
        page.locator("#bk-extend").click()
        expect(page.locator("#bk-extend-msg")).to_contain_text("Added 2 runs: budget 9")
        page.get_by_role("tab", name="Search").click()
        expect(page.locator("#bk-progress")).to_contain_text("9 / 9 runs", timeout=180_000)
        expect(page.locator("#bk-status")).to_contain_text("finished")
        page.screenshot(path=str(shots / "7-more-runs.png"), full_page=True)
        browser.close()
