"""Issue 43, items 3, 6 and 8, in a real browser (Chromium at 1280 px): a preset switch shows no
text of the previous preset once the browser has handled it — no notes, field box or prompts of
the demo on SDXL LoRA — the prompts box never holds the demo's prompts on a real preset, with or
without a dataset typed on either side, its help says where the lines came from, and the
search-space table is read without scrolling inside itself. The sampler and the check of what
is foreign are ``tests.fakes.switch_page``'s (``python -m bench ui`` times the same switches with them)."""

from __future__ import annotations

import pytest

from bracket.dataset.demo_data import make_demo_dataset
from tests.conftest import make_caption_folder
from tests.fakes.browser_page import ARGS, CHROMIUM, events_sent
from tests.fakes.switch_page import DEMO, FLUX, SAMPLER, SDXL, foreign_text, handled_at, open_form, pick, wait_settled

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]

#: the space table's scroll boxes that scroll (their content larger than the box), at 1280 px
INNER_SCROLL = """() => [...document.querySelectorAll('#bk-space-setup *')].filter((el) => {
  const style = getComputedStyle(el);
  const scrolls = (v) => v === 'auto' || v === 'scroll';
  return (scrolls(style.overflowX) && el.scrollWidth > el.clientWidth + 1)
      || (scrolls(style.overflowY) && el.scrollHeight > el.clientHeight + 1);
}).map((el) => `${el.tagName}.${el.className} ${el.scrollWidth}x${el.scrollHeight}`
  + ` in ${el.clientWidth}x${el.clientHeight}`)"""


def _switch(page, typed: str, preset_id: str, previous: str) -> dict:
    """Switch to ``preset_id``; every state from the one where the browser handled the switch
    (the previous notes gone) must show nothing of ``previous``; returns the settled state."""
    clicked, sent = pick(page, typed, preset_id)
    states = wait_settled(page, clicked, sent=sent)
    handled = handled_at(states, preset_id, previous)
    assert handled < len(states), "the browser never handled the switch"
    for state in [s["state"] for s in states[handled:]]:
        assert not foreign_text(state, preset_id, previous), (previous, preset_id, state)
    return states[-1]["state"]


def _type_dataset(page, path: str) -> dict:
    """Type ``path`` into the dataset field; the form's state once the server's answer to it settled."""
    sent, typed = events_sent(page), page.evaluate("() => performance.now()")
    box = page.locator("#bk-field-dataset textarea, #bk-field-dataset input")
    box.fill(path)
    box.press("Tab")
    wait_settled(page, typed, sent=sent)
    return page.evaluate("() => window.bkStates.at(-1).state")


def test_a_preset_switch_shows_nothing_of_the_previous_preset(launched_app, tmp_path, output_dir):
    from playwright.sync_api import sync_playwright

    demo_data = make_demo_dataset(tmp_path / "demo-data", count=6)
    own = make_caption_folder(tmp_path / "own", count=3)
    for caption in own.glob("*.txt"):
        caption.write_text(f"zqx photo {caption.stem}", encoding="utf-8")
    shots = output_dir / "ui-preset-switch"
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        open_form(page, launched_app.url)
        page.locator("#bk-space-setup").screenshot(path=str(shots / "space-table-1280.png"))
        assert page.evaluate(INNER_SCROLL) == [], "the search-space table scrolls inside itself at 1280 px"
        page.evaluate(SAMPLER)
        _type_dataset(page, str(demo_data))  # the demo with its dataset filled in, then SDXL LoRA
        state = _switch(page, "SDXL", SDXL, DEMO)
        assert state["prompts"] == "" and "Nothing to propose them from yet" in state["help"], state
        state = _type_dataset(page, str(own))  # SDXL's own dataset: its captions, and the help says so
        assert state["prompts"].startswith("zqx photo") and f"captions of {own}" in state["help"], state
        state = _switch(page, "Demo", DEMO, SDXL)
        assert state["prompts"].startswith("a red circle") and "the demo's shapes" in state["help"], state
        state = _switch(page, "SDXL", SDXL, DEMO)  # back, no dataset on either side
        assert state["prompts"] == "" and "Nothing to propose them from yet" in state["help"], state
        _switch(page, "Demo", DEMO, SDXL)  # the demo with its dataset again, then SDXL by way of FLUX.1 LoRA
        _type_dataset(page, str(demo_data))
        state = _switch(page, "FLUX.1", FLUX, DEMO)
        assert state["prompts"] == "" and "Nothing to propose them from yet" in state["help"], state
        state = _switch(page, "SDXL", SDXL, FLUX)
        assert state["prompts"] == "" and "Nothing to propose them from yet" in state["help"], state
        page.screenshot(path=str(shots / "sdxl-after-demo.png"), full_page=True)
        page.locator("#bk-space-setup").screenshot(path=str(shots / "space-table-sdxl-1280.png"))
        assert page.evaluate(INNER_SCROLL) == [], "SDXL's search-space table scrolls inside itself at 1280 px"
        browser.close()
