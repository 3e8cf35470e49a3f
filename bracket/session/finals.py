"""Finals: the best configurations of a search, trained again for longer with fresh seeds.

A short run can flatter a configuration (a high learning rate looks great at step 100 and
burns out by step 1000). Finals take the top-K configurations of the search leaderboard
(chosen by the standings, ``bracket.app.stages.run_finals``) and re-run each one for a
longer step count with seeds the search never used. They are a separate *stage* in the
store: their scores are normalised among finals only, and the report never averages a
final with a short run.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from bracket.session.pipeline import RunPipeline

FINAL_SEED_OFFSET = 1000
#: a final run in one of these states is not trained again
FINISHED = ("done", "failed", "pruned", "disqualified")


def train_finals(pipeline: RunPipeline, chosen: Sequence[dict[str, Any]], *, steps: int, seeds: int) -> list[int]:
    """Train the search configs ``chosen`` for ``steps`` with ``seeds`` new seeds each.

    Returns the final-stage config ids. Finals already recorded are not run twice; a stop
    ends the loop between runs. Call it inside the session's ``exclusive()`` section.
    """
    store, name = pipeline.store, pipeline.name
    existing = {c["trial_number"]: c for c in store.configs(name, stage="final")}
    final_ids = []
    for config in chosen:
        final = existing.get(config["trial_number"])
        if final is None:
            final_id = store.add_config(name, trial_number=config["trial_number"], kind=config["kind"],
                                        stage="final", name=config["name"], params=config["params"],
                                        worker=pipeline.worker_id)
            final = next(c for c in store.configs(name, stage="final") if c["id"] == final_id)
        done = {r["seed_index"] for r in store.runs(name, with_series=False)
                if r["config_id"] == final["id"] and r["status"] in FINISHED}
        for seed_index in range(seeds):
            if seed_index in done or pipeline.control.halted:
                continue
            pipeline.train(final, seed_index, steps=steps,
                           seed=pipeline.settings.base_seed + FINAL_SEED_OFFSET + seed_index)
        final_ids.append(final["id"])
    runs = [r for r in store.runs(name) if r["stage"] == "final"]
    values = pipeline.scoreboard.config_values(runs)
    for final_id in final_ids:
        if final_id in values:
            store.update_config(final_id, status="done", value=statistics.fmean([values[final_id]]))
    return final_ids
