"""Two workers interleaved by hand: one records where a config stands from a view it read just as its
run paused at a rung, while the other promotes that config to full length and trains it there
before the first one's write lands (the load test's "a config with a `done` full-length run ends
`stopped` at 1/2", docs/RELIABILITY.md §8).

The session's own loop is worker C (SQLite, one process): it trains a config to a rung and records
it (``Halving.record``). Worker B is played inside C's record, between C's reading of the view and
C's write: with a scheduler of its own on the same session it asks for the resumes the store offers
now, and when one takes that very config to full length it claims the paused run, starts it,
trains it to its end and records it (``full``, ``done``) — all that another worker can do while C
is still asking the study for the config's curve. Before, C's write then set the config back to
``paused`` at 1/2 from its older view; nothing moved it on (its run has nothing left to train), and
the search's end stopped it: ``stopped`` at 1/2 with its full-length run ``done``.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from bracket.session import Session
from bracket.session.loop.search_loop import session_scheduler
from bracket.session.scheduling.halving import Halving
from bracket.session.store import Store, sqlite_url
from bracket.session.store.rows import RunRow, SeedRuns
from tests.distributed.halving_checks import SETTINGS, check_halving_search
from tests.session.test_halving_search import halving_fields


def test_a_config_promoted_and_trained_to_full_length_while_another_worker_records_it_stays_full(
        tmp_path, runs_dir, monkeypatch):
    launch_log = tmp_path / "launches.jsonl"
    monkeypatch.setenv("BRACKET_FAKE_PAUSE_LAUNCH_LOG", str(launch_log))
    session = Session.create("demo-cpu", halving_fields(tmp_path), SETTINGS, out_dir=runs_dir, name="record-race",
                             worker_id="worker-c")  # its sampler's seed: the same proposals every time
    store, name = session.store, session.name
    other = session_scheduler(session)  # worker B's scheduler: the same rule on the same store
    seen: dict[str, object] = {}
    record = Halving.record

    def worker_b_promotes_to_full(config_id: int) -> None:
        """What B does between C's reading of the view and C's write, if the store offers it now:
        the config to full length, decided and claimed as the loop does, trained, recorded."""
        view = other.hooks.view()
        work = next((w for w in other.resumes(view) if w.config_id == config_id and w.stop_at is None), None)
        if work is None:
            return
        claimed = [run_id for run_id in work.runs if store.claim_run(run_id, "worker-b")]
        assert claimed == list(work.runs)
        other.started(replace(work, runs=tuple(claimed)), view, new=False)
        for run_id in claimed:
            assert session.pipeline.resume(run_id, steps=SETTINGS.steps, stop_at_step=None, claimed=True) == "done"
        other.trained(view.config(config_id))
        seen["promoted"] = config_id

    def record_while_b_promotes(self: Halving, config_id: int) -> None:
        if self is other or "promoted" in seen:
            return record(self, config_id)
        read = self.hooks.view

        def view_then_b() -> object:
            view = read()  # C's view: the config's runs paused at the rung they just reached
            worker_b_promotes_to_full(config_id)
            return view

        self.hooks = replace(self.hooks, view=view_then_b)
        try:
            record(self, config_id)
        finally:
            self.hooks = replace(self.hooks, view=read)
        if "promoted" in seen:  # C's write has landed (or not): the row as B left it
            row = next(c for c in store.configs(name, stage="search") if c["id"] == config_id)
            seen["after"] = (row["status"], row["rung_state"], row["rung"])

    monkeypatch.setattr(Halving, "record", record_while_b_promotes)
    assert session.run() == "finished"
    assert "promoted" in seen, "the interleaving did not happen: no config was promoted to full length"
    assert seen["after"] == ("done", "full", 2)  # C's write from its older view did not land
    config = next(c for c in store.configs(name, stage="search") if c["id"] == seen["promoted"])
    runs = [r for r in store.runs(name, with_series=False) if r["config_id"] == config["id"]]
    assert [r["status"] for r in runs] == ["done"]
    assert (config["status"], config["rung_state"], config["rung"]) == ("done", "full", 2), \
        (config["status"], config["rung_state"], config["rung"], config["rung_note"])
    check_halving_search(store, name, SETTINGS, launch_log)
    session.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_config_write_guarded_by_its_runs_lands_only_while_they_are_as_read(tmp_path, request, monkeypatch, backend):
    if backend == "sqlite":
        url = sqlite_url(tmp_path / "s.db")
    else:
        postgres = request.getfixturevalue("postgres")
        monkeypatch.setenv("PGPASSWORD", postgres.password)
        url = postgres.create_database("guarded_write")
    store = Store.open(url)
    store.create_session("s", preset_id="demo-cpu", fields={}, settings={})
    config_id = store.add_config("s", trial_number=0, kind="search", name="x", params={}, worker="w1")
    run = {"config_id": config_id, "kind": "search", "stage": "search"}
    run_id = store.add_run("s", **run, seed_index=0, label="x", status="paused", pause_step=8, last_step=8, launches=2)

    def read() -> SeedRuns:
        return SeedRuns.of([RunRow.of(r) for r in store.runs("s", with_series=False)], config_id, seeds=1)

    before = read()
    assert store.claim_run(run_id, "w2")  # another worker resumes the run after the view was read
    assert not store.update_config(config_id, runs_as=before, status="paused", rung=1)
    assert store.configs("s")[0]["status"] == "running" and store.configs("s")[0]["rung"] is None
    store.update_run(run_id, status="done", last_step=16, pause_step=None, launches=3)
    assert not store.update_config(config_id, runs_as=before, status="paused", rung=1)  # nor after it finished
    now = read()
    # a confirmation run of the config (a seed index past the search's seeds) is not what its place is read from
    store.add_run("s", **run, seed_index=1, label="x confirm", status="running")
    assert store.update_config(config_id, runs_as=now, only_if={"status": "running"}, rung=2, rung_state="full")
    assert not store.update_config(config_id, runs_as=now, only_if={"status": "paused"}, rung=1)
    store.add_run("s", **run, seed_index=0, label="x again", status="pending")
    assert not store.update_config(config_id, runs_as=now, rung=1)  # a new run of a seed: read again
    assert (store.configs("s")[0]["rung"], store.configs("s")[0]["rung_state"]) == (2, "full")
    store.close()
