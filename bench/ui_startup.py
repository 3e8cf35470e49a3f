"""Where the seconds from ``python app.py`` to a usable page go (issue 24), side by side with an
older checkout: ``python -m bench.ui_startup [OLDER_CHECKOUT] [REPEATS] [RUNS_FOLDER]``.

Three figures, each taken ``REPEATS`` times (default 3) with this checkout and the older one
alternating (the load of a shared machine moves by seconds between two runs), medians printed
as JSON, wall and CPU seconds side by side (CPU seconds move less with the load):

* **phases**: a child process that does what ``app.main`` does, step by step, timing each step
  with ``time.perf_counter`` and ``time.process_time``: import Gradio, import Bracket (the
  session holder and ``ui``), build the Blocks, ``launch``, the first ``GET /``. Python's own
  start is ``python -c pass``. When the checkout's ``app.py`` pauses the garbage collector
  during startup (``app.startup_gc``), the child does the same. The **Gradio floor** is the
  same steps for an app of one Markdown (collector paused too): what any Gradio app pays here;
* **page ready**: ``python app.py`` until ``GET /`` answers 200 (``bench.ui_latency``), with the
  app's CPU seconds until then;
* **form ready** (with Chromium at /usr/bin/chromium): ``python app.py``, then a browser opens
  the page as soon as ``GET /`` answers and waits for what a person needs to start: the
  preset's fields (``#bk-field-dataset``), the pre-flight line and the search-space table
  (the load chain's third step). ``lists_s``: also the past-sessions list filled (only when
  ``RUNS_FOLDER`` holds sessions; it is copied, never changed).

Both checkouts' sources are compiled first (``compileall``), as after a person's first launch:
where ``PYTHONDONTWRITEBYTECODE`` is set (this project's development containers) every start
would otherwise compile ``bracket/`` and ``ui/`` again (~0.2 CPU-s).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT

CHROMIUM = Path("/usr/bin/chromium")
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run"]

#: the child of :func:`phases`: ``app.main``'s steps, each timed (argv: port, runs folder)
PHASES_CHILD = r'''
import gc, json, os, sys, time
marks = [("start", time.perf_counter(), time.process_time())]
def mark(name):
    marks.append((name, time.perf_counter(), time.process_time()))
sys.path.insert(0, os.getcwd())
paused = "def startup_gc" in open("app.py", encoding="utf-8").read()
if paused:
    gc.disable()
import gradio
mark("gradio import")
from bracket.app.manager import SessionManager
from ui.blocks import build_app, launch_options
from ui.host_guard import HostPolicy
mark("Bracket imports (session holder, ui)")
from pathlib import Path
runs = Path(sys.argv[2])
manager = SessionManager(runs)
demo = build_app(manager)
mark("building the UI (Blocks)")
port = int(sys.argv[1])
demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
            **launch_options(runs, HostPolicy("127.0.0.1")))
if paused:
    gc.freeze()
    gc.enable()
mark("launch (server up)")
import httpx
status = httpx.get(f"http://127.0.0.1:{port}/", timeout=30).status_code
mark("first GET /")
rows = [(name, t - marks[i][1], c - marks[i][2]) for i, (name, t, c) in enumerate(marks[1:])]
print(json.dumps({"paused_gc": paused, "status": status, "phases": rows}))
demo.close()
manager.close()
'''

#: the floor: the same steps for a Gradio app of one Markdown (argv: port, "paused" or not)
FLOOR_CHILD = PHASES_CHILD.replace('paused = "def startup_gc" in open("app.py", encoding="utf-8").read()',
                                   'paused = sys.argv[2] == "paused"').replace(
    """from bracket.app.manager import SessionManager
from ui.blocks import build_app, launch_options
from ui.host_guard import HostPolicy
mark("Bracket imports (session holder, ui)")
from pathlib import Path
runs = Path(sys.argv[2])
manager = SessionManager(runs)
demo = build_app(manager)
""", """with gradio.Blocks() as demo:
    gradio.Markdown("floor")
""").replace("""prevent_thread_lock=True, quiet=True,
            **launch_options(runs, HostPolicy("127.0.0.1")))""", "prevent_thread_lock=True, quiet=True)").replace(
    "manager.close()\n", "")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def python_start() -> tuple[float, float]:
    """(wall, CPU seconds) of ``python -c pass`` with this interpreter (its site, the venv)."""
    before, began = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - began, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def phases(workdir: Path, checkout: Path = ROOT) -> dict[str, Any]:
    """The steps of ``app.main`` in a fresh process from ``checkout``: {phase: (wall, CPU s)}."""
    runs = workdir / "runs-phases"
    runs.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, GRADIO_ANALYTICS_ENABLED="False")
    out = subprocess.run([sys.executable, "-c", PHASES_CHILD, str(_free_port()), str(runs)], cwd=checkout, env=env,
                         capture_output=True, text=True, check=True, timeout=300)
    data = json.loads(next(line for line in out.stdout.splitlines() if line.startswith("{")))
    return {"paused_gc": data["paused_gc"], "status": data["status"],
            "phases": {name: (wall, cpu) for name, wall, cpu in data["phases"]}}


def floor(paused: bool) -> dict[str, Any]:
    """The same phases for a Gradio app of one Markdown: what any Gradio app pays here."""
    out = subprocess.run([sys.executable, "-c", FLOOR_CHILD, str(_free_port()), "paused" if paused else "no"],
                         cwd=ROOT, env=dict(os.environ, GRADIO_ANALYTICS_ENABLED="False"), capture_output=True,
                         text=True, check=True, timeout=300)
    data = json.loads(next(line for line in out.stdout.splitlines() if line.startswith("{")))
    return {"paused_gc": data["paused_gc"], "phases": {name: (wall, cpu) for name, wall, cpu in data["phases"]}}


def _cpu_s(pid: int) -> float | None:
    import psutil

    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return None
    return times.user + times.system


def form_ready(workdir: Path, checkout: Path = ROOT, runs: Path | None = None,
               timeout_s: float = 120.0) -> dict[str, Any]:
    """``python app.py`` → a browser's page with the Setup form usable (see the module doc).

    The browser is started before the app (its own start is not counted). ``runs``: a runs
    folder to copy in (past sessions fill the lists last); none: an empty one.
    """
    import httpx
    from playwright.sync_api import sync_playwright

    runs_dir = workdir / f"runs-form-{time.monotonic_ns()}"
    if runs is not None:
        shutil.copytree(runs, runs_dir)
    env = dict(os.environ, BRACKET_RUNS_DIR=str(runs_dir), GRADIO_ANALYTICS_ENABLED="False")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    result: dict[str, Any] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=BROWSER_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        with open(workdir / "app-form.log", "wb") as log:
            began = time.perf_counter()
            process = subprocess.Popen([sys.executable, "app.py", "--port", str(port)], cwd=checkout, env=env,
                                       stdout=log, stderr=subprocess.STDOUT)
        try:
            while time.perf_counter() - began < timeout_s and process.poll() is None:
                try:
                    if httpx.get(url, timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.05)
            result["get_s"], result["get_cpu_s"] = time.perf_counter() - began, _cpu_s(process.pid)
            page.goto(url)
            wait_ms = int(timeout_s * 1000)
            page.locator("#bk-field-dataset textarea, #bk-field-dataset input").wait_for(timeout=wait_ms)
            result["fields_s"] = time.perf_counter() - began
            page.wait_for_function("""() => {
                const pre = document.querySelector('#bk-preflight');
                const table = document.querySelector('#bk-space-setup');
                return pre && pre.innerText.trim().length > 0 && table && table.innerText.includes('learning_rate');
            }""", timeout=wait_ms, polling=50)
            result["form_s"], result["form_cpu_s"] = time.perf_counter() - began, _cpu_s(process.pid)
            if runs is not None:
                page.wait_for_function("""() => {
                    const box = document.querySelector('#bk-sessions input');
                    return box && box.value.trim().length > 0;
                }""", timeout=wait_ms, polling=50)
                result["lists_s"], result["lists_cpu_s"] = time.perf_counter() - began, _cpu_s(process.pid)
        finally:
            process.terminate()
            process.wait(30)
            browser.close()
    shutil.rmtree(runs_dir, ignore_errors=True)
    return result


def _median(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.median(kept) if kept else None


def run(older: Path | None = None, repeats: int = 3, runs: Path | None = None) -> dict[str, Any]:
    """Medians of each figure over ``repeats``, this checkout and ``older`` alternating."""
    from bench.ui_latency import measure_page_ready

    checkouts = {"now": ROOT, **({"older": older} if older else {})}
    browser = CHROMIUM.exists()
    samples: dict[str, dict[str, list[Any]]] = {k: {"python": [], "phases": [], "page": [], "form": [], "lists": []}
                                                for k in checkouts}
    for checkout in checkouts.values():  # as a person's second launch: the sources' bytecode written
        subprocess.run([sys.executable, "-m", "compileall", "-q", "bracket", "ui", "app.py"], cwd=checkout,
                       check=True, stdout=subprocess.DEVNULL)
    loads = [os.getloadavg()[0]]
    floors: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bracket-startup-") as work:
        for _ in range(repeats):
            floors.append(floor(paused=True))
            for label, checkout in checkouts.items():
                got = samples[label]
                got["python"].append(python_start())
                got["phases"].append(phases(Path(work), checkout))
                got["page"].append(measure_page_ready(Path(work), checkout=checkout))
                if browser:
                    got["form"].append(form_ready(Path(work), checkout))
                    if runs is not None:
                        got["lists"].append(form_ready(Path(work), checkout, runs))
            loads.append(os.getloadavg()[0])
    report: dict[str, Any] = {"load_average_1min": loads, "repeats": repeats, "gradio_floor_wall_cpu_s": {
        name: [_median([f["phases"][name][0] for f in floors]), _median([f["phases"][name][1] for f in floors])]
        for name in floors[0]["phases"]}}
    for label, got in samples.items():
        names = list(got["phases"][0]["phases"])
        table = {"python start": [_median([w for w, _ in got["python"]]), _median([c for _, c in got["python"]])]}
        for name in names:
            table[name] = [_median([p["phases"][name][0] for p in got["phases"]]),
                           _median([p["phases"][name][1] for p in got["phases"]])]
        figures = {"page_ready_s": _median([p["page_ready_s"] for p in got["page"]]),
                   "page_ready_cpu_s": _median([p.get("page_ready_cpu_s") for p in got["page"]]),
                   "page_ready_all": [p["page_ready_s"] for p in got["page"]]}
        for key in ("get_s", "get_cpu_s", "fields_s", "form_s", "form_cpu_s"):
            figures[f"form_{key}" if not key.startswith("form") else key] = _median([f.get(key) for f in got["form"]])
        figures["form_all"] = [f.get("form_s") for f in got["form"]]
        for key in ("form_s", "lists_s", "lists_cpu_s"):
            figures[f"with_sessions_{key}"] = _median([f.get(key) for f in got["lists"]])
        report[label] = {"paused_gc": got["phases"][0]["paused_gc"], "phases_wall_cpu_s": table, **figures}
    return report


if __name__ == "__main__":
    args = sys.argv[1:]
    print(json.dumps(run(Path(args[0]) if args else None, int(args[1]) if len(args) > 1 else 3,
                         Path(args[2]) if len(args) > 2 else None), indent=1))
