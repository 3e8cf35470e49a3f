"""What every browser test shares: Debian's Chromium, a page opened once the app has filled it in,
and waits sized for a loaded machine.

A browser test acts as a person does: only after the page shows what the action needs, and each
expectation waits for the specific value it checks. On a 2-core machine under load a server round
trip took up to ~20 s and the page's load chain longer, so :func:`open_app` sets Playwright's
deadlines to :data:`ROUND_TRIP_MS` (its defaults, 5 s for ``expect``, are a fast machine's) and
returns once the page's load chain has filled the form (the search-space table, its third step:
an action before that is overwritten by what the load sends). :data:`TRACK_EVENTS` counts the
server events the page sends and the answers it has had, for a test that must know the page has
heard everything an action set off (:func:`wait_answered`): a quiet period alone ends early when
the server is slow.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
#: the deadline of anything that needs the server: a click's answer, a poll's next table
ROUND_TRIP_MS = 60_000
#: the deadline of a new page's load chain (it opens every past session)
LOAD_MS = 180_000

#: installed before the page's own scripts: ``window.bkEvents`` counts the events the page sends
#: (``/queue/join`` calls, counted when called; a timer's poll is not counted), and keeps their ids
#: and the ids the server finished (``process_completed`` on the queue's event stream)
TRACK_EVENTS = r"""
(() => {
  const track = window.bkEvents = {sent: 0, answered: 0, ids: [], finished: new Set()};
  const timers = () => new Set(((window.gradio_config || {}).components || [])
    .filter((c) => c.type === 'timer').map((c) => c.id));
  const read = async (body) => {  // the queue's event stream: which events the server finished
    const reader = body.getReader(), decoder = new TextDecoder();
    let rest = '';
    for (;;) {
      const {done, value} = await reader.read();
      if (done) return;
      const lines = (rest + decoder.decode(value, {stream: true})).split('\n');
      rest = lines.pop();
      for (const line of lines) {
        if (!line.startsWith('data:')) continue;
        try {
          const message = JSON.parse(line.slice(5));
          if (message.msg === 'process_completed' || message.msg === 'unexpected_error') {
            track.finished.add(message.event_id);
          }
        } catch (err) { /* not one message of JSON */ }
      }
    }
  };
  const fetch = window.fetch;
  window.fetch = async function (input, init) {
    const url = typeof input === 'string' ? input : (input && input.url) || String(input);
    let counted = false;
    if (url.includes('/queue/join')) {
      let body = {};
      try { body = JSON.parse((init && init.body) || '{}'); } catch (err) { /* counted all the same */ }
      counted = !timers().has(body.trigger_id);  // a timer's poll is not an action's event
      if (counted) track.sent += 1;
    }
    let response;
    try {
      response = await fetch.apply(this, arguments);
    } catch (error) {
      if (counted) track.answered += 1;
      throw error;
    }
    if (counted) {
      try { track.ids.push((await response.clone().json()).event_id); } catch (err) { /* refused */ }
      track.answered += 1;
    }
    if (url.includes('/queue/data') && response.body) {
      const [mine, theirs] = response.body.tee();
      read(mine);
      return new Response(theirs, {status: response.status, statusText: response.statusText,
                                   headers: response.headers});
    }
    return response;
  };
})();
"""


#: every event sent (after the first ``since``: at least ``least``) has its answer
ANSWERED = """([since, least]) => { const t = window.bkEvents;
  return t.sent - since >= least && t.answered === t.sent && t.ids.every((id) => t.finished.has(id)); }"""


def open_app(browser: Any, url: str, width: int = 1400, height: int = 1000) -> Any:
    """A new page of the app at ``url`` once its load chain has filled the form in (the search-space
    table shows), with :data:`ROUND_TRIP_MS` as the deadline of every wait and action."""
    page = browser.new_page(viewport={"width": width, "height": height})
    prepare(page)
    page.goto(url, timeout=LOAD_MS)
    wait_loaded(page)
    return page


def prepare(page: Any) -> None:
    """Before the page's first ``goto``: :data:`ROUND_TRIP_MS` as the deadline of every wait, action and
    ``expect``, and the page counts its server events (:data:`TRACK_EVENTS`)."""
    from playwright.sync_api import expect

    expect.set_options(timeout=ROUND_TRIP_MS)
    page.set_default_timeout(ROUND_TRIP_MS)
    page.add_init_script(TRACK_EVENTS)


def wait_loaded(page: Any) -> None:
    """Until the page's load chain has filled the form (after a goto or a reload)."""
    from playwright.sync_api import expect

    expect(page.locator("#bk-space-setup")).to_contain_text("learning_rate", timeout=LOAD_MS)


def events_sent(page: Any) -> int:
    """How many server events the page has sent so far."""
    return int(page.evaluate("() => window.bkEvents.sent"))


def wait_answered(page: Any, since: int = 0, at_least: int = 0) -> int:
    """Until the page has sent at least ``at_least`` events after the first ``since`` and the server
    has finished every event the page sent; the number sent after ``since``."""
    page.wait_for_function(ANSWERED, arg=[since, at_least], polling=100, timeout=ROUND_TRIP_MS)
    return events_sent(page) - since


def press_start(page: Any) -> None:
    """Press *Start search* and wait for the Search tab it brings up (the session is made and the
    trainer's python probed first: past a minute on a loaded machine); a failure says what Setup's
    message line says (a refusal's words)."""
    from playwright.sync_api import expect

    page.locator("#bk-start").click()
    try:
        expect(page.get_by_role("tab", name="Search")).to_have_attribute("aria-selected", "true", timeout=LOAD_MS)
    except AssertionError as error:
        said = page.locator("#bk-start-status").inner_text()
        raise AssertionError(f"Start did not bring up the Search tab; Setup's message: {said!r}") from error
