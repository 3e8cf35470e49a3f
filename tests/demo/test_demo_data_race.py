"""Searches started together on a fresh clone all get a whole demo dataset.

The default demo dataset is made when a search starts without it. Before, each process drew
the images straight into ``runs/demo-data``: a second process found the folder half written
and refused it ("… are not images that can be opened"), or crashed on a caption another
process had not written yet (``FileNotFoundError``). The processes here start from one
barrier so their checks overlap.
"""

from __future__ import annotations

import multiprocessing

from bracket.dataset.demo_data import make_demo_dataset_once

PROCESSES = 4


def _start_without_dataset(folder: str, barrier, results) -> None:
    from bracket.trainer.demo.adapter import demo_dataset_problems, make_missing_demo_dataset

    barrier.wait(timeout=120)
    try:
        make_missing_demo_dataset({"dataset": folder})
        results.put(demo_dataset_problems(folder) or "ok")
    except Exception as error:  # noqa: BLE001 - the test reports what the process saw
        results.put(f"{type(error).__name__}: {error}")


def test_searches_starting_together_each_get_a_whole_demo_dataset(tmp_path, monkeypatch):
    context = multiprocessing.get_context("spawn")
    for round_ in range(3):
        folder = tmp_path / f"round{round_}" / "demo-data"
        monkeypatch.setenv("BRACKET_DEMO_DATA_DIR", str(folder))  # the spawned processes' default
        barrier, results = context.Barrier(PROCESSES), context.Queue()
        processes = [context.Process(target=_start_without_dataset, args=(str(folder), barrier, results))
                     for _ in range(PROCESSES)]
        for process in processes:
            process.start()
        outcomes = [results.get(timeout=300) for _ in processes]
        for process in processes:
            process.join(timeout=60)
        assert outcomes == ["ok"] * PROCESSES, outcomes
        assert [p.name for p in folder.parent.iterdir()] == ["demo-data"], "no scratch folder left"


def test_an_existing_demo_dataset_is_kept(tmp_path):
    folder = tmp_path / "demo-data"
    toml = make_demo_dataset_once(folder, count=3)
    assert toml == folder / "dataset.toml" and toml.is_file()
    (folder / "mine.txt").write_text("kept")
    assert make_demo_dataset_once(folder, count=3) is None  # there already: not this call's to remove
    assert (folder / "mine.txt").read_text() == "kept"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".demo-data")], "no scratch folder left"
