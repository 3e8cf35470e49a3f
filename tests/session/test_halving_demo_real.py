"""A halving search of the REAL demo trainer on CPU: 3 configs to 1/2 → 1 to full. The start-up
of a launch is fixed at 0 (``launch_share``): measured, it would decide from the machine's speed how
many configs the budget buys (``tests/session/test_halving_search.py`` covers a fixed start-up cost).

Each config pauses at step 4 of 8 with its state saved; the better of the first two resumes
from that state in its own run row, its loss going on at steps 5…8 (one series, two
launches); when the third has paused no new config can come: the best at 1/2 goes on (the
third, if it is the best), the rest stop.
Slow: four launches of the real trainer.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bracket.dataset.demo_data import make_demo_dataset
from bracket.session import HalvingSettings, SearchSettings, Session
from bracket.session.scoring import read_scalars


@pytest.mark.slow
def test_a_real_demo_halving_search_resumes_the_best_config_from_its_state(tmp_path, runs_dir):
    data = make_demo_dataset(tmp_path / "demo-data", count=12)
    settings = SearchSettings(budget=2, steps=8, sample_every_n_steps=4,
                              halving=HalvingSettings(eta=2, smallest_rung=0.5, launch_share=0),
                              confirm=0, sample_prompts="a red circle --d 1")
    assert settings.plan() == "budget 2 full runs = 3 configs to 1/2 → 1 to full"
    session = Session.create("demo-cpu", {"dataset": str(data), "trainer_python": sys.executable}, settings,
                             out_dir=runs_dir, name="real")
    assert session.run() == "finished"
    runs = [r for r in session.store.runs(session.name) if r["stage"] == "search"]
    assert len(runs) == 3  # as planned, however fast the machine
    done = [r for r in runs if r["status"] == "done"]
    assert 1 <= len(done) <= 2 and all(r["launches"] == 2 for r in done)
    for run in done:
        assert [s for s, _ in run["loss"]] == list(range(1, 9))
        # the trainer itself logged 1…4 in its first launch and 5…8 in the resumed one
        events = read_scalars(Path(run["run_dir"]) / "logs" / "tb")["loss/current"]
        assert sorted(s for s, _ in events) == list(range(1, 9))
    paused = [r for r in runs if r["status"] == "paused"]
    assert len(paused) == len(runs) - len(done) and all(r["pause_step"] == 4 and r["launches"] == 1 for r in paused)
    session.close()
