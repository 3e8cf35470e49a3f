"""Rules of shared searches that need no database server: refusals, slot reservation, claims."""

from __future__ import annotations

import pytest

from bracket.cli import main
from bracket.errors import StoreError
from bracket.search.controller import Proposal
from bracket.session.distributed import claim_config, require_shared_storage, reserve_config
from bracket.session.store import Store, sqlite_url


def test_a_worker_on_sqlite_is_refused_with_the_reason(capsys, tmp_path):
    url = sqlite_url(tmp_path / "bracket.db")
    assert main(["worker", "--storage", url, "--session", "s"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Workers need a PostgreSQL store, not sqlite")
    assert "SELECT ... FOR UPDATE" in err
    assert not (tmp_path / "bracket.db").exists()  # nothing was created


def test_a_worker_without_a_storage_url_is_told_where_to_put_it(capsys, monkeypatch):
    monkeypatch.setenv("BRACKET_STORAGE_URL", "")
    assert main(["worker", "--session", "s"]) == 2
    assert "PGPASSWORD" in capsys.readouterr().err


def test_a_malformed_url_is_refused_without_its_password():
    with pytest.raises(StoreError) as error:
        require_shared_storage("postgresql+psycopg://user:s3cret@host:notaport/db")
    assert "s3cret" not in str(error.value)
    require_shared_storage("postgresql+psycopg://user@host:5432/db")  # accepted


def test_reserve_config_hands_out_no_more_than_the_budget(tmp_path):
    store = Store.open(sqlite_url(tmp_path / "s.db"))
    store.create_session("s", preset_id="demo-cpu", fields={}, settings={})
    asked: list[int] = []

    def propose() -> Proposal:
        asked.append(len(asked))
        return Proposal(trial_number=len(asked), config={"lr": 0.1}, kind="search", name=f"search-{len(asked)}")

    ids = [reserve_config(store, "s", limit=lambda: 2, worker="w1", propose=propose) for _ in range(3)]
    assert ids[0] is not None and ids[1] is not None and ids[2] is None
    assert len(asked) == 2  # the controller is not even asked once the budget is taken
    assert [c["worker"] for c in store.configs("s")] == ["w1", "w1"]
    store.close()


def test_only_one_worker_can_claim_an_orphaned_config(tmp_path):
    store = Store.open(sqlite_url(tmp_path / "s.db"))
    store.create_session("s", preset_id="demo-cpu", fields={}, settings={})
    config_id = store.add_config("s", trial_number=0, kind="search", name="x", params={}, worker="dead")
    assert claim_config(store, config_id, "dead", "w1") is True
    assert claim_config(store, config_id, "dead", "w2") is False  # w1 got there first
    assert store.configs("s")[0]["worker"] == "w1"
    store.close()


def test_a_setup_step_another_live_worker_runs_is_waited_for_not_repeated(tmp_path, monkeypatch):
    import time

    from bracket.session import RunControl
    from bracket.session.worker import WorkerProtocol

    store = Store.open(sqlite_url(tmp_path / "s.db"))
    store.create_session("s", preset_id="demo-cpu", fields={}, settings={})
    store.heartbeat("s", "other-host:1", host="other-host", pid=1)
    run_id = store.add_run("s", kind="setup", stage="setup", label="cache latents", worker="other-host:1",
                           status="running")
    me = WorkerProtocol(store, "s", "me:2", grace_s=30.0)
    control = RunControl(store, "s")
    heard: list[str] = []

    def waiting(phase: str) -> None:  # it says it waits; the other worker finishes the step after its 3rd look
        heard.append(phase)
        if len(heard) == 3:
            store.update_run(run_id, status="done")

    assert me.setup_done_elsewhere("cache latents", control, on_phase=waiting, poll_s=0.01) is True
    assert heard == ["pre-cache: cache latents (waiting for worker other-host:1)"] * 3
    # a step whose worker is gone (no beat within the grace period) is this worker's to run
    store.update_run(run_id, status="running")
    later = time.time() + 31.0  # the clock past the 30 s grace since the other worker's last beat
    monkeypatch.setattr("bracket.session.recovery.time.time", lambda: later)
    assert me.setup_done_elsewhere("cache latents", control, on_phase=heard.append, poll_s=0.01) is False
    assert len(heard) == 3
    store.close()


def test_only_one_worker_stops_a_paused_config(tmp_path):
    store = Store.open(sqlite_url(tmp_path / "s.db"))
    store.create_session("s", preset_id="demo-cpu", fields={}, settings={})
    config_id = store.add_config("s", trial_number=0, kind="search", name="x", params={}, worker="w1")
    store.update_config(config_id, status="paused")
    assert store.update_config(config_id, only_if={"status": "paused"}, status="stopped") is True
    # the other worker tells the study nothing
    assert store.update_config(config_id, only_if={"status": "paused"}, status="stopped") is False
    assert store.configs("s")[0]["status"] == "stopped"
    store.close()
