"""A page's load answered late must not overwrite the preset a person picked before it came (issue 43,
item 6: the Setup form showed the default preset's notes and fields under SDXL LoRA).

The app runs as ``tests/fakes/held_load_app.py``: the load chain's first answer is held until the person's
switch to SDXL LoRA has reached the server — and, where the switch is answered first (a queue of its
own), until the page shows that answer. The form must end on SDXL LoRA's own notes and fields, and from
the moment the browser handled the switch show nothing of the demo (``tests.fakes.switch_page``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bracket.dataset.demo_data import make_demo_dataset
from bracket.registry import get_preset
from tests.fakes import FAKE_TRAINER, make_fake_python
from tests.fakes.browser_page import (
    ARGS,
    CHROMIUM,
    LOAD_MS,
    ROUND_TRIP_MS,
    open_app,
    prepare,
    press_start,
    wait_answered,
)
from tests.fakes.switch_page import DEMO, SAMPLER, SDXL, foreign_text, pick, wait_settled
from tests.ui.conftest import launch_app

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]
HELD_APP = Path(__file__).resolve().parents[1] / "fakes" / "held_load_app.py"
#: every event the page sent after the first ``since`` (one at least) is in the server's queue
REACHED = "(since) => { const t = window.bkEvents; return t.sent > since && t.answered === t.sent; }"


def _release_after_switch(page, gate: Path) -> str:
    """Once the page shows the switch's answer (SDXL's notes) or the held load says the switch waits
    behind it, let the load answer; which of the two came."""
    heading = get_preset(SDXL).display_name
    for _ in range(int(ROUND_TRIP_MS / 100)):
        if gate.with_suffix(".queued").exists():
            came = "queued behind the load"
            break
        if heading in page.locator("#bk-notes").inner_text():
            came = "answered before the load"
            break
        page.wait_for_timeout(100)
    else:
        came = "neither"
    gate.write_text("answer the load\n")
    return came


def _pick_sdxl_before_the_load(browser, url: str, gate: Path) -> tuple[str, list[dict]]:
    """A new page of the app; SDXL LoRA picked before its load has an answer. How the switch came
    (``_release_after_switch``) and the form's states from the moment the browser handled it (it
    blanks the form: ``switching``; the notes alone do not say it here, the held load's progress line
    stands in them from the start), once every event has its answer."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    prepare(page)
    page.goto(url, timeout=LOAD_MS)
    expect(page.get_by_label("Preset", exact=True)).to_be_editable(timeout=LOAD_MS)
    page.evaluate(SAMPLER)
    clicked, sent = pick(page, "SDXL", SDXL)  # before the page's load has its answer
    page.wait_for_function(REACHED, arg=sent, polling=100)  # the server has the switch (its answer may wait)
    came = _release_after_switch(page, gate)
    assert came != "neither", "the switch was neither answered nor queued behind the held load"
    wait_settled(page, clicked, sent=sent)
    wait_answered(page)  # the rest of the load chain too
    states = page.evaluate(f"() => window.bkStates.filter((s) => s.t >= {clicked})")
    handled = next((i for i, s in enumerate(states) if s["state"]["switching"]), len(states))
    assert handled < len(states), "the browser never handled the switch"
    return came, [s["state"] for s in states[handled:]]


def _assert_sdxl_throughout(came: str, shown: list[dict]) -> None:
    sdxl = get_preset(SDXL)
    foreign = [(f, s) for s in shown for f in foreign_text(s, SDXL, DEMO)]
    assert not foreign, f"the switch {came}; the demo's text after the switch: {foreign[:3]}"
    final = shown[-1]
    assert sdxl.display_name in final["preset"], final
    assert sdxl.display_name in final["notes"], final
    assert final["fields"] == sorted(f.name for f in sdxl.fields), final


def test_a_late_load_answer_leaves_the_picked_preset(tmp_path):
    from playwright.sync_api import sync_playwright

    gate = tmp_path / "load-gate"
    with launch_app(tmp_path, {"BRACKET_TEST_LOAD_GATE": str(gate)}, [], script=HELD_APP) as app, \
            sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        _assert_sdxl_throughout(*_pick_sdxl_before_the_load(browser, app.url, gate))
        browser.close()


def test_a_late_load_does_not_put_the_open_session_over_the_picked_preset(tmp_path):
    """With a session open (the demo's, started in a first page), a new page's load shows it in the
    form — unless the person picked another preset before the load came: the pick stays."""
    from playwright.sync_api import sync_playwright

    gate = tmp_path / "load-gate"
    gate.write_text("the first page's load answers at once\n")
    data = make_demo_dataset(tmp_path / "data", count=6)
    env = {"BRACKET_TEST_LOAD_GATE": str(gate), "BRACKET_DEMO_PYTHON": str(make_fake_python(tmp_path / "bin")),
           "BRACKET_DEMO_DATA_DIR": str(data.parent)}
    with launch_app(tmp_path, env, ["--allow-custom-executables"], script=HELD_APP) as app, \
            sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        first = open_app(browser, app.url)
        script = first.locator("#bk-field-train_script textarea, #bk-field-train_script input")
        script.fill(str(FAKE_TRAINER))
        script.press("Tab")
        press_start(first)  # the demo's session is open now
        gate.unlink()
        _assert_sdxl_throughout(*_pick_sdxl_before_the_load(browser, app.url, gate))
        browser.close()
