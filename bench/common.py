"""What the benchmarks share: a session on the landscape trainer, machine facts, JSON output.

Every benchmark trial is a real Bracket session: the ``demo-cpu`` preset with its *Training
script* field pointed at ``bench/landscape_trainer.py`` and its *Trainer python* at the
test suite's fake python (which drops the ``accelerate launch`` prefix and runs the script
with this interpreter). So each trial is a real subprocess, read back through real tfevents,
scored by the real judges and proposed by the real controller.

One check is skipped: the demo adapter's pre-flight probes the trainer python by importing
torch, diffusers and accelerate (seconds per session), which the landscape trainer does not
use (see :func:`skip_python_probe`).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "bench" / "results"
LANDSCAPE_TRAINER = ROOT / "bench" / "landscape_trainer.py"


def skip_python_probe() -> None:
    """Skip the demo adapter's torch probe of the trainer python in this process.

    The landscape trainer needs only the standard library, so whether the (fake) trainer
    python can import torch, diffusers and accelerate is irrelevant here — and probing it
    costs seconds per session. ``real_python_probe`` keeps the real check for the demo run.
    """
    from bracket.trainer.demo import adapter as demo

    if getattr(demo.trainer_python_problems, "bench_skipped", False):
        return

    def no_problems(*_args: Any, **_kwargs: Any) -> list[str]:
        return []

    no_problems.bench_skipped = True  # type: ignore[attr-defined]
    no_problems.original = demo.trainer_python_problems  # type: ignore[attr-defined]
    demo.trainer_python_problems = no_problems  # type: ignore[assignment]


def real_python_probe(python: str) -> list[str]:
    """The demo adapter's real probe, even after :func:`skip_python_probe`."""
    from bracket.trainer.demo import adapter as demo

    probe = getattr(demo.trainer_python_problems, "original", demo.trainer_python_problems)
    return probe(python)


def bench_fields(workdir: Path, images: int = 3) -> dict[str, str]:
    """demo-cpu field values that train on the landscape trainer (made once per workdir and size;
    20 images or more let a session hold out a validation split)."""
    from PIL import Image

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.fakes import make_fake_python

    workdir.mkdir(parents=True, exist_ok=True)
    python = workdir / "bin" / "python"
    if not python.exists():
        make_fake_python(workdir / "bin")
    data = workdir / ("data" if images == 3 else f"data{images}")
    if not (data / f"{images - 1:03d}.txt").exists():
        data.mkdir(parents=True, exist_ok=True)
        for index in range(images):
            colour = ("red", "green", "blue")[index % 3]
            Image.new("RGB", (8, 8), colour).save(data / f"{index:03d}.png")
            (data / f"{index:03d}.txt").write_text(f"a {colour} circle", encoding="utf-8")
    return {"dataset": str(data), "trainer_python": str(python), "train_script": str(LANDSCAPE_TRAINER)}


def machine() -> dict[str, Any]:
    """Cores, Python, platform and date, recorded with every result."""
    return {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(), "date": time.strftime("%Y-%m-%d"),
            "load_average_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def median_time(call: Callable[[], Any], repeats: int = 3) -> float:
    """The median wall time of ``repeats`` calls of ``call`` (seconds)."""
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        call()
        times.append(time.perf_counter() - began)
    return median(times)


def write_result(name: str, data: dict[str, Any], results_dir: Path | None = None) -> Path:
    folder = Path(results_dir or RESULTS_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **data}, indent=1, default=str), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Plan:
    """How much of a benchmark to run: repetitions per cell, configs per session, steps per
    run, and sessions in parallel (``workers``; 0 runs them one by one in this process)."""

    repetitions: int
    budget: int
    steps: int = 100
    workers: int = 2


def run_sessions(name: str, tasks: Sequence[tuple[Any, ...]], session: Callable[..., dict[str, Any]], *,
                 workers: int, results_dir: Path | None = None, log: Callable[[str], None] = print,
                 workdir: bool = True, prepare: Callable[[Path], None] | None = None,
                 progress_every: int = 10) -> list[dict[str, Any]]:
    """Run ``session(*task, workdir)`` for every task; the records, in task order.

    ``session`` must be a module-level function (it runs in spawned processes when
    ``workers`` > 0). Each record is appended to ``<results>/<name>.records.jsonl`` as it
    finishes, so a long run that is stopped keeps what it measured. ``workdir``: pass a
    temporary folder, shared by the sessions and removed at the end, as the last argument
    (``prepare`` makes what they share in it first). The hash seed is fixed, so TPE seeds
    that mix in ``hash()`` are the same from run to run.
    """
    os.environ.setdefault("PYTHONHASHSEED", "0")
    folder = Path(results_dir or RESULTS_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f"{name}.records.jsonl"
    partial.write_text("", encoding="utf-8")
    started = time.time()
    records: list[dict[str, Any]] = []

    def keep(record: dict[str, Any]) -> None:
        records.append(record)
        with partial.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, default=str) + "\n")
        if len(records) % max(1, len(tasks) // progress_every) == 0 or len(records) == len(tasks):
            log(f"  {name.replace('_', ' ')}: {len(records)}/{len(tasks)} sessions ({time.time() - started:.0f} s)")

    with tempfile.TemporaryDirectory(prefix=f"bracket-{name}-") as folder_name:
        extra = (folder_name,) if workdir else ()
        if prepare is not None:
            prepare(Path(folder_name))
        if workers <= 0:
            for task in tasks:
                keep(session(*task, *extra))
            return records
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures = [pool.submit(session, *task, *extra) for task in tasks]
            for future in futures:
                keep(future.result())
    return records


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of a (possibly partial) ``<name>.records.jsonl``."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def forget_kept_views(folder: Path) -> None:
    """Make ``status`` of the session in ``folder`` cold again: the status view it keeps in its
    store (``bracket_views``) removed, and an older checkout's ``<session>/views/status.json``."""
    from bracket.session.store import open_session_store
    from bracket.session.store.schema import views_table

    (Path(folder) / "views" / "status.json").unlink(missing_ok=True)
    store, name = open_session_store(Path(folder))
    try:
        if views_table.name not in store.absent:
            with store.engine.begin() as connection:
                connection.execute(views_table.delete().where(views_table.c.session == name))
    finally:
        store.close()
