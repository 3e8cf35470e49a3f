"""Scores of a session's runs, computed from the store's current contents.

Scores are derived, never frozen: the loss judge normalises across every run of the
session and human ratings arrive at any time, so each read (the UI's snapshot, the
controller's next suggestion, the report) recomputes them from the runs, ratings and
comparisons as they are now. The judges are pure functions in ``bracket.judge``; this
module gathers their inputs from store records and combines their outputs with the
session's weights. A run a judge disqualifies gets the worst combined score, 1.0, so the
sampler learns to stay away from what broke it.

A judge that has scored some of the qualified runs but not others (nobody rated them yet,
the VLM failed on a few) gets an *estimate* for the others: the shared estimate
(:func:`bracket.judge.combine.estimate_missing`) moved toward the scores of runs with similar
params (:func:`bracket.judge.neighbours.neighbour_estimates`), so every run is scored on the
same judges and weights, and a rating moves its config's neighbourhood too. The standings
(the displayed answer) and the sampler's history both come from :func:`score_runs`, so they
agree on every estimate; each :class:`RunScore` lists its :class:`~bracket.judge.combine.JudgePart` s,
which say what was measured (with its raw figure) and what was estimated (with an uncertainty).
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bracket.judge.base import JudgeResult
from bracket.judge.combine import DEFAULT_WEIGHTS, Estimate, JudgePart, combine_scores, estimate_missing
from bracket.judge.eval_loss import score_eval_loss_runs
from bracket.judge.human import anchor_pairwise, rating_part, score_human
from bracket.judge.llm_judge import score_llm_judge
from bracket.judge.loss import loss_summary, score_loss_summaries
from bracket.judge.neighbours import neighbour_estimates
from bracket.session.scoring.image_judges import image_results

if TYPE_CHECKING:  # pragma: no cover
    from bracket.search.types import ScoredConfig

SCORED_STATUSES = ("done", "disqualified", "pruned")
WORST = 1.0


@dataclass
class RunScore:
    """The combined score of one run and what it is made of."""

    value: float | None
    judges: dict[str, float | None] = field(default_factory=dict)
    used: list[str] = field(default_factory=list)
    weights_used: dict[str, float] = field(default_factory=dict)
    disqualified: bool = False
    reason: str = ""
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: each contributing judge's part: value, raw figure, estimated or not, uncertainty, weight
    parts: dict[str, JudgePart] = field(default_factory=dict)
    #: judges whose part is an estimate (the run has no score of theirs yet)
    estimated: list[str] = field(default_factory=list)
    #: standard deviation of ``value`` that comes from the estimated parts
    uncertainty: float = 0.0


#: the detail of each judge's result that a person reads beside the normalised score
RAW_FIGURES = {"loss": "final_ema", "eval_loss": "loss", "human": "mean_rating", "task": "quality",
               "likeness": "raw", "prompt_following": "raw", "image_quality": "raw", "preference": "raw",
               "face_identity": "raw"}


def raw_figure(judge: str, result: JudgeResult | None) -> float | None:
    """The raw number behind a judge's score: final validation or smoothed loss, eval loss, mean rating
    (or Bradley-Terry strength when a run was only compared), VLM goodness out of 10."""
    if result is None or result.score is None:
        return None
    if judge == "vlm":
        return round(10.0 * (1.0 - result.score), 3)
    if judge == "llm_judge":
        rubric = result.details.get("rubric_score")
        return round(10.0 * (1.0 - rubric), 3) if rubric is not None else result.details.get("bt_strength")
    if judge == "human" and "mean_rating" not in result.details:
        return result.details.get("bt_strength")
    if judge == "loss" and result.details.get("basis") == "validation":
        return result.details.get("final_validation")  # the loss the score rests on
    value = result.details.get(RAW_FIGURES.get(judge, ""))
    return float(value) if isinstance(value, (int, float)) else None


def judge_estimates(per_judge: Mapping[str, Mapping[int, JudgeResult]], qualified: Sequence[int]
                    ) -> dict[str, Estimate]:
    """Per judge that scored some but not all ``qualified`` runs: its estimate for the others."""
    estimates: dict[str, Estimate] = {}
    for name, table in per_judge.items():
        scored = [s for i in qualified if i in table and table[i].has_score and (s := table[i].score) is not None]
        if scored and len(scored) < len(qualified):
            estimate = estimate_missing(scored)
            if estimate is not None:
                estimates[name] = estimate
    return estimates


def run_estimates(per_judge: Mapping[str, Mapping[int, JudgeResult]], shared: Mapping[str, Estimate],
                  qualified: Sequence[int], params: Mapping[int, Mapping[str, Any]]) -> dict[int, dict[str, Estimate]]:
    """Per qualified run a judge has not scored: that judge's estimate learned from the scored
    runs with similar ``params`` (run id -> params), shrunk toward its ``shared`` estimate."""
    per_run: dict[int, dict[str, Estimate]] = {}
    for name, estimate in shared.items():
        table = per_judge.get(name, {})
        scored = {i: float(s) for i in qualified
                  if i in table and table[i].has_score and (s := table[i].score) is not None}
        targets = [i for i in qualified if i not in scored]
        for run_id, guess in neighbour_estimates(estimate, scored, params, targets).items():
            per_run.setdefault(run_id, {})[name] = guess
    return per_run


def effective_weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    """The session's weights laid over the defaults (the same in the UI and the CLI)."""
    return {**DEFAULT_WEIGHTS, **(weights or {})}


def stored_judge(record: Mapping[str, Any] | None) -> JudgeResult | None:
    """A judge result that was stored as a dict (e.g. the VLM judge's) back as a result."""
    if not record:
        return None
    return JudgeResult(score=record.get("score"), disqualified=bool(record.get("disqualified")),
                       reason=str(record.get("reason", "")), details=dict(record.get("details") or {}))


def judge_record(result: JudgeResult) -> dict[str, Any]:
    return {"score": result.score, "disqualified": result.disqualified, "reason": result.reason,
            "details": result.details}


#: where a run's ``judges`` keep the judges' records of one step (``{str(step): {judge: record}}``):
#: a run paused at a rung is judged there (``bracket.session.scoring.rung_verdicts``)
AT_STEP = "at_step"


def verdicts_at(run: Mapping[str, Any], step: int) -> dict[str, Any]:
    """The judges' records of ``run`` stored for ``step`` (``judges["at_step"]``), or {}."""
    return dict(((run.get("judges") or {}).get(AT_STEP) or {}).get(str(step)) or {})


class SummaryCache:
    """Per-run loss summaries of finished runs, which never change once a run has ended.

    With it, re-scoring a session of hundreds of runs (every snapshot, every suggestion)
    reads no loss series of a finished run twice.
    """

    def __init__(self) -> None:
        self._summaries: dict[int, tuple[Any, JudgeResult]] = {}
        #: whether the ``eval_loss`` series is a held-out validation loss the loss judge
        #: prefers (diffusion trainers); LLM sessions score it with their own judge
        self.use_validation = True

    def has(self, run: Mapping[str, Any]) -> bool:
        cached = self._summaries.get(run["id"])
        return cached is not None and run.get("finished_at") is not None and cached[0] == run["finished_at"]

    def loss_summary(self, run: Mapping[str, Any]) -> JudgeResult:
        if self.has(run):
            return self._summaries[run["id"]][1]
        summary = loss_summary(run.get("loss"), validation=run.get("eval_loss") if self.use_validation else None)
        if run.get("finished_at") is not None:
            self._summaries[run["id"]] = (run["finished_at"], summary)
        return summary


def needs_series(run: Mapping[str, Any], cache: SummaryCache | None) -> bool:
    """Whether scoring ``run`` needs its loss series (it is scored and not cached)."""
    return (run.get("status") in SCORED_STATUSES and run.get("kind") != "setup"
            and (cache is None or not cache.has(run)))


def score_runs(runs: Sequence[Mapping[str, Any]], ratings: Sequence[Mapping[str, Any]] = (),
               comparisons: Sequence[Mapping[str, Any]] = (), weights: Mapping[str, float] | None = None,
               *, eval_loss: bool = False, cache: SummaryCache | None = None) -> dict[int, RunScore]:
    """Combined scores (lower is better, in [0, 1]) of every finished run, keyed by run id.

    A run's ``loss`` series is read unless ``cache`` already holds its summary.
    """
    scored = [r for r in runs if r.get("status") in SCORED_STATUSES and r.get("kind") != "setup"]
    if not scored:
        return {}
    cache = cache or SummaryCache()
    cache.use_validation = not eval_loss
    stopped = {r["id"]: r.get("failure_reason") or r["status"] for r in scored if r["status"] != "done"}
    loss = score_loss_summaries({r["id"]: cache.loss_summary(r) for r in scored if r["id"] not in stopped})
    per_judge: dict[str, dict[int, JudgeResult]] = {"loss": loss}
    if eval_loss:
        per_judge["eval_loss"] = score_eval_loss_runs(
            {r["id"]: r.get("eval_loss") or None for r in scored if r["id"] not in stopped},
            {r["id"]: r.get("loss") for r in scored})
    ids = [r["id"] for r in scored]
    human = score_human(ids, ratings, comparisons)
    # estimates learn from ratings (absolute); choices only move a run from where it stands,
    # unless nobody rated anything (then the plain pairwise scores, as before)
    by_rating = rating_part(human)
    per_judge["human"] = by_rating if any(r.has_score for r in by_rating.values()) else human
    per_judge["vlm"] = {r["id"]: result for r in scored
                        if (result := stored_judge((r.get("judges") or {}).get("vlm"))) is not None}
    per_judge.update(text_judges(scored))
    per_judge.update(image_results([r for r in scored if r["id"] not in stopped]))
    combined_weights = effective_weights(weights)
    qualified = [i for i in ids if i not in stopped
                 and not any((t.get(i) is not None and t[i].disqualified) for t in per_judge.values())]
    estimates = judge_estimates(per_judge, qualified)
    nearby = run_estimates(per_judge, estimates, qualified, {r["id"]: r.get("params") or {} for r in scored})
    if per_judge["human"] is by_rating:
        # a compared run's estimate is its anchor; from here on its human part is measured
        per_judge["human"] = anchor_pairwise(human, {i: guess["human"].value for i, guess in nearby.items()
                                                     if "human" in guess})
    scores: dict[int, RunScore] = {}
    for run_id in ids:
        results: dict[str, JudgeResult | None] = {name: table.get(run_id) for name, table in per_judge.items()}
        if run_id in stopped:
            results["loss"] = JudgeResult.disqualify(stopped[run_id])
        combined = combine_scores(results, combined_weights, estimates={**estimates, **nearby.get(run_id, {})},
                                  raws={name: raw_figure(name, r) for name, r in results.items()})
        scores[run_id] = RunScore(
            value=WORST if combined.disqualified else combined.value,
            judges={name: (r.score if r is not None else None) for name, r in results.items()},
            used=list(combined.used), weights_used=dict(combined.weights_used),
            disqualified=combined.disqualified, reason=combined.reason,
            details={name: dict(r.details, reason=r.reason) for name, r in results.items() if r is not None},
            parts=dict(combined.parts), estimated=list(combined.estimated), uncertainty=combined.uncertainty)
    return scores


def text_judges(runs: Sequence[Mapping[str, Any]]) -> dict[str, dict[int, JudgeResult]]:
    """The task judge and the LLM-as-judge of LLM runs, from what their scorers stored
    (``judges["task"]``, ``judges["llm_judge"]`` and the pairwise ``judges["llm_pairs"]``,
    see ``bracket.session.scoring.text_judges``); empty tables for runs without held-out answers."""
    task = {r["id"]: result for r in runs
            if (result := stored_judge((r.get("judges") or {}).get("task"))) is not None}
    rubric = {r["id"]: stored_judge((r.get("judges") or {}).get("llm_judge")) for r in runs}
    pairs = [pair for r in runs for pair in (r.get("judges") or {}).get("llm_pairs") or []]
    judged = [r["id"] for r in runs if rubric[r["id"]] is not None or (r.get("judges") or {}).get("llm_pairs")]
    ids = {run_id for pair in pairs for run_id in (pair["left_run_id"], pair["right_run_id"])} | set(judged)
    llm = score_llm_judge([r["id"] for r in runs if r["id"] in ids], rubric, pairs)
    return {"task": task, "llm_judge": llm}


def config_values(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, RunScore]) -> dict[int, float]:
    """Mean combined score per config id over its scored runs."""
    per_config: dict[int, list[float]] = {}
    for run in runs:
        score = scores.get(run["id"])
        if run.get("config_id") is None or score is None or score.value is None:
            continue
        per_config.setdefault(run["config_id"], []).append(score.value)
    return {config_id: statistics.fmean(values) for config_id, values in per_config.items()}


def config_losses(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, RunScore]) -> dict[int, float]:
    """Mean held-out validation loss per config id over its runs whose loss judge measured one
    (its ``raw`` on the ``validation`` basis); what the sampler's rules read when they need how
    far apart two configs are, which the normalised scores do not keep. The training loss of a
    diffusion run is too noisy for that (it jumps by tens of percent from step to step), so a
    config scored on it has none."""
    per_config: dict[int, list[float]] = {}
    for run in runs:
        score = scores.get(run["id"])
        part = score.parts.get("loss") if score is not None else None
        if score is None or run.get("config_id") is None or part is None or part.estimated or part.raw is None:
            continue
        if (score.details.get("loss") or {}).get("basis") != "validation":
            continue
        per_config.setdefault(run["config_id"], []).append(float(part.raw))
    return {config_id: statistics.fmean(values) for config_id, values in per_config.items()}


def rated_configs(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, RunScore]) -> set[int]:
    """Ids of the configs with a run whose score has a human part that is not an estimate."""
    return {run["config_id"] for run in runs if run.get("config_id") is not None and run["id"] in scores
            and "human" in scores[run["id"]].used and "human" not in scores[run["id"]].estimated}


#: why a run's loss diverged or became NaN/inf, as its combined score says it: the loss
#: judge's words (``bracket.judge.divergence.find_divergence``) or the run pipeline's
#: (``bracket.session.process.execute``: a NaN caught at the end of a run)
DIVERGED_REASONS = ("loss: loss diverged", "loss: loss is ", "loss: loss became ")


def diverged_configs(runs: Sequence[Mapping[str, Any]], scores: Mapping[int, RunScore]) -> set[int]:
    """Ids of the configs whose every scored run diverged: stopped by the divergence stop
    (status ``pruned``), or disqualified for a diverging or NaN loss. The learning-rate
    bracket reads that as "the rate is too high" (``bracket.search.lr_bracket``)."""
    verdicts: dict[int, bool] = {}
    for run in runs:
        score = scores.get(run["id"])
        if run.get("config_id") is None or run.get("status") not in SCORED_STATUSES:
            continue
        diverged = run["status"] == "pruned" or (score is not None and score.disqualified
                                                 and score.reason.startswith(DIVERGED_REASONS))
        verdicts[run["config_id"]] = verdicts.get(run["config_id"], True) and diverged
    return {config_id for config_id, diverged in verdicts.items() if diverged}


def sampler_history(configs: Sequence[Mapping[str, Any]], values: Mapping[int, float], space: Any,
                    rated: Collection[int] = (), diverged: Collection[int] = (),
                    losses: Mapping[int, float] | None = None,
                    measured: Mapping[int, float] | None = None) -> list["ScoredConfig"]:
    """The search configs as the sampler should see them: scored ones with their current
    mean score, running ones as RUNNING (TPE's constant liar keeps away from them), failed
    ones as FAIL (ignored by TPE; the learning-rate bracket does not propose them again).
    ``rated``: ids of the configs whose score carries a person's rating or choice;
    ``diverged``: ids of the configs whose runs all diverged (:func:`diverged_configs`);
    ``losses``: each config's raw loss (:func:`config_losses`); ``measured``: each config's score
    from its measured parts other than a person's verdict (``sampler_values.config_measured``);
    a rated config's ``verdict`` is its value (``values`` are the person's verdicts once one is given)."""
    from optuna.trial import TrialState

    from bracket.search.types import ScoredConfig

    history: list[ScoredConfig] = []
    for config in configs:
        params = space.searched_params(config["params"])
        if config["id"] in values:
            history.append(ScoredConfig(params, values[config["id"]], TrialState.COMPLETE, config["kind"],
                                        rated=config["id"] in rated, diverged=config["id"] in diverged,
                                        name=str(config.get("name") or ""),
                                        loss=(losses or {}).get(config["id"]),
                                        measured=(measured or {}).get(config["id"]),
                                        verdict=values[config["id"]] if config["id"] in rated else None))
        elif config["status"] == "running":
            history.append(ScoredConfig(params, None, TrialState.RUNNING, config["kind"]))
        elif config["status"] == "failed":
            history.append(ScoredConfig(params, None, TrialState.FAIL, config["kind"]))
    return history
