"""A search stage built from per-seed losses, scored as the loss judge scores them, for the
standings tests that read its headlines and verdict."""

from __future__ import annotations

from bracket.judge.base import normalise_lower_better, relative_spread
from bracket.session.scoring import RunScore
from bracket.standings import build_standings
from bracket.standings.interval import NOISE_FLOOR

#: the loss figure each basis reports, and so its noise floor (docs/JUDGES.md)
FIGURE = {"validation": "val loss", "training": "loss"}


def loss_stage(losses: dict[str, list[float]], basis: str = "validation"):
    """The standings of a search stage of ``losses`` (config name → its seeds' losses; config
    "baseline" is the baseline) on ``basis``'s loss, scored as the loss judge scores them: min-max
    among the stage's runs, differences under that loss's noise floor kept near 0.5."""
    configs, runs, values = [], [], {}
    for cid, (name, seeds) in enumerate(losses.items(), start=1):
        configs.append({"id": cid, "name": name, "stage": "search", "kind": "baseline" if name == "baseline"
                        else "search", "trial_number": cid, "params": {"learning_rate": 1e-4 * cid}})
        for seed, loss in enumerate(seeds):
            rid = len(runs) + 1
            runs.append({"id": rid, "config_id": cid, "stage": "search", "kind": "search", "seed": seed,
                         "max_steps": 8, "status": "done"})
            values[rid] = loss
    floor = NOISE_FLOOR[FIGURE[basis]]
    normal = normalise_lower_better(values, min_spread=relative_spread(values.values(), floor))
    details = ({"final_ema": 0, "final_validation": 0, "basis": basis} if basis == "validation"
               else {"final_ema": 0, "basis": basis})
    key = "final_validation" if basis == "validation" else "final_ema"
    scores = {rid: RunScore(value=normal[rid], judges={"loss": normal[rid]}, used=["loss"], weights_used={"loss": 1.0},
                            details={"loss": {**details, key: values[rid]}}) for rid in values}
    return build_standings(runs, configs, scores)
