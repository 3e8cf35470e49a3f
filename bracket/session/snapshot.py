"""The snapshot: a plain-data picture of a session that a UI or CLI can render.

It is built from the store (the truth, shared with other processes and workers) plus the
live state of the run in progress, and contains only copies — rendering it can never
disturb the search.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from bracket.search.lr_bracket import KIND as BRACKET_KIND
from bracket.search.lr_bracket import TRIALS as BRACKET_TRIALS
from bracket.search.skip_rule import skipped_kinds
from bracket.search.types import PAST_KIND
from bracket.session.loop.plan import phase_kind, plan_progress
from bracket.session.loop.search_reading import measured_launch
from bracket.session.loop.search_view import SearchView
from bracket.session.store import stored_rows
from bracket.session.store.schema import RUN_SPENT


@dataclass
class SessionSnapshot:
    """What a person sees of a session at one moment."""

    name: str
    preset_id: str
    status: str
    phase: str
    error: str
    plan: str
    budget: int
    total_runs: int
    runs_spent: int
    seeds: int
    eta_s: float | None
    elapsed_s: float | None
    current: dict[str, Any] | None
    runs: list[dict[str, Any]] = field(default_factory=list)
    configs: list[dict[str, Any]] = field(default_factory=list)
    workers: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    writes_samples: bool = True
    sample_kind: str = "image"
    #: runs the divergence stop ended early, and the training time that saved (estimated
    #: from each run's own pace: its remaining steps at the speed it had)
    stopped_early: int = 0
    time_saved_s: float = 0.0
    #: the search plan's phases with their progress (``bracket.session.loop.plan.plan_progress``)
    phases: list[dict[str, Any]] = field(default_factory=list)
    #: a halving search's budget is GPU time: what its search runs have used, in full-run
    #: equivalents (steps trained plus each launch's start-up, ``rung_scores.full_runs_spent``);
    #: None for a search that trains every config to full length
    full_runs_spent: float | None = None

    @property
    def progress(self) -> float:
        if self.full_runs_spent is not None:
            return min(1.0, self.full_runs_spent / self.budget) if self.budget else 0.0
        return min(1.0, self.runs_spent / self.total_runs) if self.total_runs else 0.0

    @property
    def spent_label(self) -> str:
        """What the budget has bought so far: ``3/8 runs``; a halving search, whose budget is
        full runs and whose configs pause at rungs: ``8 configs, 2.4/4 full runs``."""
        if self.full_runs_spent is None:
            return f"{self.runs_spent}/{self.total_runs} runs"
        configs = sum(1 for c in self.configs if c.get("stage") == "search")
        return f"{configs} config{'s' if configs != 1 else ''}, {self.full_runs_spent:.1f}/{self.budget} full runs"


def build_snapshot(session: Any) -> SessionSnapshot:
    """The snapshot of ``session`` (a :class:`bracket.session.session.Session`) now."""
    store, name = session.store, session.name
    row = store.get_session(name) or {}
    runs, stored_configs = stored_rows(session)  # shared with the scores and standings of this store change
    configs = {c["id"]: c for c in stored_configs}
    scores = session.scores()
    live = session.executor.live()
    run_views: list[dict[str, Any]] = []
    for run in runs:
        config = configs.get(run["config_id"]) or {}
        score = scores.get(run["id"])
        view = {
            "id": run["id"], "config_id": run["config_id"], "config_name": config.get("name", run["label"]),
            "kind": run["kind"], "stage": run["stage"], "status": run["status"], "seed": run["seed"],
            "params": dict(run["params"] or {}), "label": run["label"], "run_dir": run["run_dir"],  # copies: the
            # rows are shared with the scores and standings of this change (``stored_rows``)
            "duration_s": run["duration_s"], "failure_reason": run["failure_reason"], "worker": run["worker"],
            "last_step": run["last_step"], "max_steps": run["max_steps"], "samples": list(run["samples"] or []),
            # a paused run's step: what it resumes from and is scored at (``last_step``: what it trained)
            "pause_step": run.get("pause_step"),
            "score": None if score is None else score.value,
            "judges": {} if score is None else dict(score.judges),
            "judges_used": [] if score is None else list(score.used),
            # the parts predicted for a judge that has not scored the run (e.g. the human judge
            # from rated runs of similar configs): part of the score, so shown beside it
            "estimates": {} if score is None else {name: part.value for name, part in score.parts.items()
                                                   if part.estimated and part.weight > 0},
            "disqualified": bool(score and score.disqualified),
            "loss_basis": ((score.details.get("loss") or {}).get("basis", "") if score else ""),
        }
        if live and live["run_id"] == run["id"]:
            view["last_step"] = live["step"]
            view["samples"] = live["samples"]
        run_views.append(view)
    # the search's runs only: finals and promote runs are not part of the budget ("8/4 runs" otherwise);
    # a halving search's run paused at a rung, or resuming from one, is spent too ("1/13 runs" otherwise)
    search = [r for r in runs if r["kind"] != "setup" and r["stage"] == "search"]
    scored = [r for r in search if r["status"] in RUN_SPENT]
    budget = session.budget  # what the search spent, in the budget's unit (runs, or full runs of GPU time)
    counted = SearchView.build(stored_configs, search, seeds=session.settings.seeds,
                               full_steps=int(session.settings.steps), launch=measured_launch(search, session.settings))
    spent = counted.spent_runs()
    durations = [r["duration_s"] for r in scored if r["duration_s"]]
    # a finished halving search ran what its budget bought in the end (fewer configs than planned where runs
    # trained past their rungs): its plan and count are those, not what it could have bought
    ended = row.get("status") == "finished" and not session.running  # a finished search has no "next" phase
    over = ended and budget.halving  # ``Session.search_over``, from the row read once here
    total = spent if over else budget.runs_bought(counted)
    full_runs = None
    if budget.halving:
        full_runs = budget.spent(counted)
        trained_s = sum(float(r["duration_s"] or 0) for r in search if r["status"] in RUN_SPENT + ("paused",))
        # the time a full run's worth has taken so far, times the full runs the budget has left
        eta = trained_s / full_runs * max(0.0, session.settings.budget - full_runs) if full_runs and trained_s \
            else None
    else:
        remaining = max(0, total - spent)
        eta = statistics.median(durations) * remaining if durations else None
    if eta is not None and live:
        eta = max(0.0, eta - (time.time() - live["started_at"]))
    paused = session.paused  # the search waits between runs: its ETA and clock stand still
    stopped_early, time_saved = time_saved_by_stops(runs)
    live_config = configs.get(next((r["config_id"] for r in runs if live and r["id"] == live["run_id"]), None))
    confirmed = [{"kind": "confirm"} for r in runs  # confirmation runs: fresh seeds of search configs
                 if r["stage"] == "search" and (r.get("seed_index") or 0) >= session.settings.seeds]
    phases = plan_progress(session.plan_at(len(counted.configs) if over else budget.configs(counted)[0]),
                           [c for c in configs.values() if c.get("stage") == "search"] + confirmed,
                           phase_kind(live_config) if live_config and live_config.get("stage") == "search" else None,
                           skipped=skipped_kinds(row.get("notes") or []), algorithm=session.settings.algorithm,
                           ended=ended)
    workers = [dict(w, alive=session.worker.is_alive(w)) for w in store.workers(name)]
    return SessionSnapshot(
        name=name, preset_id=session.parts.preset.id,
        status="paused" if paused else "running" if session.running else row.get("status", "created"),
        phase=session.phase, error=session.error, plan=budget.plan_text(counted, ended=over),
        budget=session.settings.budget, total_runs=total, runs_spent=spent,
        seeds=session.settings.seeds,
        eta_s=eta, elapsed_s=session.active_seconds(),
        current=live, runs=run_views, configs=list(configs.values()), workers=workers,
        notes=list(row.get("notes") or []), writes_samples=session.trainer.writes_samples,
        sample_kind=session.trainer.sample_kind, stopped_early=stopped_early, time_saved_s=time_saved,
        phases=phases, full_runs_spent=full_runs,
    )


def phase_label(session: Any, config: dict[str, Any]) -> str:
    """``baseline``, ``past 1/2``, ``curated 2/3``, ``learning-rate bracket 1/2`` or ``search 4/12`` for the
    config about to train. ``session``: anything with the session's ``store``, ``name``,
    ``settings``, ``facts`` and ``controller()`` (the session or its run pipeline)."""
    configs = session.store.configs(session.name, stage="search")
    same_kind = [c for c in configs if c["kind"] == config["kind"]]
    index = next((i for i, c in enumerate(same_kind) if c["id"] == config["id"]), 0) + 1
    if config["kind"] == "baseline":
        return "baseline"
    others = len(configs) - len(same_kind)
    planned = session.settings.configs_planned(session.facts)
    if config["kind"] == BRACKET_KIND:  # the budget may end first, or one side may clamp onto the centre
        total = min(BRACKET_TRIALS, planned - others)
        return f"learning-rate bracket {index}/{max(total, index)}"
    if config["kind"] in ("curated", PAST_KIND):  # the budget may end before every one is tried
        waiting = session.controller().waiting_count(config["kind"])
        total = min(len(same_kind) + waiting, planned - others)
        return f"{config['kind']} {index}/{max(total, index)}"
    return f"search {index}/{max(planned - others, index)}"


def confirm_phase_label(session: Any) -> str:
    """``confirm 3/6``: the confirmation run about to train, of the round's runs."""
    seeds = session.settings.seeds
    runs = session.store.runs(session.name, with_series=False, statuses=RUN_SPENT)
    done = sum(1 for r in runs if r["stage"] == "search" and (r["seed_index"] or 0) >= seeds)
    return f"confirm {done + 1}/{session.settings.confirm_runs}"


def time_saved_by_stops(runs: list[dict[str, Any]]) -> tuple[int, float]:
    """(runs stopped early by the divergence stop, estimated seconds of training saved)."""
    count, saved = 0, 0.0
    for run in runs:
        if run["status"] != "pruned":
            continue
        count += 1
        done, total, seconds = run.get("last_step") or 0, run.get("max_steps") or 0, run.get("duration_s") or 0.0
        if done > 0 and total > done:
            saved += seconds * (total - done) / done
    return count, saved
