"""The image judges at a rung of a halving search: a paused run's samples are judged up to its
pause step, kept for that step, and the promotion waits for them and follows them.

``bracket run --halving`` of the demo preset with the pausing fake trainer (its samples are the
redder the farther its rate is from 3e-3, the rate its loss likes best; ``tests/session/pausing_trainer.py``)
on a dataset of red squares, with the stand-in backbone (likeness grows with a sample's redness):
3 configs to 1/2 → 1 to full. On the loss alone ``adamw-fast`` (lr 2e-3) goes on; with likeness
weighted above the loss ``baseline`` (lr 1e-4: the redder samples) does, because its figures at
the rung are in before the promotion is decided."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import make_fake_python
from tests.fakes.cli_search import cli_search, configs_by_name, run_of
from tests.judge.test_image_judges_search import ROOT, dataset

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

PAUSING_TRAINER = ROOT / "tests" / "session" / "pausing_trainer.py"


def halving_search(tmp_path: Path, weights: str):
    fields = {"dataset": str(dataset(tmp_path / "data")), "train_script": str(PAUSING_TRAINER),
              "trainer_python": str(make_fake_python(tmp_path / "fakebin"))}
    args = ["run", "--preset", "demo-cpu", "--name", "rungs", "--out", str(tmp_path / "runs"), "--halving",
            "--eta", "2", "--smallest-rung", "1/2", "--budget", "2", "--steps", "8", "--sample-every", "4",
            "--confirm", "0", "--prompts", "zqx, a red square --d 1", "--weights", weights, "--seed", "1",
            "--launch-cost", "0", "--quiet"]
    return cli_search(args, fields, tmp_path / "runs" / "rungs")


def test_the_image_judges_figures_at_the_rung_decide_the_promotion(tmp_path, monkeypatch):
    monkeypatch.setenv("BRACKET_JUDGE_BACKBONE", "tests.fakes.image_backbone:Backbone")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    loss_only = halving_search(tmp_path / "loss", "loss=1,likeness=0,prompt_following=0,image_quality=0")
    assert configs_by_name(loss_only)["adamw-fast"]["rung_state"] == "full"
    assert all("image" not in (r.get("judges") or {}) for r in loss_only.store.runs(loss_only.name))  # weighed 0
    loss_only.close()

    session = halving_search(tmp_path / "judged", "loss=1,likeness=5,prompt_following=0,image_quality=0")
    configs = configs_by_name(session)
    assert configs["baseline"]["rung_state"] == "full" and configs["baseline"]["rung_note"].startswith("promoted")
    assert configs["adamw-fast"]["rung_state"] == "stopped"
    at_rung = {name: run_of(session, c)["judges"]["at_step"]["4"]["image"] for name, c in configs.items()}
    assert all(sorted(record["steps"]) == ["4"] for record in at_rung.values())  # judged up to the pause step
    assert at_rung["baseline"]["steps"]["4"]["likeness"] > at_rung["adamw-fast"]["steps"]["4"]["likeness"]
    full = run_of(session, configs["baseline"])
    assert full["status"] == "done" and sorted(full["judges"]["image"]["steps"]) == ["4", "8"]
    assert full["judges"]["image"]["steps"]["4"] == at_rung["baseline"]["steps"]["4"]  # the same figures (cached)
    session.close()
