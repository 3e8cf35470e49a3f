"""Issue 43, item 6, in a real browser (Chromium at 1280 px): a preset switch is one server event
whatever the number of field boxes it changed (each box's ``change`` used to be its own event,
twelve after demo → SDXL LoRA, each carrying a half-switched form), every box then shows the
switched preset's value (SDXL LoRA's sd-scripts list once kept the demo's), and a person's own
edits — a text box left with Tab or Enter, a list picked or typed into — still reach the server,
each in one or two events, and show on the field's line, the pre-flight and the list."""

from __future__ import annotations

import re

import pytest

from bracket.app.field_slots import shown_fields
from tests.fakes.browser_page import ARGS, CHROMIUM, events_sent, wait_answered
from tests.fakes.switch_page import DEMO, SDXL, SWITCHES, open_form, switch_all

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]

#: each box's value as the page holds it, by field (a list's shown entry is its input's value)
BOX_VALUES = """() => Object.fromEntries([...document.querySelectorAll('[id^="bk-field-"]')]
  .filter((el) => el.checkVisibility({visibilityProperty: true}))
  .map((el) => [el.id.slice('bk-field-'.length), (el.querySelector('textarea, input') || {}).value]))"""


def _leave_focus(page) -> None:
    """Leave the box a person's Tab moved the focus to (leaving it is an event of its own), and wait
    for the answer to every event the page sent."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.wait_for_timeout(1000)  # the browser sends what the blur set off
    wait_answered(page)


def _events(page, action) -> int:
    """The server events the page sends while ``action`` runs and the form settles after it (the box a
    previous action left focused is left first: its blur is that action's event): at least one, all
    answered, and none more in the 1.5 s after the answers (a second event an action sets off is sent
    with the first)."""
    _leave_focus(page)
    before = events_sent(page)
    action()
    wait_answered(page, before, at_least=1)
    page.wait_for_timeout(1500)
    return wait_answered(page, before)


def test_a_switch_is_one_server_event_and_a_person_s_edits_still_reach_the_server(launched_app, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    images = tmp_path / "images"
    images.mkdir()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        open_form(page, launched_app.url)
        switches = switch_all(page, SWITCHES)
        assert [(s["from"], s["to"], s["events"]) for s in switches if s["events"] > 1] == []
        assert [s["to"] for s in switches][-1] == SDXL
        # every box shows SDXL LoRA's value, as the configuration gives it (a list: its configured program)
        assert page.evaluate(BOX_VALUES) == shown_fields(SDXL, {}, allow_custom=False)

        def leave(selector: str, text: str, key: str) -> None:
            box = page.locator(f"{selector} textarea, {selector} input")
            box.fill(text)
            box.press(key)

        # a text box left with Tab (blur): the dataset's pre-flight
        assert _events(page, lambda: leave("#bk-field-dataset", str(images), "Tab")) == 1
        expect(page.locator("#bk-preflight")).to_contain_text(str(images))
        # a text box left with Enter (submit): the field's own line
        resolution = page.locator("#bk-field-resolution").locator("xpath=ancestor::div[contains(@class,'row')][1]")
        assert _events(page, lambda: leave("#bk-field-resolution", "abc", "Enter")) in (1, 2)
        expect(resolution.locator("div.block.bk-field-msg")).to_contain_text("must be a whole number, got 'abc'")
        # a list picked from: heard (its line says what it holds), and a program typed into a list the
        # browser may not type is put back to the configured one
        device = page.locator("#bk-field-device input")

        def pick_cpu() -> None:
            device.click()
            page.get_by_role("option", name="cpu", exact=True).click()

        assert _events(page, pick_cpu) in (1, 2)
        expect(device).to_have_value("cpu")
        program = shown_fields(SDXL, {}, allow_custom=False)["sd_scripts_dir"]
        assert _events(page, lambda: leave("#bk-field-sd_scripts_dir", "/tmp/elsewhere", "Tab")) in (1, 2)
        expect(page.locator("#bk-field-sd_scripts_dir input")).to_have_value(program)
        # nothing a person did reaches another preset's form: back to the demo, its own values
        _leave_focus(page)
        switches = switch_all(page, ((DEMO, "Demo"),), start=SDXL)
        assert switches[0]["events"] == 1 and not switches[0]["foreign"], switches
        values = page.evaluate(BOX_VALUES)
        assert list(values) == list(shown_fields(DEMO, {}, allow_custom=False)) and values["resolution"] == "32"
        assert not re.search("abc|/tmp/elsewhere|cpu\b", str(values)), values
        browser.close()
