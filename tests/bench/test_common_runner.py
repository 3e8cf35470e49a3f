"""The one session runner every benchmark shares (bench.common.run_sessions)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.common import percentile, read_records, run_sessions

SEEN: list[Path] = []


def _session(name: str, value: int, workdir: str) -> dict:
    folder = Path(workdir)
    assert (folder / "shared.txt").read_text() == "made once"
    SEEN.append(folder)
    return {"name": name, "value": value * 2}


def test_sessions_run_in_task_order_and_each_record_is_kept_as_it_finishes(tmp_path):
    lines: list[str] = []
    tasks = [("a", 1), ("b", 2), ("c", 3)]
    records = run_sessions("unit", tasks, _session, workers=0, results_dir=tmp_path, log=lines.append,
                           prepare=lambda folder: (folder / "shared.txt").write_text("made once"))
    assert records == [{"name": "a", "value": 2}, {"name": "b", "value": 4}, {"name": "c", "value": 6}]
    assert read_records(tmp_path / "unit.records.jsonl") == records
    assert lines[-1].startswith("  unit: 3/3 sessions")
    assert len(set(SEEN)) == 1 and not SEEN[0].exists()  # one shared work folder, removed at the end


def test_a_process_pool_gives_the_same_records_as_in_process(tmp_path):
    tasks = [([3.0, 1.0, 2.0], 0.5), ([5.0, 4.0], 1.0)]
    pooled = run_sessions("pool", tasks, percentile, workers=1, workdir=False, results_dir=tmp_path, log=print)
    assert pooled == [percentile(*task) for task in tasks] == [2.0, 5.0]
    assert [json.loads(line) for line in (tmp_path / "pool.records.jsonl").read_text().splitlines()] == pooled
