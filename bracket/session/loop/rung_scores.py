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

The same scoring of each rung also gives what the sampler sees of the configs there
(``bracket.session.scoring.sampler_values``: once a run at the rung is judged, the person's
verdict and its prediction for the configs not judged; the combined score's mean before), so a
halving search steers by ratings the way a search of full runs does.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bracket.search.halving import Parked, scaled_step
from bracket.session.launches import up_to
from bracket.session.loop.search_view import RungScores, SearchView
from bracket.session.scoring.run_scores import WORST, rated_configs, score_runs, verdicts_at
from bracket.session.scoring.sampler_values import config_measured, sampler_values
from bracket.session.store.rows import RunRow


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

    def goes_to(self, run: RunRow, full_steps: int) -> float:
        """The session's step ``run`` in flight trains to: the first rung past the step it last paused
        at (from none, the first), ``full_steps`` past the last rung."""
        start = run.in_session_steps(run.pause_step, full_steps)
        return next((step for step in self.steps if step > start + 1e-9), full_steps)


def run_steps(run: Mapping[str, Any]) -> int | None:
    """A run's own length (its trainer's steps, the row's ``max_steps``); None when unknown."""
    return int(run.get("max_steps") or 0) or None


def trained_steps(run: Mapping[str, Any]) -> int:
    """Every step ``run``'s launches trained, in its own steps (``RunRow.trained_steps``)."""
    return RunRow.of(run).trained_steps()


def reached_step(run: Mapping[str, Any]) -> int:
    """The step up to which ``run`` has trained and been recorded (``RunRow.reached_step``)."""
    return RunRow.of(run).reached_step()


def seed_runs(runs: Sequence[Mapping[str, Any]], config_id: int, seeds: int) -> dict[int, Mapping[str, Any]]:
    """Seed index -> the newest search run of that seed of ``config_id`` (``SearchView.seed_runs``)."""
    view = SearchView.build((), runs, seeds=seeds, full_steps=1)
    return {index: run.row for index, run in view.seed_runs(config_id).items()}


def parked(config: Mapping[str, Any], runs: Sequence[Mapping[str, Any]], rungs: StepRungs, seeds: int) -> Parked:
    """Where ``config`` stands on the rungs (``SearchView.place``)."""
    view = SearchView.build((), runs, seeds=seeds, full_steps=rungs.steps[-1])
    return replace(view, rungs=rungs).place(config["id"])


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
                weights: Mapping[str, float] | None = None, eval_loss: bool = False,
                params: Mapping[int, Mapping[str, Any]] | None = None) -> RungScores:
    """The scores of every config at every rung it reached but the last (:class:`RungScores`);
    ``runs`` with their series; ``params``: config id -> its searched params (default: the
    config rows' ``params``), for the predictions of the verdicts. Each run is cut at the rung's
    step in its own steps."""
    params = params if params is not None else {c["id"]: c.get("params") or {} for c in configs}
    out: dict[tuple[int, int], float] = {}
    seen: dict[tuple[int, int], float] = {}
    judged: set[int] = set()
    measured: dict[tuple[int, int], float] = {}
    members = [r for c in configs for r in seed_runs(runs, c["id"], seeds).values() if not RunRow.of(r).ended]
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
        complete = {cid: values for cid, values in per_config.items() if len(values) == seeds}  # every seed there
        here = rated_configs(cut, scores) & set(complete)
        judged |= here
        taste = sampler_values([r for r in cut if r["config_id"] in complete], scores, params) if here else {}
        measured.update({(cid, rung): value for cid, value in config_measured(cut, scores).items() if cid in here})
        for config_id, values in complete.items():
            out[(config_id, rung)] = statistics.fmean(values)
            seen[(config_id, rung)] = taste.get(config_id, WORST) if here else out[(config_id, rung)]
    return RungScores(out, seen, frozenset(judged), measured)



def full_runs_spent(runs: Sequence[Mapping[str, Any]], full_steps: int, *, launch_steps: float = 0.0) -> float:
    """The compute ``runs`` used, in full runs (``SearchView.full_runs_spent``)."""
    return SearchView.build((), runs, seeds=1, full_steps=full_steps, launch=launch_steps).full_runs_spent()
