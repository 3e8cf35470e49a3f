"""Do ratings steer the search? Sessions with a simulated rater vs the same sessions without.

For every taste of :mod:`bench.raters` (a person whose liking disagrees with the loss in a
known way, on its own loss landscape) and every repetition, three real sessions run with the
same seeds (``base_seed``, worker id, trainer noise):

* ``control`` — nobody rates: the search follows the loss alone;
* ``rated``   — the rater acts before every proposal from the first trial on (rates some of
  what "Next unrated" shows, now and then a blind pair), through the app's own
  :class:`~bracket.app.manager.SessionManager` functions the Compare tab calls;
* ``late``    — the same rater, but starting only after half the budget;
* ``oracle``  — nobody rates, and the runs train on the taste itself as their loss (a perfect
  rater of every run, :mod:`bench.oracle`): the upper bound of any rating mechanism.

Per session it records every config's kind, the rater's noise-free dislike of it, the ratings
the rater gave its runs, and the config the session itself would pick at the end (lowest
current mean combined score). Reported, per taste over the repetitions:

* **trials to the rater's optimum**: first trial whose config is within 5 % of the rater's
  optimum (a miss counts as budget + 1); median per mode and the ratio rated ÷ control
  (goal ≤ 0.5);
* **pick within 5 %**: share of repetitions whose final pick is within 5 % of the rater's
  optimum (goal ≥ 80 % with ratings), and the median of the rater's value of the pick ÷ optimum;
* **late ratings change the pick**: share of repetitions where the ``late`` session's final
  pick is a different config from the control's, and how many of those picks are within 5 %;
* **pick rules**: the share within 5 % for other rules of choosing the answer, on the same
  sessions (:func:`pick_rules`: cautious about estimated parts, rated configs only), and the
  share of sessions that trained a config within 5 % at all;
* **proposals move**: share of the ``k`` proposals after the first rating that fall in the
  rater's preferred region (≤ 1.2x the rater's optimum), rated vs the control's proposals at
  the same trial numbers (the two sessions are identical up to the first rating).

The figures are computed from the records by :mod:`bench.steering_summary` (re-exported here);
what the rater's own ratings allow at best is :mod:`bench.rater_ceiling`.

``python -m bench steer`` runs the short plan; ``--full`` the long one.
"""

from __future__ import annotations

import math
import os
import shutil
import time
from pathlib import Path
from typing import Any

from bench import oracle, patching
from bench.common import RESULTS_DIR, Plan, bench_fields, run_sessions, skip_python_probe, write_result
from bench.landscape_trainer import LANDSCAPE_ENV
from bench.raters import TASTES, Rater
from bench.steering_summary import (  # noqa: F401 (re-exported: the figures live there)
    MODES, MOVE_WINDOW, PREFERRED, TARGET, pick_ratio, picked_params, proposals_after, summarise,
    trials_to_target)


SHORT = Plan(repetitions=2, budget=20)
FULL = Plan(repetitions=10, budget=24)


_ORIGINAL: dict[str, Any] = {}


def apply_variant(mode: str) -> tuple[str, dict[str, float] | None]:
    """Tuning variants ``<mode>@gamma=0.25`` (TPE's good share), ``<mode>@samegamma`` (the good
    share stays 10 % after a rating, the rule before issue 25's wider share), ``<mode>@prior=1`` (the
    estimate's pseudo-count), ``<mode>@human=4`` (the human weight), ``<mode>@dropjudge`` (the
    old rule: no estimate, a judge without data drops out of that run's score), ``<mode>@winnerfirst``
    ("Next unrated" and "Next pair" as before the informative ranking, :func:`patch_winner_first`),
    ``<mode>@novelty=R`` (``bracket.judge.informative.NOVELTY_RADIUS``), ``<mode>@shared`` (every
    unrated run gets the one shared human estimate, the rule before the estimate from similar
    configs, :mod:`bracket.judge.neighbours`), ``<mode>@scale=S`` (its similarity scale),
    ``<mode>@ratebracket`` (an experiment, not in the app: :func:`patch_rating_bracket`),
    ``<mode>@nearfav[=RADIUS]`` (an experiment, not in the app: :mod:`bench.near_favourite`),
    ``<mode>@region[=MARGIN]`` (an experiment: proposals from a rated neighbourhood,
    :mod:`bench.rated_region`), ``<mode>@optimist[=Z]`` (an experiment: "Next unrated" by
    optimistic score, :func:`bench.rating_experiments.patch_optimist_order`), ``<mode>@focus[=PRIOR]`` (an experiment: a
    narrower TPE once rated, :func:`~bench.rating_experiments.patch_focused_tpe`), ``<mode>@gp`` (an experiment: Optuna's
    GPSampler once rated, :func:`~bench.rating_experiments.patch_gp_when_rated`),
    ``<mode>@again`` (an experiment, not in the app: "Next unrated" offers tied rated leaders one
    more rating, :mod:`bench.tied_leaders`),
    ``<mode>@flatbt`` (Bradley-Terry with the old near-flat prior, alpha 0.1), ``<mode>@noanchor``
    (pairwise scores averaged with ratings as they are, not laid on the rating scale): patch those
    defaults in this worker process; returns the base mode and the weights to use (None = defaults)."""
    from bench import near_favourite, rated_region, tied_leaders
    from bench.rating_experiments import patch_focused_tpe, patch_gp_when_rated, patch_optimist_order
    from bracket.judge import combine, human, informative, neighbours
    from bracket.search import controller
    from bracket.session import scoring

    base, _, option = mode.partition("@")
    defaults = combine.estimate_missing.__kwdefaults__
    _ORIGINAL.setdefault("gamma", controller.DEFAULT_GAMMA_FRACTION)
    kwdefaults = controller.SearchController.__init__.__kwdefaults__
    _ORIGINAL.setdefault("rated_gamma", kwdefaults["rated_gamma"])
    _ORIGINAL.setdefault("prior", defaults["prior_count"])
    _ORIGINAL.setdefault("estimates", scoring.judge_estimates)
    scoring.judge_estimates = _ORIGINAL["estimates"]
    _ORIGINAL.setdefault("rating_part", scoring.rating_part)
    scoring.rating_part = _ORIGINAL["rating_part"]
    patch_winner_first(undo=True)
    patch_rating_bracket(undo=True)
    near_favourite.patch(undo=True)
    rated_region.patch(undo=True)
    patch_optimist_order(undo=True)
    patch_focused_tpe(undo=True)
    patch_gp_when_rated(undo=True)
    tied_leaders.patch(undo=True)
    _ORIGINAL.setdefault("novelty", informative.NOVELTY_RADIUS)
    informative.NOVELTY_RADIUS = _ORIGINAL["novelty"]
    controller.DEFAULT_GAMMA_FRACTION = _ORIGINAL["gamma"]
    near_defaults, human_defaults = neighbours.neighbour_estimates.__kwdefaults__, human.score_human.__kwdefaults__
    _ORIGINAL.setdefault("scale", near_defaults["scale"])
    _ORIGINAL.setdefault("alpha", human_defaults["alpha"])
    near_defaults["scale"], human_defaults["alpha"] = _ORIGINAL["scale"], _ORIGINAL["alpha"]
    kwdefaults["rated_gamma"] = _ORIGINAL["rated_gamma"]
    defaults["prior_count"] = _ORIGINAL["prior"]
    weights = None
    for item in filter(None, option.split(",")):
        key, _, value = item.partition("=")
        if key == "gamma":
            controller.DEFAULT_GAMMA_FRACTION = float(value)
        elif key == "samegamma":
            kwdefaults["rated_gamma"] = False
        elif key == "prior":
            defaults["prior_count"] = float(value)
        elif key == "dropjudge":
            scoring.judge_estimates = lambda *_args, **_kw: {}
        elif key == "human":
            weights = {"loss": 1.0, "human": float(value)}
        elif key == "winnerfirst":
            patch_winner_first()
        elif key == "novelty":
            informative.NOVELTY_RADIUS = float(value)
        elif key == "shared":
            near_defaults["scale"] = 0.0
        elif key == "scale":
            near_defaults["scale"] = float(value)
        elif key == "flatbt":
            human_defaults["alpha"] = 0.1
        elif key == "nearfav":
            near_favourite.patch(radius=float(value) if value else near_favourite.RADIUS)
        elif key == "ratebracket":
            patch_rating_bracket()
        elif key == "region":
            options = {"liked": True} if value == "liked" else {"margin": float(value)} if value else {}
            rated_region.patch(**options)
        elif key == "optimist":
            patch_optimist_order(float(value) if value else 1.0)
        elif key == "gp":
            patch_gp_when_rated()
        elif key == "focus":
            patch_focused_tpe(float(value) if value else 0.2)
        elif key == "again":
            tied_leaders.patch()
        elif key == "noanchor":
            scoring.rating_part = lambda _results: {}
        else:
            raise ValueError(f"unknown variant {item!r}")
    return base, weights


def patch_winner_first(undo: bool = False) -> None:
    """Make "Next unrated" show the winner's runs first, then by stage and score, and "Next pair"
    the human judge's closest-score pair (the app before ``bracket.judge.informative``), in this
    process; ``undo`` restores the app's own."""
    from bracket.app.manager import SessionManager
    from bracket.judge.human import next_pairs
    from bracket.standings import STAGES

    if undo:
        for name in ("next_unrated", "next_pairs", "rate_next"):
            patching.restore(SessionManager, name)
        return

    def winner_first(self: Any, k: int = 4) -> list[int]:
        session, table = self.require(), self.standings()
        rated = {r["run_id"] for r in session.store.ratings(session.name)}
        scorable = {r["id"] for r in self.scorable_runs()}
        winner = set(table.winner.run_ids) if table and table.winner else set()
        order = {stage: i for i, stage in enumerate(STAGES)}
        ranked = sorted((run for board in (table.boards.values() if table else ()) for row in board.rows
                         for run in row.runs if run.run_id in scorable),
                        key=lambda run: (run.run_id not in winner, order.get(run.stage, 9), run.score is None,
                                         run.score or 0.0, run.run_id))
        unrated = [run.run_id for run in ranked if run.run_id not in rated]
        return unrated[:k] if unrated else [run.run_id for run in ranked][:max(k, 0)]

    def closest_pairs(self: Any, k: int = 1) -> list[tuple[int, int]]:
        session, runs = self.require(), self.scorable_runs()
        return next_pairs([r["id"] for r in runs], {r["id"]: r["score"] for r in runs},
                          session.store.comparisons(session.name), k)

    def winner_first_why(self: Any, k: int = 4) -> tuple[list[int], str]:
        return winner_first(self, k), ""

    for name, value in (("next_unrated", winner_first), ("next_pairs", closest_pairs), ("rate_next", winner_first_why)):
        patching.replace(SessionManager, name, value)


def patch_rating_bracket(undo: bool = False, factor: float = 2.0) -> None:
    """An experiment (not in the app): once a person has rated, the best-scored rated search
    config is proposed again at its step knob ÷ and × ``factor`` (as the learning-rate bracket
    does for the warm start) before TPE proposes, once per side and favourite; ``undo``
    restores the controller's own ``next``."""
    from optuna.trial import TrialState

    from bracket.search import controller
    from bracket.search.lr_bracket import _same, step_knob

    original = patching.own(controller.SearchController, "next")
    if undo:
        patching.restore(controller.SearchController, "next")
        return

    def next_with_rating_bracket(self: Any) -> Any:
        if not self.waiting_count():
            history = list(self._history())
            rated = [h for h in history if h.rated and h.value is not None and h.state == TrialState.COMPLETE]
            best = min(rated, key=lambda h: h.value) if rated else None
            name = step_knob(best.params, self.space) if best else None
            if best is not None and name is not None and best.params.get(name, 0) > 0:
                knob = self.space[name]
                for candidate in (best.params[name] / factor, best.params[name] * factor):
                    params = dict(best.params, **{name: min(max(candidate, knob.low), knob.high)})
                    if not any(_same(params, h.params, name) for h in history):
                        self.study.enqueue_trial(params, user_attrs={"kind": "search"})
                        break
        return original(self)

    patching.replace(controller.SearchController, "next", next_with_rating_bracket)


def run_session(taste_name: str, mode: str, repetition: int, budget: int, steps: int, workdir: str
                ) -> dict[str, Any]:
    """One session, start to end, with or without the rater; what it tried and what it picked."""
    from bracket.session.config import SearchSettings
    from bracket.app.manager import SessionManager
    from bracket.session.scoring import config_values
    from bracket.session.session import Session

    from bench import rated_region

    skip_python_probe()
    label, (mode, weights) = mode, apply_variant(mode)
    rated_region.FIRED.clear()
    taste = TASTES[taste_name]
    os.environ[LANDSCAPE_ENV] = oracle.landscape_name(taste_name) if mode == "oracle" else taste.loss_landscape
    fields = bench_fields(Path(workdir))
    name = f"{taste_name}-{label.replace('@', '-').replace('=', '').replace(',', '-')}-{repetition}"
    started = time.time()
    settings = SearchSettings(budget=budget, steps=steps, seeds=1, sample_prompts="",
                              base_seed=1000 + 17 * repetition, algorithm="tpe", warm_start=True,
                              confirm=0,  # measured before the confirmation rung existed (bench/noise.py measures it)
                              **({"weights": weights} if weights else {}))
    runs_dir = Path(workdir) / "sessions"
    session = Session.create("demo-cpu", fields, settings, out_dir=runs_dir, name=name,
                             worker_id=f"bench-{repetition}")
    rated_region.SESSION[:] = [session]
    rater = None if mode in ("control", "oracle") else Rater(
        taste, seed=repetition, steps=steps, start_trial=1 if mode == "rated" else budget // 2 + 1)
    events: list[dict[str, Any]] = []
    # no snapshot cache: a person never rates within the app's 0.5 s of a run ending, and a
    # cached view made what the rater saw depend on the machine's load (runs K vs M, §4)
    manager = SessionManager(runs_dir, snapshot_ttl=0.0)
    if rater is not None:
        manager.open(session.folder)  # the app's holder, over the same store the search writes
        original = session._next_config

        def rate_then_propose() -> Any:
            trial = len(session.store.configs(name, stage="search")) + 1
            did = rater.act(manager, trial)
            if did:
                events.append({"trial": trial, "did": did})
            return original()

        session._next_config = rate_then_propose  # type: ignore[method-assign]
    status = session.run()
    configs = session.store.configs(name, stage="search")
    runs = [r for r in session.store.runs(name, with_series=False) if r["stage"] == "search"]
    scores = session.scores(runs)
    values = config_values(runs, scores)
    picked_id = min(values, key=values.get) if values else None
    best = rater.best if rater else TASTES[taste_name].optimum(steps)[0]
    taste_of = {c["id"]: taste.value(c["params"], steps) / best for c in configs}
    picks = {rule: taste_of.get(config_id) for rule, config_id in pick_rules(runs, scores, values).items()}
    config_of = {r["id"]: r.get("config_id") for r in runs}
    given: dict[int, list[float]] = {}
    for item in session.store.ratings(name):
        given.setdefault(config_of.get(item["run_id"]), []).append(item["value"])
    trials = [{"kind": c["kind"], "params": c["params"], "taste": taste_of[c["id"]],
               "picked": c["id"] == picked_id, "ratings": given.get(c["id"], [])} for c in configs]
    manager.close()
    session.close()
    shutil.rmtree(runs_dir / name, ignore_errors=True)
    return {"taste": taste_name, "mode": label, "repetition": repetition, "status": status, "budget": budget,
            "seconds": time.time() - started, "trials": trials, "events": events,
            "first_rating_trial": rater.first_rating_trial if rater else None,
            "ratings": rater.ratings if rater else 0, "ratings_again": rater.again if rater else 0,
            "pairs": rater.pairs if rater else 0, "picks": picks,
            "region_draws": [taste.value(p, steps) / best for p in rated_region.FIRED]}


def pick_rules(runs: list[dict[str, Any]], scores: dict[int, Any], values: dict[int, float]) -> dict[str, int]:
    """Config id each candidate pick rule names at the end of a session (measured side by side
    on the same sessions): ``mean`` (the standings' rule: lowest mean combined score),
    ``cautious1`` / ``cautious2`` (lowest mean + 1 / 2 x the uncertainty of its estimated
    parts: an unrated config's human part is a guess, a rated one's is known), ``rated`` (the
    best rated config, the mean's pick when nothing is rated)."""
    from bracket.session.scoring import rated_configs

    spread: dict[int, list[float]] = {}
    for run in runs:
        score = scores.get(run["id"])
        if run.get("config_id") in values and score is not None and score.value is not None:
            spread.setdefault(run["config_id"], []).append(score.uncertainty)
    unsure = {cid: sum(u) / len(u) / math.sqrt(len(u)) for cid, u in spread.items()}
    if not values:
        return {}
    rated = rated_configs(runs, scores) & set(values)
    out = {"mean": min(values, key=lambda c: (values[c], c))}
    for z in (1, 2):
        out[f"cautious{z}"] = min(values, key=lambda c: (values[c] + z * unsure.get(c, 0.0), c))
    out["rated"] = min(rated, key=lambda c: (values[c], c)) if rated else out["mean"]
    return out


def run(*, short: bool = True, plan: Plan | None = None, tastes: list[str] | None = None,
        modes: list[str] | None = None, results_dir: Path | None = None, log=print) -> dict[str, Any]:
    """Run the benchmark and write ``bench/results/steering.json``; returns the summary.

    ``modes`` defaults to :data:`MODES`; ``control`` always runs (the others are compared to it).
    """
    plan = plan or (SHORT if short else FULL)
    tastes = tastes or list(TASTES)
    modes = ["control"] + [m for m in (modes or MODES) if m != "control"]
    tasks = [(t, m, rep, plan.budget, plan.steps) for rep in range(plan.repetitions) for t in tastes for m in modes]
    started = time.time()
    records = run_sessions("steering", tasks, run_session, workers=plan.workers, results_dir=results_dir, log=log,
                           progress_every=6)
    summary = summarise(records)
    data = {"plan": plan.__dict__ | {"short": short}, "seconds": time.time() - started, "target": TARGET,
            "summary": summary, "records": records}
    path = write_result("steering", data, results_dir or RESULTS_DIR)
    log(f"  steering: wrote {path}")
    return data
