"""UI figures: page ready after ``python app.py``, app memory with a 500-trial (and
2000-trial) session loaded, and the Compare grid of 8 runs × 6 prompts.

* **page ready**: ``python app.py`` in a subprocess; seconds until ``GET /`` answers 200, and
  the app's CPU seconds until then (the page and its assets are served; ``bench.ui_startup``
  measures the form's render in a browser on top, and where the seconds go);
* **RSS with 500 trials** (and 2000 with ``--full``): a fresh process per size builds the
  whole app (``ui.blocks.build_app``), opens a session whose store holds that many finished
  trials through the app's ``SessionManager`` and runs the Search tab's poll, as a browser
  tab would — then reads its own resident memory;
* **Compare grid**: 8 runs × 6 prompts of 512 px PNGs, 5 saved steps; first build (writes 48
  thumbnails), a repeat, and after a restart (thumbnails on disk);
* **preset switch**: the Setup form settling after each switch of ``bench.ui_preset_switch``
  in Chromium (median and slowest), and any state that showed another preset's text.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, bench_fields, skip_python_probe
from tests.fakes.sample_grid import grid_fixture

PAGE_GOAL_S = 3.0  # issue 24
RSS_GOAL_MB = 400.0
GRID_GOAL_S = 1.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def measure_page_ready(workdir: Path, timeout_s: float = 120.0, checkout: Path = ROOT) -> dict[str, Any]:
    import httpx
    import psutil

    port = _free_port()
    env = dict(os.environ, BRACKET_RUNS_DIR=str(workdir / "runs-app"))
    log = open(workdir / "app.log", "wb")  # noqa: SIM115 - closed below
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "app.py", "--port", str(port)], cwd=checkout, env=env, stdout=log,
                               stderr=subprocess.STDOUT)
    ready = cpu = None
    try:
        while time.perf_counter() - started < timeout_s and process.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/", timeout=2).status_code == 200:
                    ready = time.perf_counter() - started
                    times = psutil.Process(process.pid).cpu_times()
                    cpu = times.user + times.system
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        rss = psutil.Process(process.pid).memory_info().rss / 2**20 if process.poll() is None else None
    finally:
        process.terminate()
        process.wait(30)
        log.close()
    return {"page_ready_s": ready, "page_ready_cpu_s": cpu, "idle_app_rss_mb": rss, "goal_s": PAGE_GOAL_S}


def measure_loaded_rss(workdir: Path, trials: int = 500, cpu_seconds: int = 0) -> dict[str, Any]:
    import psutil

    from bench.overhead import fill_store
    from bracket.app.manager import SessionManager
    from bracket.session import SearchSettings, Session
    from ui import search_tab
    from ui.blocks import build_app

    skip_python_probe()
    runs_dir = workdir / "runs-rss"
    session = Session.create("demo-cpu", bench_fields(workdir), SearchSettings(budget=trials + 10, sample_prompts="",
                                                                               warm_start=False),
                             out_dir=runs_dir, name=f"ui-{trials}")
    fill_store(session, trials, 100)
    folder = session.folder
    session.close()
    manager = SessionManager(runs_dir, allow_custom_executables=True)
    build_app(manager)
    manager.open(folder)
    began = time.perf_counter()
    search_tab.poll(manager, None, 0.6)
    poll_s = time.perf_counter() - began
    rss = psutil.Process().memory_info().rss / 2**20
    from bench.ui_poll import measure_poll_costs

    costs = measure_poll_costs(manager, cpu_seconds=cpu_seconds)
    manager.close()
    return {"trials": trials, "rss_mb": rss, "search_poll_s": poll_s, "goal_mb": RSS_GOAL_MB, **costs}


def measure_grid(workdir: Path) -> dict[str, Any]:
    from bracket.app.grid import build_grid
    from bracket.app.thumbs import ThumbnailCache

    runs, prompts, runs_dir = grid_fixture(workdir)

    def timed(thumbs: ThumbnailCache) -> float:
        began = time.perf_counter()
        build_grid(runs, prompts, thumbs=thumbs, runs_dir=runs_dir)
        return time.perf_counter() - began

    cache = ThumbnailCache(runs_dir / "s")
    timings = [timed(cache), timed(cache), timed(ThumbnailCache(runs_dir / "s"))]  # the last: a restarted app
    return {"first_s": timings[0], "repeat_s": timings[1], "after_restart_s": timings[2], "goal_s": GRID_GOAL_S}


def _loaded_in_fresh_process(workdir: Path, trials: int, cpu_seconds: int = 0) -> dict[str, Any]:
    """:func:`measure_loaded_rss` in a new process, so one size's memory does not count in the next."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(measure_loaded_rss, workdir / f"rss-{trials}", trials, cpu_seconds).result()


def run(workdir: Path, *, sizes: tuple[int, ...] = (500,), cpu_seconds: int = 20) -> dict[str, Any]:
    """Page ready, app RSS and the poll's costs (``bench.ui_poll``) with each session size in
    ``sizes`` (the first is the goal's 500; the CPU shares are measured on it), grid."""
    workdir.mkdir(parents=True, exist_ok=True)
    loaded = [_loaded_in_fresh_process(workdir, trials, cpu_seconds if i == 0 else 0)
              for i, trials in enumerate(sizes)]
    page = measure_page_ready(workdir)
    baseline = os.environ.get("BRACKET_BENCH_BASELINE")  # an older checkout's page ready, right after
    if baseline:
        page["legacy_page_ready_s"] = measure_page_ready(workdir, checkout=Path(baseline))["page_ready_s"]
        page["page_ready_again_s"] = measure_page_ready(workdir)["page_ready_s"]  # the load may have moved
    from bench.ui_preset_switch import measure as measure_switch

    return {"page": page, "loaded": loaded[0], "loaded_sizes": loaded, "grid": measure_grid(workdir),
            "preset_switch": measure_switch(workdir)}
