"""How long the Setup form takes to settle after a preset switch, and what it shows meanwhile
(issue 43, item 6), in Debian's Chromium against ``python app.py``: the page helpers of
``tests.fakes.switch_page`` (the sampler, the switches, what counts as another preset's text)
over :data:`~tests.fakes.switch_page.SWITCHES`; ``python -m bench ui`` prints the figures."""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT
from tests.fakes.switch_page import BROWSER_ARGS, CHROMIUM, GOAL_S, open_form, switch_all


def measure(workdir: Path, checkout: Path = ROOT) -> dict[str, Any]:
    """``python app.py`` of ``checkout`` (runs folder in ``workdir``) and :data:`SWITCHES` in Chromium:
    settle times (median, slowest), server events, what showed another preset's text, and the machine's
    load average at the end (1, 5, 15 minutes: the figures mean little on a loaded machine)."""
    import os
    import socket
    import subprocess
    import sys

    import httpx
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        return {"skipped": f"no Chromium at {CHROMIUM}"}
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = dict(os.environ, BRACKET_RUNS_DIR=str(workdir / "runs-switch"), GRADIO_ANALYTICS_ENABLED="False")
    with open(workdir / "app-switch.log", "wb") as log:
        process = subprocess.Popen([sys.executable, "app.py", "--port", str(port)], cwd=checkout, env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(url, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=BROWSER_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            open_form(page, url)
            switches = switch_all(page)
            browser.close()
    finally:
        process.terminate()
        process.wait(30)
    times = [s["settle_s"] for s in switches]
    return {"load": [round(x, 1) for x in os.getloadavg()],
            "median_s": statistics.median(times), "slowest_s": max(times), "goal_s": GOAL_S,
            "events": max(s["events"] for s in switches), "handled_s": max(s["handled_s"] for s in switches),
            "foreign": [f"{s['from']} → {s['to']}: {', '.join(s['foreign'])}" for s in switches if s["foreign"]],
            "switches": [{k: v for k, v in s.items() if k != "final"} for s in switches]}
