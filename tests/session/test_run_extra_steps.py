"""A run's extra steps (the generation after a run or at its rung) through the executor: each is
logged, pinned to the worker's GPU as the run itself is, stoppable as the current process, and
what failed comes back in words."""

from __future__ import annotations

import sys
import threading
import time

from bracket.session.process import RunExecutor
from bracket.session.search_settings import SearchSettings
from bracket.session.store import Store, sqlite_url
from bracket.trainer.base import LaunchSpec


def step(tmp_path, code: str, label: str) -> LaunchSpec:
    return LaunchSpec(cmd=[sys.executable, "-c", code], cwd=tmp_path, env={}, output_dir=tmp_path, label=label)


def test_extra_steps_are_pinned_logged_stoppable_and_their_failures_told(tmp_path):
    store = Store.open(sqlite_url(tmp_path / "bracket.db"))
    executor = RunExecutor(store, "s", SearchSettings(), trainer=None, worker_id="w", gpu="1")
    seen = tmp_path / "gpu.txt"
    failures = executor.run_steps([
        step(tmp_path, f"import os; open({str(seen)!r}, 'w').write(os.environ['CUDA_VISIBLE_DEVICES'])", "pinned"),
        step(tmp_path, "import sys; sys.exit(3)", "generate answers at step 4"),
    ], tmp_path / "logs", "rung-4")
    assert seen.read_text() == "1"
    assert failures == ["generate answers at step 4 failed: exit code 3"]
    assert {p.name for p in (tmp_path / "logs").iterdir()} == {"rung-4-0.log", "rung-4-1.log"}

    stopper = threading.Timer(1.0, lambda: executor.stop_current("stopped by the user"))
    stopper.start()
    started = time.monotonic()
    (failure,) = executor.run_steps([step(tmp_path, "import time; time.sleep(60)", "slow")], tmp_path / "logs", "x")
    assert time.monotonic() - started < 30 and failure.startswith("slow failed: ")
