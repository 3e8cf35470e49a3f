"""What a new process pays on a long session, repeated and alternated with an older checkout
(issue 24): ``python -m bench.ui_restart SESSION_FOLDER OLDER_CHECKOUT [REPEATS] [--writer|--after-rating|--shared]``.

On a shared machine one timing of a subprocess says little: the load moves by seconds
between two runs. So each figure is taken ``REPEATS`` times, this checkout and the older one
alternating, and the medians are printed (JSON), for ``python -m bracket status`` with the
child's CPU seconds beside the wall seconds (CPU time moves less with the load):

* **status**: the older checkout first (nothing kept) and again; this one cold (nothing kept
  in ``<session>/views``), first with only the run summaries kept, and again; then both
  checkouts **after a rating** (a new rating written to the store just before each: the kept
  view is stale, everything else kept — what ``status`` meets during a search);
* **Results tab in a just-started app** (``bench.ui_poll.results_seconds``): the older
  checkout; this one with the run summaries of the first ``status`` kept, and with nothing kept;
* **page ready after ``python app.py``** (``bench.ui_latency.measure_page_ready``): both;
* **status after the writer's change** (:func:`writer_figures`; alone with ``--writer``): a
  child process of each checkout changes the store the way a search or the app does, then
  ``status`` is timed — *after a run finished* (a finished config and run added by an opened
  ``Session``, whose ``on_change`` callbacks are called where the checkout has them: what the
  search does once per run) and *after a rating through the app* (``SessionManager.compare.rate``,
  then its background work waited for). The child's own wall and CPU seconds are the
  writer's cost;
* **status after a rating no Bracket process refreshed** (:func:`rating_figures`; alone with
  ``--after-rating``): a rating written straight to the store before each call, both
  checkouts' sources compiled first;
* **status on another machine's folder after a worker's run** (:func:`shared_figures`; alone
  with ``--shared``): the writer's *run* through SESSION_FOLDER (machine A), then ``status``
  in a second folder of the same store (machine B: its own ``session.json``, its run
  summaries kept), both checkouts' sources compiled first.

The session folder is changed (its ``views`` are removed and rebuilt); use a copy, e.g. the
2000-trial session that ``bench.overhead.fill_store`` writes.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, forget_kept_views


def _status(folder: Path, checkout: Path) -> tuple[float, float]:
    """(wall, CPU seconds) of ``python -m bracket status FOLDER`` run from ``checkout``."""
    before, began = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run([sys.executable, "-m", "bracket", "status", str(folder)], cwd=checkout,
                   stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - began, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _rate(folder: Path, index: int) -> None:
    """A new rating of one run (a different one each time): the store changes, as in a search."""
    from bracket.session.store import open_session_store

    store, name = open_session_store(folder)
    try:
        runs = [r for r in store.runs(name, with_series=False) if r["kind"] != "setup"]
        store.add_rating(name, runs[(37 * index) % len(runs)]["id"], float(1 + index % 10))
    finally:
        store.close()


#: a child process's change of the store at ``argv[1]``, as a search (``run``) or the app (``rate``) makes it
_WRITER = """
import sys, time
from pathlib import Path
folder, what, index = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
if what == "run":
    from bracket.session import Session
    session = Session.open(folder, validate=False)
    store, name = session.store, session.name
    done = [r for r in store.runs(name, with_series=False) if r["kind"] == "search" and r["status"] == "done"]
    model = done[index % len(done)]
    number = 1 + max(c["trial_number"] for c in store.configs(name))  # a new trial, run after run
    config = store.add_config(name, trial_number=number, kind="search", name=f"writer-{number}",
                              params=model["params"], worker="bench")
    store.update_config(config, status="done", value=0.5)
    now = time.time()
    store.add_run(name, config_id=config, kind="search", stage="search", label=f"writer-{number} seed 42", seed=42,
                  seed_index=0, params=model["params"], status="done", exit_code=0, max_steps=100, last_step=100,
                  started_at=now, finished_at=now, duration_s=1.0, worker="bench",
                  loss=[[s, 1.0 / s] for s in range(1, 101)])
    if hasattr(session, "on_change"):  # what the CLI's search adds; the search calls it once per run
        from bracket.status import ViewRefresher
        session.on_change.append(ViewRefresher())
        session.changed()
    session.close()
else:
    from bracket.app.manager import SessionManager
    manager = SessionManager(folder.parent)
    manager.open(folder)
    runs = [r["id"] for r in manager.compare.scorable_runs()]
    manager.compare.rate(runs[(37 * index) % len(runs)], float(1 + index % 10))
    manager.wait_for_background(120)
    manager.close()
"""


def _child(folder: Path, checkout: Path, what: str, index: int) -> tuple[float, float]:
    """(wall, CPU seconds) of the writer child ``what`` run from ``checkout``."""
    before, began = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run([sys.executable, "-c", _WRITER, str(folder), what, str(index)], cwd=checkout,
                   stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - began, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def writer_figures(folder: Path, older: Path, repeats: int = 3) -> dict[str, Any]:
    """``status`` right after a search's run or an app's rating changed the store, written by
    each checkout's own writer path, alternating; medians and every pair (wall, CPU)."""
    figures: dict[str, list[tuple[float, float]]] = {}
    index = 0
    for _ in range(repeats):
        for what in ("run", "rate"):
            for label, checkout in (("legacy", older), ("now", ROOT)):
                index += 1
                figures.setdefault(f"{label} writer: {what}", []).append(_child(folder, checkout, what, index))
                figures.setdefault(f"{label} status after: {what}", []).append(_status(folder, checkout))
    median = statistics.median
    return {"figures": {k: {"wall_s": median(w for w, _ in v), "cpu_s": median(c for _, c in v), "all": v}
                        for k, v in figures.items()}, "load_average_end": os.getloadavg()}


def rating_figures(folder: Path, older: Path, repeats: int = 5) -> dict[str, Any]:
    """``status`` after a rating written straight to the store (no Bracket process refreshed the
    view; the run summaries kept), each checkout in turn, both checkouts' sources compiled first
    (as ``install.sh`` does); medians and every pair (wall, CPU)."""
    for checkout in (older, ROOT):
        subprocess.run([sys.executable, "-m", "compileall", "-q", "bracket"], cwd=checkout,
                       stdout=subprocess.DEVNULL, check=True)
    figures: dict[str, list[tuple[float, float]]] = {"legacy": [], "now": []}
    loads = [os.getloadavg()[0]]
    for index in range(repeats):
        for label, checkout in (("legacy", older), ("now", ROOT)):
            _rate(folder, 1000 + 2 * index + (label == "now"))
            figures[label].append(_status(folder, checkout))
            loads.append(os.getloadavg()[0])
    median = statistics.median
    return {"figures": {k: {"wall_s": median(w for w, _ in v), "cpu_s": median(c for _, c in v), "all": v}
                        for k, v in figures.items()}, "load_average": [min(loads), max(loads)]}


def run(folder: Path, older: Path, repeats: int = 3) -> dict[str, Any]:
    from bench.ui_latency import measure_page_ready
    from bench.ui_poll import results_seconds

    views = folder / "views"
    status: dict[str, list[tuple[float, float]]] = {k: [] for k in (
        "legacy first", "legacy again", "cold", "first (summaries kept)", "again",
        "legacy after a rating", "after a rating")}
    results: dict[str, list[dict[str, Any]]] = {"legacy": [], "summaries kept": [], "nothing kept": []}
    page: dict[str, list[float | None]] = {"legacy": [], "now": []}
    with tempfile.TemporaryDirectory(prefix="bracket-restart-") as work:
        for _ in range(repeats):
            shutil.rmtree(views, ignore_errors=True)
            forget_kept_views(folder)
            status["legacy first"].append(_status(folder, older))
            status["legacy again"].append(_status(folder, older))
            results["legacy"].append(results_seconds(folder, older))
            shutil.rmtree(views, ignore_errors=True)
            forget_kept_views(folder)
            status["cold"].append(_status(folder, ROOT))
            kept = (views / "run_summaries.json").read_bytes()
            forget_kept_views(folder)
            status["first (summaries kept)"].append(_status(folder, ROOT))
            status["again"].append(_status(folder, ROOT))
            _rate(folder, 2 * len(status["again"]))
            status["legacy after a rating"].append(_status(folder, older))
            _rate(folder, 2 * len(status["again"]) + 1)
            status["after a rating"].append(_status(folder, ROOT))
            results["summaries kept"].append(results_seconds(folder, ROOT))
            shutil.rmtree(views, ignore_errors=True)
            results["nothing kept"].append(results_seconds(folder, ROOT))
            views.mkdir(exist_ok=True)
            (views / "run_summaries.json").write_bytes(kept)
            page["legacy"].append(measure_page_ready(Path(work), checkout=older)["page_ready_s"])
            page["now"].append(measure_page_ready(Path(work))["page_ready_s"])
    median = statistics.median
    return {
        "status": {k: {"wall_s": median(w for w, _ in v), "cpu_s": median(c for _, c in v), "all": v}
                   for k, v in status.items()},
        "results": {k: {"board_s": median(r.get("board_s", float("nan")) for r in v),
                        "board_cpu_s": median(r.get("board_cpu_s", float("nan")) for r in v),
                        "report_s": median(r.get("report_s", float("nan")) for r in v), "all": v}
                    for k, v in results.items()},
        "page_ready_s": {k: {"median": median(x for x in v if x is not None) if any(x is not None for x in v)
                             else None, "all": v} for k, v in page.items()},
        "writer": writer_figures(folder, older, repeats),
        "load_average_end": os.getloadavg(),
    }


def _second_folder(folder: Path, label: str) -> Path:
    """Another machine's folder of the session in ``folder``: its own ``session.json`` naming the same store."""
    from bracket.session.store import sqlite_url

    info = json.loads((folder / "session.json").read_text(encoding="utf-8"))
    storage = str(info.get("storage", "bracket.db"))
    other = Path(tempfile.mkdtemp(prefix=f"bracket-machine-b-{label}-")) / folder.name
    other.mkdir()
    url = storage if "://" in storage else sqlite_url(folder / storage)
    (other / "session.json").write_text(json.dumps({"name": info["name"], "storage": url}), encoding="utf-8")
    return other


def shared_figures(folder: Path, older: Path, repeats: int = 5) -> dict[str, Any]:
    """``status`` in a second folder of the store right after each checkout's writer added a
    finished run through ``folder`` and refreshed the view there (what a worker on another
    machine does), alternating; medians and every pair (wall, CPU)."""
    for checkout in (older, ROOT):
        subprocess.run([sys.executable, "-m", "compileall", "-q", "bracket"], cwd=checkout,
                       stdout=subprocess.DEVNULL, check=True)
    checkouts = (("legacy", older), ("now", ROOT))
    seconds = {label: _second_folder(folder, label) for label, _ in checkouts}
    try:
        for label, checkout in checkouts:  # the second folder's run summaries kept, as its own worker leaves them
            _status(seconds[label], checkout)
        figures: dict[str, list[tuple[float, float]]] = {}
        for index in range(repeats):
            for label, checkout in checkouts:
                figures.setdefault(f"{label} writer: run (machine A)", []).append(
                    _child(folder, checkout, "run", 2 * index + (label == "now")))
                figures.setdefault(f"{label} status on machine B", []).append(_status(seconds[label], checkout))
    finally:
        for other in seconds.values():
            shutil.rmtree(other.parent, ignore_errors=True)
    median = statistics.median
    return {"figures": {k: {"wall_s": median(w for w, _ in v), "cpu_s": median(c for _, c in v), "all": v}
                        for k, v in figures.items()}, "load_average_end": os.getloadavg()}


if __name__ == "__main__":
    argv = [a for a in sys.argv[1:] if a not in ("--writer", "--after-rating", "--shared")]
    if len(argv) < 2:
        raise SystemExit(__doc__.splitlines()[1])
    measure = (writer_figures if "--writer" in sys.argv else rating_figures if "--after-rating" in sys.argv
               else shared_figures if "--shared" in sys.argv else run)
    print(json.dumps(measure(Path(argv[0]), Path(argv[1]), int(argv[2]) if len(argv) > 2 else 3), indent=1))
