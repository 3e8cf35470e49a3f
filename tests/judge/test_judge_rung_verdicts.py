"""The VLM scorer on a run paused at a rung: its pause step's samples are judged once, kept for
that step, and reused when the run finishes; a run no longer paused is not judged at a rung."""

from __future__ import annotations

import pytest
from PIL import Image

from bracket.judge.server import JudgeServerConfig
from bracket.session.process.execute import sample_record
from bracket.session.scoring import VlmScorer, collect_samples
from bracket.session.store import Store, sqlite_url
from bracket.trainer.prompts import parse_prompt_lines
from tests.judge import stand_in_server


@pytest.fixture
def server():
    server = stand_in_server.start()
    yield server
    server.shutdown()


def samples_at(folder, steps, red=200):
    folder.mkdir(parents=True, exist_ok=True)
    for step in steps:
        Image.new("RGB", (8, 8), (red, 40, 40)).save(folder / f"demo_{step:06d}_00_20261202120000_1.png")
    return [sample_record(s) for s in collect_samples(folder)]


def test_a_paused_run_is_judged_at_its_pause_step_once_and_the_verdict_is_reused(server, tmp_path):
    store = Store.open(sqlite_url(tmp_path / "bracket.db"))
    store.create_session("s", preset_id="x", fields={}, settings={})
    sample_dir = tmp_path / "run" / "output" / "sample"
    run_id = store.add_run("s", kind="search", status="paused", pause_step=4, run_dir=str(tmp_path / "run"),
                           loss=[(s, 1.0 / s) for s in range(1, 5)], samples=samples_at(sample_dir, [2, 4]))
    other = store.add_run("s", kind="search", status="running", run_dir=str(tmp_path / "other"),
                          samples=samples_at(tmp_path / "other" / "sample", [4]))
    told: list[int] = []
    scorer = VlmScorer(store, "s", JudgeServerConfig(server.url("red"), "vlm", repeats=1, timeout_s=5),
                       parse_prompt_lines("a red circle --d 1"), on_scored=lambda: told.append(1))
    scorer.submit_rung(run_id)
    scorer.submit_rung(other)  # resumed meanwhile: not at a rung any more
    assert scorer.wait_rungs(60) and not scorer.rungs_pending()
    verdict = store.get_run(run_id)["judges"]["at_step"]["4"]["vlm"]
    assert verdict["details"]["images"][0]["image"].startswith("demo_000004_")  # the pause step's, not step 2's
    assert verdict["details"]["images"][0]["means"]["quality"] == 8  # red 200 / 25.5
    assert not store.get_run(other)["judges"] and len(server.requests) == 1 and told == [1]

    scorer.submit_rung(run_id)  # judged there already (a session reopened): not asked again
    assert scorer.wait_rungs(60) and len(server.requests) == 1

    store.update_run(run_id, status="done", pause_step=None, samples=samples_at(sample_dir, [2, 4, 8]))
    scorer.submit(run_id)
    scorer.drain(60)
    judges = store.get_run(run_id)["judges"]
    assert judges["vlm"]["details"]["images"][0]["image"].startswith("demo_000008_")
    assert judges["vlm_steps"]["4"] == verdict["score"] and set(judges["vlm_steps"]) == {"2", "4", "8"}
    assert judges["at_step"]["4"]["vlm"] == verdict  # kept for the rung scores
    assert len(server.requests) == 3  # steps 8 and 2; step 4 reused


def test_a_queued_scorer_judges_on_its_one_thread_and_waits_for_its_rung_verdicts():
    """The scorers' one background thread (``QueuedScorer``, the VLM's and the image judges'): a
    rung verdict is waited for until it is stored, everything in order on one named thread."""
    import threading

    from bracket.session.scoring.rung_verdicts import QueuedScorer

    gate, done = threading.Event(), []

    class Recording(QueuedScorer):
        def _score(self, run_id: int) -> None:
            done.append((run_id, threading.current_thread().name))

        def _score_rung(self, run_id: int) -> None:
            gate.wait(60)
            done.append((run_id, threading.current_thread().name))

    scorer = Recording("bracket-recording")
    scorer.submit_rung(1)
    scorer.submit(2)
    assert scorer.rungs_pending() and not scorer.wait_rungs(0.01) and not scorer.settle(0.01)
    gate.set()
    assert scorer.wait_rungs(60) and not scorer.rungs_pending() and scorer.settle(60)
    scorer.drain(60)
    assert [run_id for run_id, _ in done] == [1, 2] and len({name for _, name in done}) == 1
    assert done[0][1].startswith("bracket-recording")
    with pytest.raises(RuntimeError):  # drained: the thread is gone
        scorer.submit(3)
