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

from bracket.search.halving import Parked, scaled_step
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
    same ``1/9`` as the plan, ``status`` and the app, whatever step a rung rounded to.

    ``steps`` are the session's steps (``--steps``, what a run is asked for: ``stop_at_step``, the
    budget, the study's curves). A run's own steps (its row's ``max_steps``, ``last_step``,
    ``pause_step``, its series) are its trainer's: the same for most, an LLM trainer's optimizer
    steps at the config's effective batch (``--steps`` is the length at 8 examples a step, so
    one at 4 makes twice as many), which a searched batch makes differ from config to config.
    A rung is the same share of each run's own length: :meth:`step_in` (the trainer pauses
    there, ``bracket.search.halving.scaled_step``) and :meth:`rung_of` read every run in its own steps."""

    eta: int
    steps: tuple[int, ...]
    shares: tuple[float, ...] = ()

    def fractions(self) -> tuple[float, ...]:
        if len(self.shares) == len(self.steps):  # no rungs merged: the planned names
            return tuple(self.shares)
        return tuple(step / self.steps[-1] for step in self.steps)

    def step_in(self, rung: int, run_steps: int | None = None) -> int:
        """Rung ``rung``'s step in a run of ``run_steps`` steps of its own (None: the session's)."""
        return scaled_step(self.steps[rung], self.steps[-1], run_steps)

    def rung_of(self, step: float | None, run_steps: int | None = None) -> int:
        """The highest rung at or below ``step`` of a run of ``run_steps`` (-1 below the first)."""
        return max((i for i in range(len(self.steps)) if step is not None and self.step_in(i, run_steps) <= step),
                   default=-1)


def run_steps(run: Mapping[str, Any]) -> int | None:
    """A run's own length (its trainer's steps, the row's ``max_steps``); None when unknown."""
    return int(run.get("max_steps") or 0) or None


def trained_steps(run: Mapping[str, Any]) -> int:
    """The steps ``run``'s launches have trained, in its own steps: where it stands (a paused run's
    pause step, a finished one's last) and the steps a restart threw away (``restart_steps``). A
    restart in flight stands at its ``last_step``: its ``pause_step`` is the launch's it threw away."""
    thrown, last = int(run.get("restart_steps") or 0), int(run.get("last_step") or 0)
    if thrown and run.get("status") in RUN_ACTIVE:
        return thrown + last
    return thrown + max(last, int(run.get("pause_step") or 0))


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
    reached = min((rungs.rung_of(reached_step(r), run_steps(r)) if r["status"] in ("done", "paused") else -1
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
    but the last; ``runs`` with their series. Each run is cut at the rung's step in its own steps."""
    out: dict[tuple[int, int], float] = {}
    members = [r for c in configs for r in seed_runs(runs, c["id"], seeds).values() if r["status"] not in ENDED]
    for rung in range(len(rungs.steps) - 1):
        step = {r["id"]: rungs.step_in(rung, run_steps(r)) for r in members}
        cut = [_at_step(r, step[r["id"]]) for r in members if reached_step(r) >= step[r["id"]]]
        if not cut:
            continue
        ids = {r["id"] for r in cut}
        at_rung = {r["id"] for r in cut if reached_step(r) == step[r["id"]]}
        shown = [g for g in ratings if g["run_id"] in ids
                 and (g.get("step") is not None and g["step"] <= step[g["run_id"]]
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
    (``halving.cost``: every step trained — the share of its own length, in ``full_steps``, the
    session's, the steps a restart threw away included (``restart_steps``) — plus ``launch_steps``
    of start-up per launch)."""
    from bracket.search.halving import cost

    trained = [r for r in runs if r.get("kind") != "setup" and r.get("launches")]
    steps = sum(trained_steps(r) * int(full_steps) / (run_steps(r) or int(full_steps)) for r in trained)
    return cost(steps, sum(int(r["launches"]) for r in trained), int(full_steps), launch_steps=launch_steps)
