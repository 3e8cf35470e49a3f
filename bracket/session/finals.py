"""Finals: the best configurations of a search, trained again for longer with fresh seeds.

A short run can flatter a configuration (a high learning rate looks great at step 100 and
burns out by step 1000). Finals take the top-K configurations of the search leaderboard
(:mod:`bracket.session.standings`, as of now) and
re-run each one for a longer step count with seeds the search never used. They are a
separate *stage* in the store: their scores are normalised among finals only, and the
report never averages a final with a short run.
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from bracket.errors import BracketError
from bracket.session.scoring import config_values
from bracket.session.standings import standings

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.session import Session

FINAL_SEED_OFFSET = 1000


def run_finals(session: "Session", *, top_k: int = 3, steps: int | None = None, seeds: int = 2) -> list[int]:
    """Train the top ``top_k`` configs for ``steps`` (default 4× the search's) with ``seeds`` new seeds.

    Returns the final-stage config ids. Finals already recorded are not run twice.
    """
    if top_k < 1 or seeds < 1:
        raise BracketError("Finals need at least one config and one seed (--top and --seeds >= 1).")
    if steps is not None and steps < 1:
        raise BracketError("Finals need a positive step count.")
    if steps is not None and steps < session.settings.steps:  # finals check that a lead survives longer runs
        raise BracketError(f"Finals are at least as long as the search runs ({session.settings.steps} steps); "
                           f"{steps} is shorter. Give {session.settings.steps} or more (default "
                           f"{session.settings.steps * 4}).")
    steps = steps or session.settings.steps * 4
    configs = {c["id"]: c for c in session.store.configs(session.name, stage="search")}
    chosen = [configs[row.config_id] for row in standings(session).top("search", top_k) if row.config_id in configs]
    if not chosen:
        raise BracketError("No configuration has a score yet; run the search before the finals.")
    existing = {c["trial_number"]: c for c in session.store.configs(session.name, stage="final")}
    session._lock.acquire()
    session._stop.clear()
    try:
        final_ids = []
        for config in chosen:
            final = existing.get(config["trial_number"])
            if final is None:
                final_id = session.store.add_config(
                    session.name, trial_number=config["trial_number"], kind=config["kind"], stage="final",
                    name=config["name"], params=config["params"], worker=session.worker_id)
                final = next(c for c in session.store.configs(session.name, stage="final") if c["id"] == final_id)
            done = {r["seed_index"] for r in session.store.runs(session.name, with_series=False)
                    if r["config_id"] == final["id"] and r["status"] in ("done", "failed", "pruned", "disqualified")}
            for seed_index in range(seeds):
                if seed_index in done or session._stop.is_set():
                    continue
                session._train(final, seed_index, steps=steps,
                               seed=session.settings.base_seed + FINAL_SEED_OFFSET + seed_index)
            final_ids.append(final["id"])
        runs = [r for r in session.store.runs(session.name) if r["stage"] == "final"]
        values = config_values(runs, session.scores(runs))
        for final_id in final_ids:
            if final_id in values:
                session.store.update_config(final_id, status="done", value=statistics.fmean([values[final_id]]))
        return final_ids
    finally:
        session._lock.release()
