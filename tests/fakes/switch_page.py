"""The Setup form in a browser page through preset switches: what ``bench/ui_preset_switch.py`` times
and ``tests/ui/test_preset_switch_text_browser.py`` checks (issue 43, items 3 and 6).

A sampler in the page reads the form every 10 ms — the preset, its notes, the prompts box (text
and help), the plan, the pre-flight line, the space table, which field boxes are in sight and whether
the page is between a switch and its answer (``switching``: ``ui.setup_tab.BLANK_JS``) —
and keeps each distinct state with its time. For each switch of :data:`SWITCHES` (picked as a
person picks: type to filter, click the option), the **settle time** is from the click to the last
change of that state, once the server has answered every event the page sent since the click and the
state has then stayed the same for :data:`QUIET_S` (a quiet period alone ended before a slow server's
answer: ``tests.fakes.browser_page.wait_answered``); every state from the one where
the browser handled the switch (:func:`handled_at`) is checked for another preset's text
(:func:`foreign_text`), and the server events the page sent are counted. ``python -m bench ui``
reports the median and the slowest switch; the browser test asserts that nothing foreign shows.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.browser_page import ARGS as BROWSER_ARGS
from tests.fakes.browser_page import CHROMIUM, LOAD_MS, ROUND_TRIP_MS, events_sent, prepare, wait_answered

__all__ = ["BROWSER_ARGS", "CHROMIUM"]  # bench/ui_preset_switch.py launches its browser with them
DEMO, SDXL, FLUX = "demo-cpu", "sdxl-lora", "flux1-lora"
#: the switches measured, as (preset id, what to type into the list to find it)
SWITCHES = ((SDXL, "SDXL"), (FLUX, "FLUX.1"), (SDXL, "SDXL"), (DEMO, "Demo"), (SDXL, "SDXL"))
#: the form counts as settled once its state stayed the same this long
QUIET_S = 3.0
GOAL_S = 1.0

SAMPLER = r"""
() => {
  const text = (sel) => { const el = document.querySelector(sel); return el ? el.innerText.trim() : null; };
  const read = () => {
    const box = document.querySelector('#bk-prompts textarea');
    const seen = (el) => el.checkVisibility({visibilityProperty: true});  // out of sight is not shown
    const fields = [...document.querySelectorAll('[id^="bk-field-"]')].filter(seen)
      .map((el) => el.id.slice('bk-field-'.length)).sort();
    return {preset: (document.querySelector('#bk-preset input') || {}).value || '', notes: text('#bk-notes'),
            prompts: box ? box.value : null, help: text('#bk-prompts'), plan: text('#bk-plan'),
            preflight: text('#bk-preflight'), space: (text('#bk-space-setup') || '').slice(0, 400), fields,
            switching: document.body.classList.contains('bk-switching')};
  };
  window.bkStates = [];
  let last = '';
  const sample = () => {
    const state = read(), key = JSON.stringify(state);
    if (key !== last) { last = key; window.bkStates.push({t: performance.now(), state}); }
  };
  sample();
  window.bkSampler = setInterval(sample, 10);
}
"""


def foreign_text(state: dict[str, Any], shown: str, previous: str) -> list[str]:
    """What of preset ``previous`` a state of the form switching to ``shown`` still shows: its notes'
    heading, a field box only it has, the demo's prompts (or their source) in a real preset's box."""
    from bracket.dataset.demo_data import DEMO_PROMPTS
    from bracket.registry import get_preset

    if previous == shown:
        return []
    found = []
    heading = f"**{get_preset(previous).display_name}**".strip("*")
    if heading not in get_preset(shown).display_name and heading in (state.get("notes") or ""):
        found.append(f"notes of {previous}")
    own = {f.name for f in get_preset(shown).fields}
    found += [f"field {name} of {previous}" for name in state.get("fields") or [] if name not in own]
    if shown != DEMO:
        lines = {line.split(" --")[0] for line in (state.get("prompts") or "").splitlines()}
        if lines & {line.split(" --")[0] for line in DEMO_PROMPTS} or "the demo's shapes" in (state.get("help") or ""):
            found.append("the demo's prompts")
    return found


def handled_at(states: list[dict[str, Any]], shown: str, previous: str) -> int:
    """The index of the first state after the browser handled the switch to ``shown``: the previous
    preset's notes gone (the browser shows the new name in the list at once, and everything else of
    the previous preset until it dispatches the change: under load that took Chromium seconds)."""
    return next((i for i, s in enumerate(states) if not foreign_text({"notes": s["state"].get("notes")}, shown,
                                                                    previous)), len(states))


def pick(page: Any, typed: str, preset_id: str) -> tuple[float, int]:
    """Pick ``preset_id`` in the list as a person does; the page's clock at the click (ms) and the
    number of server events the page had sent before it (for :func:`wait_settled`)."""
    from bracket.registry import get_preset

    box = page.get_by_label("Preset", exact=True)
    box.click()
    box.fill(typed)
    option = page.get_by_role("option").filter(has_text=f"{get_preset(preset_id).display_name} (")
    option.first.wait_for(timeout=ROUND_TRIP_MS)
    sent = events_sent(page)
    clicked = page.evaluate("() => performance.now()")
    option.first.click()
    return float(clicked), sent


def wait_settled(page: Any, since_ms: float, timeout_s: float = 180.0, sent: int | None = None) -> list[dict[str, Any]]:
    """The form's states from ``since_ms`` on, once the server answered the event(s) the action set off
    (at least one after the first ``sent`` the page sent, when given; the fields shown again after a
    switch) and no state came for :data:`QUIET_S` after that."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    quiet_from = since_ms
    if sent is not None:
        wait_answered(page, sent, at_least=1)
        page.wait_for_function("() => !document.body.classList.contains('bk-switching')", timeout=ROUND_TRIP_MS)
        quiet_from = max(since_ms, float(page.evaluate("() => performance.now()")))  # the answer's states come after
    quiet = f"() => performance.now() - Math.max(window.bkStates.at(-1).t, {quiet_from}) >= {QUIET_S * 1000}"
    try:  # the page answers when it has been quiet that long (the browser looks, each 100 ms)
        page.wait_for_function(quiet, polling=100, timeout=timeout_s * 1000)
    except PlaywrightTimeout:
        pass  # never quiet: every state so far is returned, for the test to show
    return page.evaluate(f"() => window.bkStates.filter((s) => s.t >= {since_ms})")


def switch_all(page: Any, switches: tuple[tuple[str, str], ...] = SWITCHES, start: str = DEMO) -> list[dict[str, Any]]:
    """Each switch of ``switches`` on a page showing preset ``start``: settle seconds, server events, final
    state, anything foreign."""
    page.evaluate(SAMPLER)
    results, previous, sent = [], start, []
    page.on("request", lambda request: sent.append(request.url) if "/queue/join" in request.url else None)
    for preset_id, typed in switches:
        sent.clear()
        clicked, before = pick(page, typed, preset_id)
        states = wait_settled(page, clicked, sent=before)
        settled = (states[-1]["t"] - clicked) / 1000 if states else 0.0
        handled = handled_at(states, preset_id, previous)
        foreign = sorted({f for s in states[handled:] for f in foreign_text(s["state"], preset_id, previous)})
        handled_s = (states[handled]["t"] - clicked) / 1000 if handled < len(states) else settled
        results.append({"from": previous, "to": preset_id, "settle_s": settled, "handled_s": handled_s,
                        "states": len(states),
                        "events": len(sent),
                        "final": states[-1]["state"] if states else None, "foreign": foreign})
        previous = preset_id
    return results


def open_form(page: Any, url: str) -> None:
    """The demo's form at ``url`` in a new ``page``, once the page's load has filled it in; the page
    counts the server events it sends (``tests.fakes.browser_page.prepare``)."""
    from playwright.sync_api import expect

    prepare(page)
    page.goto(url, timeout=LOAD_MS)
    expect(page.locator("#bk-space-setup")).to_contain_text("learning_rate", timeout=LOAD_MS)
    expect(page.locator("#bk-field-cpu_threads")).to_be_visible(timeout=ROUND_TRIP_MS)  # the demo's form
    wait_answered(page)  # the rest of the load (the past-session lists)


