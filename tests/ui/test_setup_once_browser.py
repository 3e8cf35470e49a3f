"""Setup in a real browser says each thing once (review of round 33): the demo dataset's
"made when the search starts" note stands beside its field only, not again as the pre-flight
line, and the editable search-space table shows no "Drop CSV or TSV files here" hint."""

from __future__ import annotations

import pytest

from tests.fakes.browser_page import ARGS, CHROMIUM, open_app

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]


def test_setup_says_the_demo_note_once_and_no_csv_hint(launched_app):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = open_app(browser, launched_app.url)
        table = page.locator("#bk-space-setup")
        expect(page.locator(".bk-field-msg").first).to_contain_text("made when the search starts")
        text = page.inner_text("body")  # what is rendered (display:none is left out)
        assert text.count("made when the search starts") == 1, text
        assert "Drop CSV" not in text
        expect(table.get_by_text("Drop CSV", exact=False)).to_be_hidden()
        browser.close()
