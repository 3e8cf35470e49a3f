"""A config's row that does not say what its runs' rows do is repaired from them.

* A worker killed between a run's pause and its config's row (issue 44, item 4): the config is left
  ``running`` with every run paused and nothing in flight. The next turn of any worker settles it
  from its runs' rows (``Scheduler.settle``), so a finished search has no config ``running``.
* A config left ``paused`` at a rung whose every seed trained to full length (its full record lost):
  the search's end (``Halving.closing``) records it ``full`` and ``done``, never ``stopped``."""

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


def test_a_config_left_paused_with_its_full_length_run_done_is_recorded_full_not_stopped(tmp_path, runs_dir):
    session = Session.create("demo-cpu", halving_fields(tmp_path), SETTINGS, out_dir=runs_dir, name="lost-full")
    assert session.run() == "finished"
    full = next(c for c in session.store.configs(session.name, stage="search") if c["rung_state"] == "full")
    assert [r["status"] for r in session.store.runs(session.name) if r["config_id"] == full["id"]] == ["done"]
    # what a record written from an older view left (its run paused at 1/2 there) after the full run's own
    session.store.update_config(full["id"], status="paused", rung=1, rung_state="paused",
                                rung_note="paused at 1/2: 1 of 2, top 1 goes on")
    session.close()
    again = Session.open(runs_dir / "lost-full")
    assert again.run() == "finished"
    repaired = next(c for c in again.store.configs(again.name, stage="search") if c["id"] == full["id"])
    assert (repaired["status"], repaired["rung_state"], repaired["rung"]) == ("done", "full", 2)
    assert repaired["value"] == full["value"]
    again.close()
