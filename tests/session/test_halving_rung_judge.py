"""The VLM judge at a rung of a halving search: a paused run's samples are judged at the pause
step and that verdict takes part in the promotion.

``bracket run --halving`` of the demo preset with the pausing fake trainer (it paints its
samples redder the farther its rate is from 3e-3, the rate its loss likes best) and the
stand-in judge server under ``/red/v1`` (the redder the sample, the better): 3 configs to 1/2
→ 1 to full. The first two to pause are ``baseline`` (lr 1e-4: the worse loss, the redder
samples) and ``adamw-fast`` (lr 2e-3: the better loss); one of them goes on. On the loss
alone ``adamw-fast`` does; with the judge weighted above the loss ``baseline`` does, because
its rung verdict is in before the promotion is decided. A judge server that fails leaves the
runs unscored by it at the rung and the search goes on, decided by the loss.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bracket.session import Session
from tests.conftest import make_caption_folder
from tests.fakes import make_fake_python
from tests.fakes.cli_search import cli_search, configs_by_name, run_of
from tests.judge import stand_in_server

pytestmark = pytest.mark.timeout(240)

PAUSING_TRAINER = Path(__file__).resolve().parent / "pausing_trainer.py"


@pytest.fixture
def judge():
    server = stand_in_server.start()
    yield server
    server.shutdown()


def halving_search(tmp_path: Path, *judge_args: str) -> Session:
    """``bracket run --halving`` of 3 configs to 1/2 → 1 to full, the judge weighted 5 to the loss's 1."""
    fields = {"dataset": str(make_caption_folder(tmp_path / "data")), "train_script": str(PAUSING_TRAINER),
              "trainer_python": str(make_fake_python(tmp_path / "fakebin"))}
    args = ["run", "--preset", "demo-cpu", "--name", "rungs", "--out", str(tmp_path / "runs"), "--halving",
            "--eta", "2", "--smallest-rung", "1/2", "--budget", "2", "--steps", "8", "--sample-every", "4",
            "--confirm", "0", "--prompts", "a red circle --d 1", "--weights", "loss=1,vlm=5", "--seed", "1",
            "--launch-cost", "0", "--quiet", *judge_args]
    return cli_search(args, fields, tmp_path / "runs" / "rungs")


def test_the_judges_verdict_at_the_rung_decides_the_promotion(tmp_path, judge):
    loss_only = halving_search(tmp_path / "loss")
    configs = configs_by_name(loss_only)
    assert configs["adamw-fast"]["rung_state"] == "full"  # the loss alone promotes the closer rate
    assert configs["baseline"]["rung_state"] == "stopped"
    loss_only.close()

    judge.delay_s = 1.0  # each verdict lands a second after its run paused: the promotion waits for it
    session = halving_search(tmp_path / "judged", "--judge-url", judge.url("red"), "--judge-model", "stand-in",
                             "--judge-repeats", "1")
    configs = configs_by_name(session)
    assert set(configs) == {"baseline", "adamw-fast", "radam"}
    assert configs["baseline"]["rung_state"] == "full" and configs["baseline"]["rung_note"].startswith("promoted")
    assert configs["adamw-fast"]["rung_state"] == configs["radam"]["rung_state"] == "stopped"
    # every run was judged at its pause step; the promoted one keeps that verdict after it went on
    rung = {name: run_of(session, c)["judges"]["at_step"]["4"]["vlm"] for name, c in configs.items()}
    assert {name: v["details"]["images"][0]["means"]["quality"] for name, v in rung.items()} == {
        "baseline": 7, "adamw-fast": 1, "radam": 0}
    full = run_of(session, configs["baseline"])
    assert full["status"] == "done" and full["last_step"] == 8
    assert full["judges"]["vlm"]["details"]["images"][0]["image"].startswith("demo_000008_")  # its own: step 8
    assert full["judges"]["vlm_steps"]["4"] == rung["baseline"]["score"]  # the rung's verdict, not asked again
    assert len(judge.requests) == 4  # three rung samples and the full run's last one
    # the scores at the rung read the rung verdicts, also of the config that has gone on
    scores = session.view().scores
    at_rung = {name: scores[(c["id"], 0)] for name, c in configs.items()}
    assert at_rung["baseline"] < at_rung["adamw-fast"] < at_rung["radam"], at_rung
    session.close()


def test_a_failing_judge_at_the_rung_leaves_the_promotion_to_the_loss(tmp_path, judge):
    session = halving_search(tmp_path, "--judge-url", judge.url("down"), "--judge-model", "stand-in",
                             "--judge-repeats", "1")
    assert session.store.get_session(session.name)["status"] == "finished"
    configs = configs_by_name(session)
    assert configs["adamw-fast"]["rung_state"] == "full"
    for config in configs.values():
        verdict = run_of(session, config)["judges"]["at_step"]["4"]["vlm"]
        assert verdict["score"] is None and "HTTP 500" in verdict["reason"], verdict
    session.close()
