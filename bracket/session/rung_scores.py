"""Where each configuration of a halving search stands on the rungs, and its score at each.

A configuration's score at a rung is the session's own score (``bracket.session.scoring.run_scores``:
the loss judge with the validation loss where the trainer has one, else the smoothed training
loss; ratings and choices; the VLM and LLM judges) of its runs *as they were at the rung's
step*: every run that reached that step is cut there — its loss series, validation loss and
samples up to the step, the ratings given at or before it, the judges' verdicts on that very
step (those stored for it when the run paused there, ``judges["at_step"]``, kept after it went
on; else the run's own when it ended there) — and all of them are scored together, as ``score_runs``
scores any set of runs (its scores are ranks among the runs it is given). Nothing of the
scoring is repeated here.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bracket.search.halving import Parked
from bracket.session.launches import up_to
from bracket.session.scoring.run_scores import WORST, score_runs, verdicts_at
from bracket.session.store.schema import RUN_ACTIVE

#: run states that end a configuration on the rungs (it cannot go on)
ENDED = ("failed", "pruned", "disqualified")


@dataclass(frozen=True)
class StepRungs:
    """The rungs of one session at its real steps (``Rungs.steps``: rounded to the sample
    interval, merged where they meet), in the shape ``bracket.search.halving`` reads.
    ``shares``: the rungs as the plan names them (``Rungs.fractions``), so the notes say the
    same ``1/9`` as the plan, ``status`` and the app, whatever step a rung rounded to."""

    eta: int
    steps: tuple[int, ...]
    shares: tuple[float, ...] = ()

    def fractions(self) -> tuple[float, ...]:
        if len(self.shares) == len(self.steps):  # no rungs merged: the planned names
            return tuple(self.shares)
        return tuple(step / self.steps[-1] for step in self.steps)

    def rung_of(self, step: int | None) -> int:
        """The highest rung at or below ``step`` (-1 below the first)."""
        return max((i for i, s in enumerate(self.steps) if step is not None and s <= step), default=-1)


def reached_step(run: Mapping[str, Any]) -> int:
    """The step up to which ``run`` has trained and been recorded: a paused run's pause step, a
    resuming one's the step it resumed from, a finished one's last step."""
    if run["status"] == "done":
        return int(run.get("last_step") or 0)
    if run["status"] in ("paused",) + RUN_ACTIVE:
        return int(run.get("pause_step") or 0)
    return 0


def seed_runs(runs: Sequence[Mapping[str, Any]], config_id: int, seeds: int) -> dict[int, Mapping[str, Any]]:
    """Seed index -> the newest search run of that seed of ``config_id`` (confirmation runs left out)."""
    out: dict[int, Mapping[str, Any]] = {}
    for run in runs:
        if run.get("config_id") == config_id and run.get("stage", "search") == "search" \
                and (run.get("seed_index") or 0) < seeds and run["status"] != "interrupted":
            out[run.get("seed_index") or 0] = run
    return out


def parked(config: Mapping[str, Any], runs: Sequence[Mapping[str, Any]], rungs: StepRungs, seeds: int) -> Parked:
    """Where ``config`` stands: the lowest rung all its seeds reached, whether one trains now,
    whether one ended (failed, diverged)."""
    by_seed = seed_runs(runs, config["id"], seeds)
    reached = min((rungs.rung_of(reached_step(r)) if r["status"] in ("done", "paused") else -1
                   for r in (by_seed.get(i) for i in range(seeds)) if r is not None), default=-1)
    if len(by_seed) < seeds:
        reached = -1
    return Parked(config["id"], reached, running=any(r["status"] in RUN_ACTIVE for r in by_seed.values()),
                  finished=any(r["status"] in ENDED for r in by_seed.values()))


def _at_step(run: Mapping[str, Any], step: int) -> dict[str, Any]:
    """``run`` as it was at ``step``: a finished run of that length, to be scored."""
    judged_here = reached_step(run) == step and run["status"] in ("done", "paused")
    judges = verdicts_at(run, step) or ((run.get("judges") or {}) if judged_here else {})
    return {**run, "status": "done", "finished_at": None, "last_step": step,
            "loss": up_to(run.get("loss") or [], step), "eval_loss": up_to(run.get("eval_loss") or [], step),
            "samples": [s for s in run.get("samples") or [] if s.get("step") is None or s["step"] <= step],
            "judges": judges}


def rung_scores(configs: Sequence[Mapping[str, Any]], runs: Sequence[Mapping[str, Any]], rungs: StepRungs, *,
                seeds: int, ratings: Sequence[Mapping[str, Any]] = (), comparisons: Sequence[Mapping[str, Any]] = (),
                weights: Mapping[str, float] | None = None, eval_loss: bool = False) -> dict[tuple[int, int], float]:
    """``{(config_id, rung): score}`` (lower is better) of every config at every rung it reached
    but the last; ``runs`` with their series."""
    out: dict[tuple[int, int], float] = {}
    members = [r for c in configs for r in seed_runs(runs, c["id"], seeds).values() if r["status"] not in ENDED]
    for rung, step in enumerate(rungs.steps[:-1]):
        cut = [_at_step(r, step) for r in members if reached_step(r) >= step]
        if not cut:
            continue
        ids = {r["id"] for r in cut}
        at_rung = {r["id"] for r in cut if reached_step(r) == step}
        shown = [g for g in ratings if g["run_id"] in ids
                 and (g.get("step") is not None and g["step"] <= step
                      or g.get("step") is None and g["run_id"] in at_rung)]
        chosen = [c for c in comparisons if c["left_run_id"] in ids and c["right_run_id"] in ids]
        scores = score_runs(cut, shown, chosen, weights, eval_loss=eval_loss)
        per_config: dict[int, list[float]] = {}
        for run in cut:
            score = scores.get(run["id"])
            per_config.setdefault(run["config_id"], []).append(WORST if score is None or score.value is None
                                                               else score.value)
        for config_id, values in per_config.items():
            if len(values) == seeds:  # every seed reached the rung
                out[(config_id, rung)] = statistics.fmean(values)
    return out



def full_runs_spent(runs: Sequence[Mapping[str, Any]], full_steps: int, *, launch_steps: float = 0.0) -> float:
    """The compute a halving search's runs have used, in full-run equivalents
    (``halving.cost``: every step trained, plus ``launch_steps`` of start-up per launch)."""
    from bracket.search.halving import cost

    trained = [r for r in runs if r.get("kind") != "setup" and r.get("launches")]
    steps = sum(max(int(r.get("last_step") or 0), int(r.get("pause_step") or 0)) for r in trained)
    return cost(steps, sum(int(r["launches"]) for r in trained), int(full_steps), launch_steps=launch_steps)
