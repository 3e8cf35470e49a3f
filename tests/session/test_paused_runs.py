"""Paused runs in the store and the executor: the claim, a resume cut short, a trainer that
cannot stop itself, a trainer that counts from 1 again after a resume."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from bracket.session import HalvingSettings, SearchSettings, Session
from bracket.session.loop.search_loop import SearchLoop, session_scheduler
from bracket.session.recovery import recover_interrupted_runs
from bracket.session.store import Store
from tests.session.test_halving_search import halving_fields

SETTINGS = SearchSettings(budget=2, steps=16, sample_every_n_steps=2,
                          halving=HalvingSettings(eta=2, smallest_rung=0.25, launch_share=0),
                          confirm=0, sample_prompts="a red circle --d 1")


def _first_paused(tmp_path: Path, runs_dir: Path, name: str) -> tuple[Session, dict]:
    session = Session.create("demo-cpu", halving_fields(tmp_path), SETTINGS, out_dir=runs_dir, name=name)
    loop = SearchLoop(session, session_scheduler(session), wait_s=0.1)
    taken = loop.next_work()
    assert taken is not None
    loop.train(*taken)
    run = session.store.runs(session.name)[0]
    assert (run["status"], run["pause_step"], run["launches"]) == ("paused", 4, 1)
    return session, run


def test_two_workers_never_resume_the_same_run(tmp_path, runs_dir):
    session, run = _first_paused(tmp_path, runs_dir, "claim")
    stores = [Store.open(session.store.url, create=False) for _ in range(6)]  # six processes' connections
    barrier, won = threading.Barrier(len(stores)), []

    def claim(store: Store, index: int) -> None:
        barrier.wait()
        if store.claim_run(run["id"], f"worker-{index}"):
            won.append(index)

    threads = [threading.Thread(target=claim, args=(store, i)) for i, store in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1
    assert session.store.get_run(run["id"])["worker"] == f"worker-{won[0]}"
    # the one who lost gets nothing from the pipeline either: no launch, no change
    assert session.pipeline.resume(run["id"], stop_at_step=8) is None
    assert session.store.get_run(run["id"])["launches"] == 1
    for store in stores:
        store.close()
    session.close()


def test_a_resume_cut_short_goes_back_to_paused_and_resumes_again(tmp_path, runs_dir):
    session, run = _first_paused(tmp_path, runs_dir, "cut")
    # a worker claimed it and died while resuming: the run says running, with the step it resumed from
    assert session.store.claim_run(run["id"], "gone-worker")
    session.store.update_run(run["id"], started_at=time.time(), launches=2)
    session.store.heartbeat(session.name, "gone-worker", host="elsewhere", pid=1)
    session.store.heartbeat(session.name, "gone-worker", status="stopped")
    notes = recover_interrupted_runs(session.store, session.name, self_worker=session.worker_id)
    recovered = session.store.get_run(run["id"])
    assert recovered["status"] == "paused" and recovered["pause_step"] == 4, notes
    assert session.pipeline.resume(run["id"], stop_at_step=8) == "paused"
    again = session.store.get_run(run["id"])
    assert [s for s, _ in again["loss"]] == list(range(1, 9)) and again["pause_step"] == 8
    session.close()


def test_a_trainer_that_cannot_stop_itself_is_stopped_once_its_state_is_complete(tmp_path, runs_dir, monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_PAUSE_HANG", "1")
    monkeypatch.setattr("bracket.session.process.execute.PAUSE_GRACE_SECONDS", 0.5)
    session, run = _first_paused(tmp_path, runs_dir, "hang")
    assert [s for s, _ in run["loss"]] == [1, 2, 3, 4]
    session.close()


def test_a_trainer_training_on_past_its_complete_state_is_stopped_at_once_and_charged_what_it_trained(
        tmp_path, runs_dir, monkeypatch):
    """The overshoot past a rung is bounded: no grace for a trainer already logging steps past its pause
    (the grace is for one that may still exit by itself), and its row records the step it trained to."""
    monkeypatch.setenv("BRACKET_FAKE_PAUSE_OVERRUN", "2")  # trains on to step 6, then never stops by itself
    monkeypatch.setenv("BRACKET_FAKE_PAUSE_HANG", "1")
    monkeypatch.setattr("bracket.session.process.execute.PAUSE_GRACE_SECONDS", 300.0)  # never waited out here
    session, run = _first_paused(tmp_path, runs_dir, "past")
    assert [s for s, _ in run["loss"]] == [1, 2, 3, 4]  # the run's series end at its rung
    assert 4 < run["last_step"] <= 6 and run["duration_s"] < 120  # stopped, charged what it trained
    session.close()


def test_a_resumed_trainer_counting_from_one_again_is_stored_at_true_steps(tmp_path, runs_dir, monkeypatch):
    session, run = _first_paused(tmp_path, runs_dir, "count")
    monkeypatch.setenv("BRACKET_FAKE_PAUSE_RECOUNT", "1")  # logs 1…12 for the true steps 5…16
    assert session.pipeline.resume(run["id"]) == "done"
    done = session.store.get_run(run["id"])
    assert [s for s, _ in done["loss"]] == list(range(1, 17)) and done["launches"] == 2 and done["last_step"] == 16
    assert done["pause_step"] is None
    session.close()


def test_a_trainer_that_cannot_resume_trains_the_promoted_config_again_from_zero(tmp_path, runs_dir, monkeypatch):
    session, run = _first_paused(tmp_path, runs_dir, "restart")
    monkeypatch.setattr(type(session.trainer), "resume_mode", "restart")
    requests, prepare = [], session.trainer.prepare_run
    monkeypatch.setattr(session.trainer, "prepare_run", lambda request: requests.append(request) or prepare(request))
    assert session.pipeline.resume(run["id"], stop_at_step=8) == "paused"
    again = session.store.get_run(run["id"])
    assert requests[0].resume_from is None and requests[0].resume_step is None and requests[0].stop_at_step == 8
    # the same row, the series replaced by the new launch's (the first launch's events not read again)
    assert [s for s, _ in again["loss"]] == list(range(1, 9)) and again["launches"] == 2
    session.close()


def test_a_promote_run_resumed_after_it_died_stores_its_true_steps_in_one_row(tmp_path, runs_dir, monkeypatch):
    # the case: a resumed promote logged 1…10 for the true steps 11…20 and was stored as a short series
    from bracket.cli import main

    settings = SearchSettings(budget=1, steps=8, confirm=0, sample_prompts="a red circle --d 1")
    session = Session.create("demo-cpu", halving_fields(tmp_path), settings, out_dir=runs_dir, name="promote")
    assert session.run() == "finished"
    folder = session.folder
    session.close()
    monkeypatch.setenv("BRACKET_FAKE_PAUSE_FAIL_AT", "12")
    assert main(["promote", str(folder), "--steps", "20", "--save-every", "5"]) == 1
    monkeypatch.delenv("BRACKET_FAKE_PAUSE_FAIL_AT")
    monkeypatch.setenv("BRACKET_FAKE_PAUSE_RECOUNT", "1")  # resumes from step 10's state, counting from 1
    assert main(["promote", str(folder), "--steps", "20", "--save-every", "5"]) == 0
    reopened = Session.open(folder)
    promoted = [r for r in reopened.store.runs(reopened.name) if r["stage"] == "promote"]
    assert [(r["status"], r["launches"], r["last_step"]) for r in promoted] == [("done", 2, 20)]
    assert [s for s, _ in promoted[0]["loss"]] == list(range(1, 21))
    reopened.close()


def test_samples_a_paused_run_rendered_past_its_rung_are_set_aside_when_it_resumes(tmp_path, runs_dir,
                                                                                   monkeypatch):
    """sd-scripts goes on past the rung until it is stopped (seen on the real trainer: a sample
    at step 2 of a run paused at 1, then the resume rendered step 2 again): the resumed run keeps
    one sample per step, the ones of the discarded steps moved aside in its run folder."""
    monkeypatch.setenv("BRACKET_FAKE_PAUSE_OVERRUN", "4")  # pauses at 4, trains and samples to 8
    session, run = _first_paused(tmp_path, runs_dir, "overrun")
    assert [s["step"] for s in run["samples"]] == [2, 4]  # the stored run stops at its pause
    assert session.pipeline.resume(run["id"], steps=16) == "done"
    resumed = session.store.get_run(run["id"])
    steps = [s["step"] for s in resumed["samples"]]
    assert steps == sorted(set(steps)) == list(range(2, 17, 2)), steps
    discarded = Path(resumed["run_dir"]) / "discarded"
    aside = sorted(p.name for p in discarded.iterdir()) if discarded.is_dir() else []
    # stopped once it trains past its complete state: the samples it rendered past the rung, as far as it got
    assert [name.split("_")[1] for name in aside] in ([], ["000006"], ["000006", "000008"]), aside
    session.close()
