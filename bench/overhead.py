"""Overhead and scale: what Bracket itself costs around the trainer runs.

Four measurements (``run(short=True)`` is the quick version, ``--full`` the long one):

* **orchestration gap** — a real session (demo-cpu on the landscape trainer, which exits
  as soon as it has written its loss) runs ``gap_trials`` configs; the gap between two runs
  is the next run's ``started_at`` minus the previous run's ``finished_at`` in the store, so
  it holds everything the session does between trainer processes (reading and recording the
  run, scoring every run, telling the study, proposing the next config, preparing its
  files) and none of the trainer's own start-up. Median and p95. Goal: median <= 0.2 s.
* **suggestion latency** — a store is filled directly with N finished configs (each one
  Optuna trial, one config row and one done run with a ``series_points``-point loss series,
  like a run of the default 100 steps), then ``Session.scored_configs()`` (what the sampler
  sees: every run re-scored) and ``Session.controller().next()`` (that plus TPE) are timed,
  each the median of 3 calls. N = 100, 500 (and 2000 with ``--full``). Goal: <= 0.5 s at 500.
  Each N runs in a fresh process, which also reports its **RSS** and the **store size**
  (database plus WAL) at that size.
* **demo search wall time** — ``python -m bracket run --preset demo-cpu --budget 4`` with
  the real demo trainer on a fresh demo dataset (made by ``python -m bracket demo-data``).
  Reported as not available when the demo trainer or its torch/diffusers/accelerate are
  missing. Goal: <= 3 min on 2 cores.

Results go to ``bench/results/overhead.json``.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from bench.common import (
    ROOT,
    bench_fields,
    median,
    median_time,
    percentile,
    real_python_probe,
    skip_python_probe,
    write_result,
)
from bench.landscape_trainer import (
    LANDSCAPE_ENV,
    LANDSCAPES,
    LR_RANGE,
    OPTIMIZERS,
    SCHEDULERS,
    WARMUPS,
    loss_curve,
)

GAP_GOAL_S = 0.2
SUGGEST_GOAL_S = 0.5
DEMO_GOAL_S = 180.0
DEMO_TIMEOUT_S = 900


def measure_gap(workdir: Path, trials: int, steps: int = 100) -> dict[str, Any]:
    """A real session of ``trials`` instant runs; the gaps between them from the store."""
    from bracket.session import SearchSettings, Session

    skip_python_probe()
    os.environ[LANDSCAPE_ENV] = "reference"
    fields = bench_fields(workdir)
    session = Session.create("demo-cpu", fields, SearchSettings(budget=trials, steps=steps, sample_prompts=""),
                             out_dir=workdir / "sessions", name=f"gap-{trials}", worker_id="bench-gap")
    started = time.time()
    status = session.run()
    wall = time.time() - started
    runs = [r for r in session.store.runs(session.name, with_series=False) if r["kind"] != "setup"]
    session.close()
    gaps = [b["started_at"] - a["finished_at"] for a, b in itertools.pairwise(runs)]
    durations = [r["finished_at"] - r["started_at"] for r in runs]
    return {"status": status, "trials": len(runs), "wall_s": wall,
            "gap_median_s": median(gaps), "gap_p95_s": percentile(gaps, 0.95), "gap_max_s": max(gaps, default=0),
            "gap_first_half_median_s": median(gaps[: len(gaps) // 2]),
            "gap_second_half_median_s": median(gaps[len(gaps) // 2:]),
            "run_median_s": median(durations), "goal_s": GAP_GOAL_S,
            "meets_goal": median(gaps) <= GAP_GOAL_S}


def _random_params(rng: random.Random) -> dict[str, Any]:
    import math

    low, high = (math.log10(v) for v in LR_RANGE)
    return {"optimizer_type": rng.choice(OPTIMIZERS), "learning_rate": 10 ** rng.uniform(low, high),
            "lr_scheduler": rng.choice(SCHEDULERS), "lr_warmup_steps": rng.choice(WARMUPS), "batch_size": 16}


def fill_store(session, count: int, series_points: int, seed: int = 0) -> None:
    """``count`` finished configs, written the way the session writes them, with the reference
    landscape's loss curves (``tests.fakes.filled_store``)."""
    from tests.fakes.filled_store import fill_store as fill

    landscape = LANDSCAPES["reference"]
    fill(session, count, series_points, seed, params=_random_params,
         curve=lambda params, points, index: loss_curve(landscape, params, points, seed=index))


def _store_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob("bracket.db*") if p.is_file())


def measure_suggestion(count: int, series_points: int, workdir: str) -> dict[str, Any]:
    """Fill a store with ``count`` finished configs, then time what one suggestion costs."""
    import psutil

    from bracket.session import SearchSettings, Session
    from bracket.session.store.change_memo import forget

    skip_python_probe()
    folder = Path(workdir) / f"suggest-{count}"
    fields = bench_fields(Path(workdir))
    session = Session.create("demo-cpu", fields, SearchSettings(budget=count + 10, sample_prompts="",
                                                                warm_start=False),
                             out_dir=folder, name=f"suggest-{count}", worker_id="bench-suggest")
    started = time.perf_counter()
    fill_store(session, count, series_points)
    fill_s = time.perf_counter() - started
    # each proposal as after a run ends: the store changed, so nothing derived from it is kept
    # (``change_memo``; the sampler's history and the proposal's why line share one scoring)
    scored_s = median_time(lambda: (forget(session), session.scored_configs()))
    next_s = median_time(lambda: (forget(session), session.controller().next()))
    snapshot_s = median_time(session.snapshot)
    rss = psutil.Process().memory_info().rss
    size = _store_bytes(session.folder)
    session.close()
    return {"trials": count, "series_points": series_points, "fill_s": fill_s, "scored_configs_s": scored_s,
            "next_s": next_s, "snapshot_s": snapshot_s, "rss_mb": rss / 2**20, "store_mb": size / 2**20,
            "goal_s": SUGGEST_GOAL_S if count == 500 else None}


def measure_demo(workdir: Path, timeout_s: float = DEMO_TIMEOUT_S) -> dict[str, Any]:
    """Wall time of the real 4-run demo search, or why it cannot run here."""
    script = ROOT / "bracket" / "trainer" / "scripts" / "demo_train.py"
    if not script.is_file():
        return {"available": False, "reason": f"{script.relative_to(ROOT)} does not exist"}
    problems = real_python_probe(sys.executable)
    if problems:
        return {"available": False, "reason": " ".join(problems)}
    data = workdir / "demo-data"
    made = subprocess.run([sys.executable, "-m", "bracket", "demo-data", str(data)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False)
    if made.returncode != 0:
        return {"available": False, "reason": f"demo-data failed: {(made.stderr or made.stdout).strip()[-300:]}"}
    command = [sys.executable, "-m", "bracket", "run", "--preset", "demo-cpu", "--budget", "4",
               "--out", str(workdir / "demo-runs"), "--name", "demo-bench",
               "--set", f"dataset={data / 'dataset.toml'}", "--quiet"]
    started = time.time()
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return {"available": True, "wall_s": None, "reason": f"did not finish in {timeout_s:.0f} s",
                "goal_s": DEMO_GOAL_S, "meets_goal": False}
    wall = time.time() - started
    result: dict[str, Any] = {"available": True, "exit_code": done.returncode, "wall_s": wall,
                              "goal_s": DEMO_GOAL_S, "meets_goal": done.returncode == 0 and wall <= DEMO_GOAL_S,
                              "command": "python -m bracket run --preset demo-cpu --budget 4"}
    if done.returncode != 0:
        result["output_tail"] = (done.stdout + done.stderr)[-800:]
    return result


def run(*, short: bool = True, results_dir: Path | None = None, demo: bool = True, log=print,
        sizes: tuple[int, ...] | None = None, gap_trials: int | None = None) -> dict[str, Any]:
    """Run the overhead benchmarks and write their JSON; returns the data."""
    sizes = sizes or ((100, 500) if short else (100, 500, 2000))
    gap_trials = gap_trials or (20 if short else 60)
    data: dict[str, Any] = {"short": short}
    with tempfile.TemporaryDirectory(prefix="bracket-bench-") as workdir:
        os.environ.setdefault("PYTHONHASHSEED", "0")
        log(f"  overhead: orchestration gap over {gap_trials} trials")
        data["gap"] = measure_gap(Path(workdir) / "gap", gap_trials)
        context = multiprocessing.get_context("spawn")
        data["suggestion"] = []
        for count in sizes:
            log(f"  overhead: suggestion latency with {count} finished trials")
            with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:  # a fresh process per size
                data["suggestion"].append(pool.submit(measure_suggestion, count, 100, workdir).result())
        if demo:
            log("  overhead: demo search (python -m bracket run --preset demo-cpu --budget 4)")
            data["demo"] = measure_demo(Path(workdir))
    path = write_result("overhead", data, results_dir)
    log(f"  overhead: wrote {path}")
    return data
