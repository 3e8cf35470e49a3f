"""The raw validation loss each config carries to the search (issue 46: the hedge reads how far
apart two configs are, which the normalised scores do not keep)."""

from __future__ import annotations

from bracket.judge.combine import JudgePart
from bracket.session.scoring.run_scores import RunScore, config_losses


def _score(raw: float | None, basis: str = "validation", *, estimated: bool = False) -> RunScore:
    part = JudgePart(value=0.5, raw=raw, estimated=estimated, uncertainty=0.0, weight=1.0)
    return RunScore(value=0.5, parts={"loss": part}, details={"loss": {"basis": basis}})


def test_a_configs_loss_is_the_mean_validation_loss_of_its_runs():
    runs = [{"id": 1, "config_id": 10}, {"id": 2, "config_id": 10}, {"id": 3, "config_id": 11},
            {"id": 4, "config_id": 12}, {"id": 5, "config_id": 13}, {"id": 6, "config_id": None},
            {"id": 7, "config_id": 14}]
    scores = {1: _score(0.10), 2: _score(0.12), 3: _score(0.30, "training"), 4: _score(None),
              5: _score(0.2, estimated=True), 6: _score(0.1),
              7: RunScore(value=0.5)}  # no loss part at all (a human-only score)
    assert config_losses(runs, scores) == {10: 0.11}  # training-loss basis, estimates, no figure: none
