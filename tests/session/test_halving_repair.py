"""A worker killed between a run's pause and its config's row (issue 44, item 4): the config is left
``running`` with every run paused and nothing in flight. The next turn of any worker settles it from
its runs' rows (``Scheduler.settle``), so a finished search has no config ``running``."""

from __future__ import annotations

from bracket.session import HalvingSettings, SearchSettings, Session
from tests.session.test_halving_search import halving_fields

SETTINGS = SearchSettings(budget=2, steps=16, sample_every_n_steps=2,
                          halving=HalvingSettings(eta=2, smallest_rung=0.25, launch_share=0),
                          confirm=0, sample_prompts="a red circle --d 1")


def test_a_config_left_running_with_its_runs_paused_is_settled_and_a_finished_search_has_none(tmp_path, runs_dir):
    session = Session.create("demo-cpu", halving_fields(tmp_path), SETTINGS, out_dir=runs_dir, name="repair")
    assert session.run() == "finished"
    stopped = next(c for c in session.store.configs(session.name, stage="search") if c["status"] == "stopped")
    runs = [r for r in session.store.runs(session.name) if r["config_id"] == stopped["id"]]
    assert [r["status"] for r in runs] == ["paused"]
    # what the store holds when the worker died after recording the run's pause, before the config's row
    session.store.update_config(stopped["id"], status="running", rung_state="running", rung_note="running to 1/4",
                                worker="gone-worker")
    session.close()
    again = Session.open(runs_dir / "repair")
    assert again.run() == "finished"
    configs = again.store.configs(again.name, stage="search")
    assert not [c["name"] for c in configs if c["status"] == "running"]
    repaired = next(c for c in configs if c["id"] == stopped["id"])
    assert (repaired["status"], repaired["rung_state"], repaired["rung"]) == ("stopped", "stopped", 0)
    assert repaired["rung_note"].startswith("stopped at 1/4: ")
    again.close()
