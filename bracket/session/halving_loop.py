"""The search loop of a halving session: new configs pause at the first rung, the best resume.

With ``SearchSettings.halving`` the session's search phase runs here instead of training
every config to full length. Each turn it asks, in this order:

1. a config with a seed that has no run (an interrupted one, a config another worker left):
   that seed trains to the rung its config stands at;
2. ``bracket.search.halving.promotions`` on every config's place (``rung_scores.parked``) and
   rung scores (``rung_scores.rung_scores``), the first the budget pays for (``affordable``: the
   steps trained and in flight on every worker, the first rung of the configs still to come,
   the way to full length for one; with ``SearchSettings.restarts`` each promotion trains its
   rung from step 0 and a restart's thrown-away steps stay spent, ``rung_scores.trained_steps``):
   its paused runs are claimed (``Store.claim_run``) and resume
   (``RunPipeline.resume``) to the next rung, or to full length. The view is read, the budget
   checked and the runs claimed under the session's row lock (``WorkerProtocol.deciding``), so
   two workers never promote on the same view;
3. a new config from the controller (while the budget buys one), launched with the schedule of
   the full length and ``stop_at_step`` = the first rung's step.

The rungs' steps are the session's (``--steps``): what a run is asked for (``stop_at_step``, and a
resume's length, the session's, never the run row's ``max_steps``). A run's trainer may count its
steps otherwise (an LLM trainer's optimizer steps at its effective batch): it pauses at the same
share of its own length, and the loop reads each run in its own steps (``StepRungs.step_in``,
``StepRungs.rung_of``), so the rungs, the pauses, the scores, the budget and the notes agree for
every trainer and every effective batch, searched or not.

A run that pauses at a rung is judged there (``RunPipeline.judge_rung``): its samples by the
VLM judge when one is configured; an LLM run's held-out answers, made there from its paused
adapter, by the task judge and the LLM-as-judge when one of them weighs in. The loop waits for
those verdicts (bounded, ``RunPipeline.wait_for_rung_verdicts``) before it decides the next
promotion, so the judges' verdicts at the rung take part in it; a failing judge or generation
leaves the run unscored by it and the search goes on. Paused runs without a verdict at their
rung (a session reopened) are judged when the loop starts.

When no new config can be bought the rule is *closing* (the best of a rung goes on even past
the budget while no config has gone past that rung, so a search ends with a full-length run),
and when nothing is left configs still paused are *stopped* (each by one worker, in the store
and the study, with the reason). The configs' ``rung``, ``rung_state`` and ``rung_note`` are written as things
happen (the notes of the configs waiting at a rung each time another config's score lands); a config
that reaches full length is finished as any config (its value to the study).
The confirmation rung and finals rank only configs with full-length runs: paused runs are not
scored (``scoring.SCORED_STATUSES``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bracket.search.halving import Promotion, cost, promotions, share_label, stopped_reason, top_count
from bracket.session.confirm import confirm_step
from bracket.session.distributed import move_config
from bracket.session.launches import launch_steps
from bracket.session.rung_scores import ENDED, full_runs_spent, parked, run_steps, rung_scores, seed_runs, trained_steps
from bracket.session.rung_steps import restart_note, session_rungs
from bracket.session.store.schema import RUN_ACTIVE, spends_budget


def halving_history(session: Any) -> list[Any]:
    """The search configs as the sampler sees them in a halving search, never mixing a short
    run's score with a full run's: one value per scored config, :func:`bracket.search.halving.search_values`
    (the rung it reached first, then its rank among the configs at that rung; what
    ``python -m bench halving`` measured best, ``@lexi``), COMPLETE; a config not scored yet
    RUNNING (FAIL when it failed)."""
    from optuna.trial import TrialState

    from bracket.search.halving import search_values
    from bracket.search.types import ScoredConfig

    loop = HalvingLoop(session, wait_s=0.0)
    configs, runs, scores = loop.state()
    last = len(loop.rungs.steps) - 1
    full = session.scoreboard.config_values(runs)  # scored runs are the full-length ones
    scores = {**scores, **{(cid, last): value for cid, value in full.items()}}
    values = search_values(scores, last)
    history = []
    for config in configs:
        params = session.space.searched_params(config["params"])
        common = {"kind": config["kind"], "name": str(config.get("name") or "")}
        if config["id"] in values:
            history.append(ScoredConfig(params, values[config["id"]], TrialState.COMPLETE, **common))
        elif config["status"] in ("running", "paused", "failed"):
            state = TrialState.FAIL if config["status"] == "failed" else TrialState.RUNNING
            history.append(ScoredConfig(params, None, state, config["kind"]))
    return history


@dataclass
class Work:
    """One thing to train: ``seeds`` of ``config`` anew, or its paused ``runs`` resumed, to ``stop_at``."""

    config: dict[str, Any]
    stop_at: int | None
    seeds: list[int] = field(default_factory=list)
    runs: list[int] = field(default_factory=list)
    note: str = ""


class HalvingLoop:
    """The halving search of one session (given the session; it imports none of it)."""

    def __init__(self, session: Any, *, wait_s: float) -> None:
        self.session = session
        self.settings = session.settings
        self.rungs = session_rungs(self.settings, session.trainer)
        self.wait_s = wait_s

    def label(self, rung: int) -> str:
        return share_label(self.rungs.fractions()[rung])

    def stop_at(self, rung: int) -> int | None:
        """The step a run trains to for ``rung``: None for the last (its full ``max_steps``)."""
        return self.rungs.steps[rung] if rung < len(self.rungs.steps) - 1 else None

    # -- what the store says -------------------------------------------------------------
    def state(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[tuple[int, int], float]]:
        s = self.session
        runs = [r for r in s.store.runs(s.name) if r["stage"] == "search"]
        configs = s.store.configs(s.name, stage="search")
        scores = rung_scores(configs, runs, self.rungs, seeds=self.settings.seeds, ratings=s.store.ratings(s.name),
                             comparisons=s.store.comparisons(s.name), weights=self.settings.weights,
                             eval_loss=s.trainer.sample_kind == "text")
        return configs, runs, scores

    def config_count(self, runs: list[dict[str, Any]]) -> int:
        """The configs the budget buys: the plan's count until the session has measured a
        launch's start-up, then fewer where the extra launches of pauses and resumes cost it
        (said once in the notes)."""
        planned = self.settings.n_configs
        launch = launch_steps(runs, self.rungs.steps[-1], self.settings.launch_share)
        count = max(1, self.settings.configs_within(launch / self.rungs.steps[-1])) if launch else planned
        if count < planned:
            self.session.add_note(
                f"halving: each launch's start-up (measured) counts against the budget, and every rung is a launch: "
                f"{self.settings.budget} full runs buy {count} configs, not the {planned} planned")
        return min(count, planned)

    def next_work(self) -> Work | None:
        s, seeds = self.session, self.settings.seeds
        configs, runs, scores = self.state()
        workers = s.worker.workers()
        for config in configs:
            if config["status"] not in ("running", "paused"):
                continue
            place = parked(config, runs, self.rungs, seeds)
            by_seed = seed_runs(runs, config["id"], seeds)
            missing = [i for i in range(seeds) if i not in by_seed]
            if not missing or place.running or place.finished:
                continue
            owner = config["worker"]
            if owner and owner != s.worker_id and s.worker.is_alive(workers.get(owner)):
                continue
            if owner != s.worker_id and not s.worker.claim(config["id"], owner):
                continue
            target = max((self.rungs.rung_of(r.get("pause_step") or r.get("last_step"), run_steps(r))
                          for r in by_seed.values()), default=0)
            return Work(config | {"worker": s.worker_id}, self.stop_at(max(0, target)), seeds=missing)
        # decided and claimed under the session's row lock, on a view read inside it: two workers
        # never promote on the same view (one paused run, or the last of the budget, twice)
        with s.worker.deciding():
            work = self._promotion()
        if work is not None:
            s.store.update_config(work.config["id"], status="running", rung_state="promoted", rung_note=work.note)
            return work
        count = self.config_count(runs)
        if len(configs) >= count:  # no new config will come: the budget bought them all
            return None
        config_id = s.worker.reserve(count, s.controller().next)
        skipped, s.controller().skipped = s.controller().skipped, []
        for note in skipped:
            s.add_note(note)
        if config_id is None:
            return None
        config = next(c for c in s.store.configs(s.name, stage="search") if c["id"] == config_id)
        s.store.update_config(config_id, rung_state="running", rung_note=f"running to {self.label(0)}")
        return Work(config, self.stop_at(0), seeds=list(range(seeds)))

    def _promotion(self) -> Work | None:
        """The first promotion the budget pays for, its paused runs claimed for this worker."""
        configs, runs, scores = self.state()
        # every config counts at the rungs it reached (those gone on too); a stopped one stays a
        # candidate: a rating that lifts it into the top share promotes it
        places = [parked(c, runs, self.rungs, self.settings.seeds) for c in configs]
        left = self.config_count(runs) - len(configs)  # configs the budget still buys
        closing = left <= 0  # no new config will come
        for promotion in promotions(places, scores, self.rungs, closing=closing):
            if not self.affordable(promotion, scores, runs, configs_left=left, closing=closing):
                continue
            config = next(c for c in configs if c["id"] == promotion.config_id)
            paused = [r["id"] for r in seed_runs(runs, config["id"], self.settings.seeds).values()
                      if r["status"] == "paused"]
            claimed = [run_id for run_id in paused if self.session.store.claim_run(run_id, self.session.worker_id)]
            if claimed:
                return Work(config, self.stop_at(promotion.to_rung), runs=claimed, note=promotion.reason)
        return None

    def committed(self, run: Mapping[str, Any]) -> float:
        """The session's steps ``run`` has trained, or trains to now: one in flight counts to the
        rung it goes to (a run counting its own steps otherwise, by the same share of its length);
        the steps a restart threw away count too (``trained_steps``)."""
        full = self.rungs.steps[-1]
        per_step = full / (run_steps(run) or full)
        trained = trained_steps(run) * per_step
        if run["status"] not in RUN_ACTIVE:
            return trained
        start = int(run.get("pause_step") or 0) * per_step
        target = next((step for step in self.rungs.steps if step > start + 1e-9), full)
        return max(trained, target + int(run.get("restart_steps") or 0) * per_step)

    def way(self, rung: int, to_rung: int) -> int:
        """The session's steps a config at ``rung`` (-1: none yet) trains to reach ``to_rung``: the
        steps between, or with ``restarts`` the whole of each rung on the way (each from step 0)."""
        steps = self.rungs.steps
        if self.settings.restarts:
            return sum(steps[max(0, rung + 1):to_rung + 1])
        return steps[to_rung] - (steps[rung] if rung >= 0 else 0)

    def affordable(self, promotion: Promotion, scores: Mapping[tuple[int, int], float], runs: list[dict[str, Any]],
                   *, configs_left: int = 0, closing: bool = True) -> bool:
        """Whether the budget pays for ``promotion``: the steps trained and in flight (every worker's,
        each run in flight to the rung it goes to), the promotion's, the first rung of the configs
        still to come and, while no config is at or on its way to full length, the rest of the way
        there for one, within ``search_runs`` full runs. The best config of its rung goes on anyway
        when no new config can come and none has gone past its rung (so a search ends with a
        full-length run); the closing rule's wider share than the top ``1/eta`` also pays each
        launch's measured start-up."""
        steps, seeds, last = self.rungs.steps, self.settings.seeds, len(self.rungs.steps) - 1
        rung = promotion.to_rung - 1
        search = [r for r in runs if (r.get("seed_index") or 0) < seeds and r.get("stage", "search") == "search"
                  and r.get("kind") != "setup" and (spends_budget(r) or r["status"] in RUN_ACTIVE)]
        committed = [self.committed(r) for r in search]
        highest = max((self.rungs.rung_of(step) for step in committed), default=-1)
        ahead = max(highest, promotion.to_rung)
        finish = seeds * self.way(ahead, last)
        need = seeds * self.way(rung, promotion.to_rung)
        fits = sum(committed) + need + max(0, configs_left) * seeds * steps[0] + finish \
            <= self.settings.search_runs * steps[-1]
        ranked = sorted((value, cid) for (cid, r), value in scores.items() if r == rung)
        best = bool(ranked) and ranked[0][1] == promotion.config_id
        if best and closing and highest <= rung:
            return True
        place = next(i for i, (_, cid) in enumerate(ranked) if cid == promotion.config_id)
        if not fits or not closing or place < len(ranked) // self.rungs.eta:
            return fits
        launch = launch_steps(search, steps[-1], self.settings.launch_share)  # 0 until measured
        return full_runs_spent(search, steps[-1], launch_steps=launch) \
            + seeds * cost(need // seeds, 1, steps[-1], launch_steps=launch) <= self.settings.search_runs + 1e-9

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> None:
        s, control = self.session, self.session.control
        preset = s.parts.preset
        note = restart_note(s.trainer, preset.trainer_script or preset.display_name)
        if note:
            s.add_note(note)
        for run in s.store.runs(s.name, with_series=False):
            if run["stage"] == "search" and run["status"] == "paused":
                s.pipeline.judge_rung(run["id"])  # judged there before: kept, not asked again
        while not control.halted:
            control.wait_while_paused(s.changed)
            if control.stop_requested():
                return
            s.worker.recover()
            work = self.next_work()
            if work is None:
                if any(r["status"] in RUN_ACTIVE for r in s.store.runs(s.name, with_series=False)
                       if r["stage"] == "search"):
                    s.phase = "waiting for other workers"
                    control.wait(self.wait_s)
                    continue
                self.stop_the_rest()
                if self.settings.confirm_runs and confirm_step(s.pipeline, wait_s=self.wait_s):
                    continue
                return
            self.train(work)

    def train(self, work: Work) -> None:
        s, control = self.session, self.session.control
        for seed_index in work.seeds:
            if control.stop_requested():
                break
            s.pipeline.train(work.config, seed_index, stop_at_step=work.stop_at)
        for index, run_id in enumerate(work.runs):
            if control.stop_requested():  # the runs claimed and not resumed wait again
                for left in work.runs[index:]:
                    s.store.update_run(left, status="paused")
                break
            # claimed in next_work; the session's length, as the run was asked for
            s.pipeline.resume(run_id, steps=self.settings.steps, stop_at_step=work.stop_at, claimed=True)
        s.pipeline.wait_for_rung_verdicts()
        self.record(work.config)

    def record(self, config: Mapping[str, Any]) -> None:
        """Write where ``config`` stands now (``rung``, ``rung_state``, ``rung_note``); finish it at full length."""
        s = self.session
        configs, runs, scores = self.state()
        row = next(c for c in configs if c["id"] == config["id"])
        place = parked(row, runs, self.rungs, self.settings.seeds)
        last = len(self.rungs.steps) - 1
        if place.running:
            return
        self.report(row, scores)
        self.renote_paused(configs, scores, but=row["id"])
        if place.finished or place.reached == last:
            values: dict[str, Any] = {"rung": max(place.reached, -1) if place.reached >= 0 else None}
            if place.reached == last:
                values |= {"rung_state": "full", "rung_note": row.get("rung_note") or "trained to full length"}
            else:  # a run failed or was disqualified: the config goes no further (not "running" any more)
                ended = [r for r in seed_runs(runs, row["id"], self.settings.seeds).values() if r["status"] in ENDED]
                values |= {"rung_state": "stopped", "rung_note": "stopped: " + "; ".join(
                    f"run {r['id']} {r['status']}" for r in ended)}
            s.store.update_config(row["id"], **values)
            s.pipeline.finish_config(row)
            return
        if place.reached >= 0:
            s.store.update_config(row["id"], status="paused", rung=place.reached, rung_state="paused",
                                  rung_note=self.paused_note(row["id"], place.reached, scores))

    def paused_note(self, config_id: int, rung: int, scores: Mapping[tuple[int, int], float]) -> str:
        """``paused at 1/3: 2 of 3, top 1 goes on``: a config's place at the rung it waits at."""
        return stopped_reason(config_id, rung, scores, self.rungs).replace("stopped at", "paused at", 1)

    def renote_paused(self, configs: list[dict[str, Any]], scores: Mapping[tuple[int, int], float], *,
                      but: int) -> None:
        """Bring the notes of the configs waiting at a rung (but ``but``, whose own is written) up to
        their place there now: another config's score landed at their rung. Written only where the
        place changed, and only while the config still waits there (another worker may promote it)."""
        for config in configs:
            rung = config.get("rung")
            if config["id"] == but or config["status"] != "paused" or config.get("rung_state") != "paused" \
                    or rung is None:
                continue
            note = self.paused_note(config["id"], int(rung), scores)
            if note != config.get("rung_note"):
                self.session.store.update_config(config["id"], rung_note=note, only_if={
                    "status": "paused", "rung_state": "paused", "rung": rung})

    def stop_the_rest(self) -> None:
        """Nothing more will be promoted: configs still paused are stopped, with the reason."""
        from optuna.trial import TrialState

        s = self.session
        configs, runs, scores = self.state()
        for config in configs:
            if config["status"] not in ("paused", "stopped"):
                continue
            place = parked(config, runs, self.rungs, self.settings.seeds)
            reason = self.why_stopped(config["id"], place.reached, scores)
            if config["status"] == "stopped":  # stopped by an earlier end (before +N runs): its place now
                if reason != config.get("rung_note"):
                    s.store.update_config(config["id"], rung_note=reason)
                continue
            if not move_config(s.store, config["id"], "paused", "stopped"):
                continue  # another worker at the end of the search stops it
            # no value: a score at a rung ranks among that rung's configs only, never against full runs
            s.store.update_config(config["id"], rung_state="stopped", rung_note=reason, value=None)
            self.report(config, scores, reason=reason)
            s.controller().finish(config["trial_number"], None, TrialState.PRUNED)

    def why_stopped(self, config_id: int, rung: int, scores: Mapping[tuple[int, int], float]) -> str:
        """``stopped_reason``, and when the config is inside the rung's top share, that the budget stopped it."""
        reason = stopped_reason(config_id, rung, scores, self.rungs)
        ranked = sorted((value, cid) for (cid, r), value in scores.items() if r == rung and math.isfinite(value))
        place = next((i for i, (_, cid) in enumerate(ranked, start=1) if cid == config_id), None)
        if place is not None and place <= top_count(len(ranked), self.rungs.eta):
            reason += ", but the budget is spent"
        return reason

    def report(self, config: Mapping[str, Any], scores: Mapping[tuple[int, int], float], *, reason: str = "") -> None:
        """Tell the stored study the config's rung scores as intermediate values at the rung steps
        (``trial.report``: optuna-dashboard draws each curve) and, when stopped, why. Best effort."""
        from bracket.optuna_access.private import study_storage, trial_id

        study = self.session.controller().study
        try:
            trial = study.trials[int(config["trial_number"])]
            if trial.state.is_finished():
                return
            storage = study_storage(study)
            for (config_id, rung), value in sorted(scores.items()):
                if config_id == config["id"]:
                    storage.set_trial_intermediate_value(trial_id(trial), self.rungs.steps[rung], float(value))
            if reason:
                storage.set_trial_user_attr(trial_id(trial), "stopped_reason", reason)
        except Exception:  # noqa: BLE001 - the study's curves never stop a search
            import logging

            logging.getLogger(__name__).warning("could not report rung scores of %s", config.get("name"), exc_info=True)
