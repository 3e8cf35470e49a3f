"""What watching a search costs the app (issue 24), measured on a session of N finished trials.

Called by :func:`bench.ui_latency.measure_loaded_rss` in the fresh process that holds the
app and the session, so every figure of one size comes from one process, side by side:

* **legacy poll**: the Search-tab poll as it was before issue 24, re-created here from the
  same public pieces (snapshot rebuilt every tick, the whole trial table rendered and hashed,
  the chart's series looked up) — the ``before`` of every ratio;
* **poll, nothing changed**: a tab that already has everything polls the next tick;
* **poll, one run progressed**: the run in progress got one more loss point and step;
* **poll after a change**: a run finished in the store (snapshot rebuilt, table page redrawn);
* **CPU share**: process CPU time over wall time while 1 (and 3) tabs poll once a second for
  ``seconds`` during a run that logs one loss point a second (the legacy poll too, 1 tab).
  In-process: Gradio's own serving of the updates (websocket, JSON) is not counted;
* **Results tab build**: ``results_tab.refresh`` (the leaderboard, shown first) and
  ``results_tab.refresh_report`` (charts, importance, the report's pictures, filled in after
  it), first and again with nothing changed; the verdict study it brings up to date is written
  in the background (its time is reported apart, waited for before the next figure);
* **after a restart** (:func:`restart_costs`): ``python -m bracket status <folder>`` as a
  subprocess (imports included) — cold (nothing kept in ``<session>/views``), first (run
  summaries kept: it computes and keeps its view, ``bracket.status.view``), again with nothing
  changed — and the Results tab of a freshly started app, with and without kept summaries;
  with ``BRACKET_BENCH_BASELINE=<older checkout>`` that checkout's ``status`` and Results tab
  are timed first on the same session (the legacy figures).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, forget_kept_views, median_time


def legacy_poll(manager: Any, smoothing: float = 0.6) -> None:
    """The per-tick work of the poll before issue 24 (the comparison point)."""
    from bracket.session.process import read_log_tail
    from bracket.session.store.change_memo import forget
    from ui.render import fingerprint, loss_figure, progress_html, runs_frame, status_markdown
    from ui.search_tab import RECENT_RUNS

    forget(manager.session)  # the old poll scored every run on every tick (no per-change scores)
    snap = manager.session.snapshot()
    status_markdown(snap), progress_html(snap)
    log_path = (snap.current or {}).get("log_path")
    if log_path:
        read_log_tail(Path(log_path), 40)
    frame = runs_frame(snap)
    fingerprint(frame.to_dict("split"))
    current = (snap.current or {}).get("run_id")
    finished = [r["id"] for r in snap.runs if r["kind"] != "setup" and r["id"] != current
                and r["status"] not in ("pending", "running")][-RECENT_RUNS:]
    series = manager.reading.loss_series(finished + ([current] if current is not None else []))
    labels = {r["id"]: f"#{r['id']} {r['config_name']} s{r['seed']}" for r in snap.runs}
    fingerprint([smoothing, current, sorted((k, len(v), v[-1] if v else None) for k, v in series.items())])
    if current is not None:  # the chart changed: the old poll drew it again, as the new one does
        loss_figure(series, labels, smoothing=smoothing, highlight=current)


class LiveRun:
    """A run in progress in the app's own process: one more loss point per :meth:`step`."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.run_id = session.store.add_run(session.name, kind="search", stage="search", label="live", seed=1,
                                            status="running", max_steps=100_000, last_step=0)
        self.live = {"run_id": self.run_id, "label": "live", "step": 0, "max_steps": 100_000, "loss": [],
                     "samples": [], "log_path": "", "started_at": time.time()}
        session.executor.current = self.live

    def step(self) -> None:
        step = self.live["step"] + 1
        self.live["step"], self.live["loss"] = step, [*self.live["loss"], [step, 1.0 / step]]
        if step % 3 == 0:  # what the executor stores every PERSIST_SECONDS
            self.session.store.update_run(self.run_id, last_step=step, loss=self.live["loss"])

    def end(self) -> None:
        self.session.executor.current = None
        self.session.store.update_run(self.run_id, status="done", finished_at=time.time())


def cpu_share(manager: Any, live: LiveRun, tabs: int, seconds: int, *, legacy: bool = False) -> float:
    from ui import search_tab

    sent = [search_tab.poll(manager, {}, 0.6)[-1] for _ in range(tabs)]
    cpu, began = time.process_time(), time.perf_counter()
    for tick in range(seconds):
        live.step()
        for index in range(tabs):
            if legacy:
                legacy_poll(manager)
            else:
                sent[index] = search_tab.poll(manager, sent[index], 0.6)[-1]
        time.sleep(max(0.0, began + tick + 1 - time.perf_counter()))
    return (time.process_time() - cpu) / (time.perf_counter() - began)


def measure_poll_costs(manager: Any, *, cpu_seconds: int = 0) -> dict[str, Any]:
    """Every figure above for the open session of ``manager`` (its snapshot TTL set to 0)."""
    from ui import results_tab, search_tab

    manager.snapshot_ttl = 0.0
    session = manager.session
    out: dict[str, Any] = {"legacy_poll_s": median_time(lambda: legacy_poll(manager), 5)}
    sent = search_tab.poll(manager, {}, 0.6)[-1]
    out["poll_unchanged_s"] = median_time(lambda: search_tab.poll(manager, sent, 0.6), 5)
    live = LiveRun(session)
    sent = search_tab.poll(manager, {}, 0.6)[-1]

    def progressed() -> None:
        live.step()
        search_tab.poll(manager, sent, 0.6)

    out["poll_progressed_s"] = median_time(progressed, 5)
    out["legacy_progressed_s"] = median_time(lambda: (live.step(), legacy_poll(manager)), 5)
    if cpu_seconds:
        out["cpu_seconds"] = cpu_seconds
        out["cpu_share_1_tab"] = cpu_share(manager, live, 1, cpu_seconds)
        out["cpu_share_3_tabs"] = cpu_share(manager, live, 3, cpu_seconds)
        out["legacy_cpu_share_1_tab"] = cpu_share(manager, live, 1, cpu_seconds, legacy=True)
    live.end()

    def changed() -> None:
        session.store.add_run(session.name, kind="search", stage="search", label="x", seed=1, status="failed")
        search_tab.poll(manager, sent, 0.6)

    out["poll_after_change_s"] = median_time(changed, 3)
    began = time.perf_counter()
    results_tab.refresh(manager)
    out["results_cold_s"] = time.perf_counter() - began  # the leaderboard half (what the tab shows first)
    report_half = getattr(results_tab, "refresh_report", None)
    began = time.perf_counter()
    if report_half is not None:
        report_half(manager)  # charts, importance, the report's pictures: filled in after the board
    out["results_report_s"] = time.perf_counter() - began
    began = time.perf_counter()
    manager.wait_for_background()  # the verdict study, written in the background after the first build
    out["verdict_background_s"] = time.perf_counter() - began
    out["results_again_s"] = median_time(
        lambda: (results_tab.refresh(manager), report_half and report_half(manager)), 3)
    out.update(restart_costs(session.folder))
    return out


def restart_costs(folder: Path) -> dict[str, Any]:
    """What a new process pays: ``status`` and the Results tab of an app just started on the
    session (``results_seconds``), with and without the summaries and views the session keeps
    (``<session>/views``; the status view, in the store: ``forget_kept_views``) (a search
    that scored its runs leaves its run summaries there; a store copied from elsewhere has
    none: "cold"), side by side with ``BRACKET_BENCH_BASELINE=<older checkout>`` when it is
    set (the legacy figures)."""
    import shutil

    out: dict[str, Any] = {}
    views = folder / "views"
    kept = views / "run_summaries.json"
    saved = kept.read_bytes() if kept.is_file() else None
    baseline = os.environ.get("BRACKET_BENCH_BASELINE")  # an older checkout: its figures, side by side
    if baseline:
        shutil.rmtree(views, ignore_errors=True)
        forget_kept_views(folder)
        out["legacy_status_cli_s"], _ = status_seconds(folder, Path(baseline))  # first: computes its view
        out["legacy_status_cli_again_s"], _ = status_seconds(folder, Path(baseline))
        out["legacy_results_restart"] = results_seconds(folder, Path(baseline))
    shutil.rmtree(views, ignore_errors=True)
    forget_kept_views(folder)
    out["status_cli_cold_s"], _ = status_seconds(folder)  # nothing kept: every series read and summarised
    forget_kept_views(folder)
    if saved is not None:  # the summaries the app's own scoring kept (what a search leaves)
        kept.write_bytes(saved)
    out["status_cli_s"], out["status_cli_exit"] = status_seconds(folder)  # first: computes its view
    out["status_cli_again_s"], _ = status_seconds(folder)  # nothing changed: the kept view
    out["results_restart"] = results_seconds(folder)  # run summaries kept
    shutil.rmtree(views, ignore_errors=True)
    out["results_restart_cold"] = results_seconds(folder)  # nothing kept
    return out


def status_seconds(folder: Path, checkout: Path = ROOT) -> tuple[float, int]:
    """Wall seconds of ``python -m bracket status <folder>`` run from ``checkout`` (imports included)."""
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "bracket", "status", str(folder)], cwd=checkout,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - began, done.returncode


_RESULTS_PROBE = """
import json, sys, time
from pathlib import Path
from bench.common import skip_python_probe
from bracket.app.manager import SessionManager
from ui import results_tab
skip_python_probe()
folder = Path(sys.argv[1])
manager = SessionManager(folder.parent, allow_custom_executables=True)
manager.open(folder)
began, cpu = time.perf_counter(), time.thread_time()
results_tab.refresh(manager)
board, board_cpu = time.perf_counter() - began, time.thread_time() - cpu
report_half = getattr(results_tab, "refresh_report", None)  # an older checkout does it all in refresh
began = time.perf_counter()
if report_half is not None:
    report_half(manager)
print(json.dumps({"board_s": board, "board_cpu_s": board_cpu, "report_s": time.perf_counter() - began}))
manager.wait_for_background()
manager.close()
"""


def results_seconds(folder: Path, checkout: Path = ROOT) -> dict[str, Any]:
    """The Results tab of an app just started on ``folder`` from ``checkout``: seconds until the
    leaderboard is built (``board_s``; imports not counted; ``board_cpu_s``: the CPU seconds of the
    thread that built it, which move less with the load) and until the charts and the report
    are (``report_s`` more; 0 for a checkout that builds everything in one go)."""
    done = subprocess.run([sys.executable, "-c", _RESULTS_PROBE, str(folder)], cwd=checkout, capture_output=True,
                          text=True, check=False)
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"error": (done.stderr or done.stdout)[-500:]}
