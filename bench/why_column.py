"""What the Search tab's "why" column costs (issue 20, item 8), side by side in one process.

``python -m bench.why_column [TRIALS]`` fills a demo session with TRIALS finished trials
(``bench.overhead.fill_store``, as ``python -m bench ui``), opens it in a ``SessionManager``
and times, on the same snapshot:

* the trial table's build (one page, rendered and fingerprinted, as the poll does once per
  change) without the column and with it, the lines already kept — the steady state;
* all TRIALS lines written cold (the first poll of a reopened session);
* one new config's line (what a change that adds a config costs on top: one read of the
  configs, ratings and votes).

A poll that finds nothing changed never builds the table, so it does not reach this code.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def run(trials: int = 500) -> dict[str, float]:
    from bench.common import median_time
    from bench.overhead import fill_store
    from bench.ui_latency import bench_fields, skip_python_probe
    from bracket.app.manager import SessionManager
    from bracket.session import SearchSettings, Session
    from ui.render import fingerprint, runs_frame
    from ui.search_tab import PAGE_ROWS

    skip_python_probe()
    with tempfile.TemporaryDirectory(prefix="bracket-why-") as folder:
        work = Path(folder)
        session = Session.create("demo-cpu", bench_fields(work), SearchSettings(
            budget=trials + 10, sample_prompts="", warm_start=False), out_dir=work / "runs", name=f"why-{trials}")
        fill_store(session, trials, 100)
        session.close()
        manager = SessionManager(work / "runs", allow_custom_executables=True)
        manager.open(work / "runs" / f"why-{trials}")
        snap = manager.snapshot()

        def table(reasons: Any = None) -> None:
            fingerprint(runs_frame(snap, page=1, page_rows=PAGE_ROWS, reasons=reasons).to_dict("split"))

        without = median_time(table, 5)
        began = time.perf_counter()
        manager.reading.short_reasons(snap)
        cold = time.perf_counter() - began
        kept = median_time(lambda: table(manager.reading.short_reasons(snap)), 5)
        without_again = median_time(table, 5)
        lines = manager.reading.short_reasons(snap)  # the lines kept for the session (the same dict)
        lines.pop(max(lines))  # as if the newest config had just appeared
        began = time.perf_counter()
        manager.reading.short_reasons(snap)
        new = time.perf_counter() - began
        manager.close()
    return {"trials": trials, "table_without_s": min(without, without_again), "table_with_s": kept,
            "all_lines_cold_s": cold, "one_new_config_s": new}


if __name__ == "__main__":
    result = run(int(sys.argv[1]) if len(sys.argv) > 1 else 500)
    print(f"{result['trials']} trials: trial table build without the why column {result['table_without_s']:.4f} s, "
          f"with it (lines kept) {result['table_with_s']:.4f} s; all lines cold {result['all_lines_cold_s']:.4f} s; "
          f"one new config {result['one_new_config_s']:.4f} s")
