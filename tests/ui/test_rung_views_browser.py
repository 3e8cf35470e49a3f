"""A successive-halving search's rungs in a real browser (Debian's Chromium via Playwright): a
past session whose rows the session loop would write (``tests.fakes.halving_rows``) is opened
from Setup, and the Search tab shows each config's rung in the trial table, the rung note in its
"why" (as ``status`` words it) and the status line of where the configs stand; Compare's "Samples at
a rung" shows every config that reached the 1/9 rung at its step, each header saying where its run
stands; the Results leaderboard has the rung column. Screenshots: test-output/rungs/."""

from __future__ import annotations

import pytest

from tests.conftest import make_caption_folder
from tests.fakes import FAKE_TRAINER, make_fake_python
from tests.fakes.browser_page import ARGS, CHROMIUM, open_app
from tests.fakes.halving_rows import halving_session
from tests.ui.conftest import launch_app

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]


def test_the_search_tab_shows_the_rungs_of_an_opened_halving_session(tmp_path, output_dir, monkeypatch):
    from playwright.sync_api import expect, sync_playwright

    fields = {"dataset": str(make_caption_folder(tmp_path / "data")),
              "trainer_python": str(make_fake_python(tmp_path / "fakebin")), "train_script": str(FAKE_TRAINER)}
    monkeypatch.setenv("BRACKET_RUNS_DIR", str(tmp_path / "runs"))
    halving_session(tmp_path / "runs", fields)
    shots = output_dir / "rungs"
    shots.mkdir(parents=True, exist_ok=True)
    with launch_app(tmp_path, {}, ["--allow-custom-executables"]) as app, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = open_app(browser, app.url, 1280, 900)
        sessions = page.locator("#bk-sessions input")
        # the past-session list is filled last on load: its first pick is there once it is
        expect(sessions).not_to_have_value("")
        sessions.click()
        page.get_by_role("option", name="halved").first.click()
        page.get_by_role("button", name="Open", exact=True).click()
        expect(page.get_by_role("tab", name="Search")).to_have_attribute("aria-selected", "true", timeout=60_000)
        trials = page.locator("#bk-trials")
        expect(trials).to_contain_text("paused at 1/9", timeout=60_000)
        expect(trials).to_contain_text("stopped at 1/9 (5 of 7, top 2 go on)")
        expect(trials).to_contain_text("running to 1/3")
        expect(trials).to_contain_text("promoted: 1 of 7 at 1/9, top 2 go on to 1/3")
        expect(page.locator("#bk-status")).to_contain_text("Rungs 1/9 → 1/3 → full")
        page.screenshot(path=str(shots / "search.png"), full_page=True)

        page.get_by_role("tab", name="Compare").click()
        rung = page.locator("#bk-rung-pick input")
        expect(rung).to_be_visible()
        rung.click()
        page.get_by_role("option", name="1/9 at step 10: 3 configs").click()
        expect(page.locator("#bk-compare-msg")).to_contain_text("Step 10, the rung 1/9: the 3 configs that reached it")
        grid = page.locator("#bk-grid thead")
        expect(grid).to_contain_text("search-2 · seed 42 · paused at 1/9 (step 10)")
        expect(grid).to_contain_text("search-0 · seed 42 · full")
        expect(grid).to_contain_text("search-1 · seed 42 · stopped at 1/9")
        expect(page.locator("#bk-step")).to_contain_text("rungs: 1/9 at 10, 1/3 at 30")
        expect(page.locator("#bk-compare-runs")).to_contain_text("paused at 1/9 (step 10)")
        page.screenshot(path=str(shots / "compare.png"), full_page=True)

        page.get_by_role("tab", name="Results").click()
        board = page.locator("#bk-leaderboard")
        expect(board).to_contain_text("stopped at 1/9 (5 of 7, top 2 go on)", timeout=60_000)
        expect(board).to_contain_text("(paused at step 10)")
        page.screenshot(path=str(shots / "results.png"), full_page=True)
        browser.close()
