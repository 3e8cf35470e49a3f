"""The search loop's ``before_turn`` hook (a benchmark's simulated rater, ``bench/steering.py``) runs
before each look for work in a search of either scheduler: it was a private method of the full-run
loop, which a halving search never called."""

from __future__ import annotations

import pytest

from bracket.session import HalvingSettings, SearchSettings, Session
from tests.session.test_halving_search import halving_fields


@pytest.mark.parametrize("halving", [False, True])
def test_the_hook_runs_before_every_look_for_work_with_either_scheduler(tmp_path, runs_dir, halving):
    settings = SearchSettings(budget=2, steps=8, sample_every_n_steps=2, confirm=0, sample_prompts="a red circle --d 1",
                              halving=HalvingSettings(eta=2, smallest_rung=0.5, launch_share=0) if halving else None)
    session = Session.create("demo-cpu", halving_fields(tmp_path), settings, out_dir=runs_dir, name=f"hook{halving}")
    seen: list[int] = []
    session.before_turn.append(lambda: seen.append(len(session.store.configs(session.name, stage="search"))))
    assert session.run() == "finished"
    configs = session.store.configs(session.name, stage="search")
    # once before each config was taken (it saw the configs so far); halving: before each promotion too
    assert seen[:len(configs)] == list(range(len(configs)))
    assert len(seen) > len(configs) if halving else len(seen) == len(configs)
    session.close()
