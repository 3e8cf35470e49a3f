"""The best step of each config: a score per saved/sampled step, and the step that wins.

A run's final step is not always its best: a rate right for 300 steps can over-fit by 600. So
every config gets a **score per step** from the evidence at that step: the held-out validation
loss (else the training loss averaged over :data:`TRAINING_WINDOW` around the step), ratings given
at that step, the VLM's score of that step's samples, and the image judges' figures
(``judges["image"]``, :mod:`bracket.session.scoring.image_judges`).

Each judge's values are the mean over the config's seeds; the loss is normalised across the
config's steps (differences under 1 % for validation, 5 % for training loss count as noise),
ratings score ``(10 - r) / 9``; the per-step score is the weighted mean of the judges with a
value there. When the runs render samples, only sampled steps are candidates, so the best step
always has samples to look at. The **best step** is the lowest score; a tie goes to the later
step; with no per-step evidence it is the final step (``basis`` says what the choice rests on).
Pure functions of run records, ratings and weights; the standings call them, and the report,
``export`` and the winner's training take the best step from there. docs/SCORING.md ("The best
step") says more.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bracket.judge.base import normalise_lower_better, relative_spread
from bracket.judge.combine import DEFAULT_WEIGHTS
from bracket.judge.image_judges import step_scores
from bracket.judge.preference import NAME as PREFERENCE
from bracket.session.scoring.image_judges import preference_steps, step_tables

#: half-width of the window of training loss around a step, as a share of the run
TRAINING_WINDOW = 0.05
VALIDATION_NOISE = 0.01
TRAINING_NOISE = 0.05


@dataclass
class StepCurve:
    """One config's score per step and its best step."""

    config_id: int
    steps: list[int]
    #: combined score per step (lower is better), aligned with ``steps``
    scores: list[float]
    best_step: int | None
    final_step: int | None
    #: what the best step rests on: "validation", "training", "human", "vlm" (joined with
    #: "+"), or "final step" when no evidence names another step
    basis: str
    #: judge -> step -> value (raw loss, mean rating, VLM score) for charts and details
    per_judge: dict[str, dict[int, float]] = field(default_factory=dict)


def _mean_by_step(per_run: Sequence[Mapping[int, float]]) -> dict[int, float]:
    values: dict[int, list[float]] = {}
    for table in per_run:
        for step, value in table.items():
            values.setdefault(int(step), []).append(float(value))
    return {step: statistics.fmean(v) for step, v in values.items()}


def training_loss_at(series: Sequence[Sequence[float]], step: int, window: int) -> float | None:
    """Mean training loss of the points within ``window`` steps of ``step`` (None if none)."""
    values = [float(v) for s, v in series if abs(int(s) - step) <= window]
    return statistics.fmean(values) if values else None


def sampled_steps(run: Mapping[str, Any]) -> list[int]:
    """Steps at which the run left samples (its step slider), the final one included."""
    steps = {int(s["step"]) for s in run.get("samples") or () if s.get("step")}
    if run.get("last_step"):
        steps.add(int(run["last_step"]))
    return sorted(steps)


def loss_by_step(run: Mapping[str, Any], steps: Sequence[int], *, validation: bool = True
                 ) -> tuple[dict[int, float], str]:
    """(loss per step, "validation" or "training") for one run; ``validation=False``: the training
    loss even when the run logged a validation loss. A run without its series may carry
    ``step_losses`` instead: these same tables, kept at (at least) ``steps`` by
    ``bracket.session.scoring.summaries``."""
    kept = run.get("step_losses") if "loss" not in run else None
    if kept is not None:
        if validation and kept["validation"]:
            return {int(s): float(v) for s, v in kept["validation"]}, "validation"
        training = {int(s): float(v) for s, v in kept["training"]}
        return {step: training[step] for step in steps if step in training}, "training"
    checked = {int(s): float(v) for s, v in run.get("eval_loss") or ()} if validation else {}
    if checked:
        return checked, "validation"
    series = run.get("loss") or []
    if not series:
        return {}, "training"
    last = max(int(s) for s, _ in series)
    window = max(1, round(TRAINING_WINDOW * last))
    table = {step: value for step in steps if (value := training_loss_at(series, step, window)) is not None}
    return table, "training"


def step_curve(config_id: int, runs: Sequence[Mapping[str, Any]], ratings: Sequence[Mapping[str, Any]] = (),
               weights: Mapping[str, float] | None = None) -> StepCurve:
    """The per-step scores of one config from its finished runs (with ``loss``/``eval_loss``
    series, ``samples``, ``last_step`` and ``judges``) and the session's ratings."""
    weights = {**DEFAULT_WEIGHTS, **(weights or {})}
    done = [r for r in runs if r.get("status") == "done"]
    finals = [int(r["last_step"]) for r in done if r.get("last_step")]
    final = max(finals) if finals else None
    steps = sorted({s for r in done for s in sampled_steps(r)})
    per_run, bases = [], []
    for run in done:
        table, basis = loss_by_step(run, steps)
        per_run.append(table)
        bases.append(basis)
    basis = "validation" if set(bases) == {"validation"} else "training"
    if basis == "training":  # a session mixes bases only if some run lacks validation: use training for all
        per_run = [loss_by_step(r, steps, validation=False)[0] if b == "validation" else table
                   for r, b, table in zip(done, bases, per_run)]  # a training table is that already
    per_judge: dict[str, dict[int, float]] = {}
    loss = _mean_by_step(per_run)
    if loss:
        per_judge["loss"] = loss
    ids = {r["id"] for r in done}
    rated: dict[int, list[float]] = {}
    for rating in ratings:
        if rating.get("run_id") in ids and rating.get("step") is not None:
            rated.setdefault(int(rating["step"]), []).append(float(rating["value"]))
    if rated:
        per_judge["human"] = {s: statistics.fmean(v) for s, v in rated.items()}
    vlm = _mean_by_step([{int(k): float(v) for k, v in ((r.get("judges") or {}).get("vlm_steps") or {}).items()
                          if v is not None} for r in done])
    if vlm:
        per_judge["vlm"] = vlm
    for name, tables in step_tables(done).items():
        per_judge[name] = _mean_by_step(tables)
    noise = VALIDATION_NOISE if basis == "validation" else TRAINING_NOISE
    scored: dict[str, dict[int, float]] = {}
    if loss:
        scored["loss"] = normalise_lower_better(loss, min_spread=relative_spread(loss.values(), noise))
    if rated:
        scored["human"] = {s: (10.0 - v) / 9.0 for s, v in per_judge["human"].items()}
    if vlm:
        scored["vlm"] = dict(vlm)
    for name in step_tables(done):
        scored[name] = step_scores(name, per_judge[name])
    all_steps = sorted({s for table in scored.values() for s in table})
    combined: dict[int, float] = {}
    for step in all_steps:
        parts = {name: table[step] for name, table in scored.items() if step in table and weights.get(name, 0) > 0}
        if not parts:
            continue
        total = sum(weights[name] for name in parts)
        combined[step] = sum(weights[name] * value for name, value in parts.items()) / total
    if any(r.get("samples") for r in done):  # a best step a person can look at: one with samples
        # (validation runs at its own steps; a step it names without samples has nothing to rate)
        combined = {step: value for step, value in combined.items() if step in set(steps)}
    if not combined:
        return StepCurve(config_id, [], [], final, final, "final step", per_judge)
    best = min(combined, key=lambda s: (combined[s], -s))
    # the evidence behind the choice: which judges had a value at the best step
    used = {name for name, table in scored.items() if best in table and weights.get(name, 0) > 0}
    label = "+".join(sorted(basis if name == "loss" else name for name in used)) or "final step"
    ordered = sorted(combined)
    return StepCurve(config_id, ordered, [combined[s] for s in ordered], best, final, label, per_judge)


def step_curves(runs: Sequence[Mapping[str, Any]], ratings: Sequence[Mapping[str, Any]] = (),
                weights: Mapping[str, float] | None = None) -> dict[int, StepCurve]:
    """:func:`step_curve` for every config among ``runs`` (keyed by config id). Each curve's
    ``per_judge`` also shows the preference judge's share of same-prompt wins per step — against the
    other configs' samples of that step among ``runs`` (one stage's), the mean over its seeds — which
    takes no part in its best step."""
    grouped: dict[int, list[Mapping[str, Any]]] = {}
    for run in runs:
        if run.get("config_id") is not None and run.get("kind") != "setup":
            grouped.setdefault(int(run["config_id"]), []).append(run)
    by_run: dict[Any, list[int]] = {}
    for index, rating in enumerate(ratings):  # each config gets its own runs' ratings (in their order), not all
        by_run.setdefault(rating.get("run_id"), []).append(index)
    curves = {config_id: step_curve(config_id, group, [ratings[i] for i in sorted(
                  i for run in group for i in by_run.get(run.get("id"), ()))], weights)
              for config_id, group in grouped.items()}
    shares = preference_steps([run for group in grouped.values() for run in group if run.get("status") == "done"])
    for config_id, group in grouped.items():
        table = _mean_by_step([shares[run["id"]] for run in group if run.get("id") in shares])
        if table:
            curves[config_id].per_judge[PREFERENCE] = table
    return curves


def checkpoint_at(output_dir: str | Path | None, step: int) -> Path | None:
    """The weights a run saved at ``step`` (sd-scripts/musubi/demo ``<name>-step<8 digits>``), or None."""
    folder = Path(output_dir) if output_dir else None
    if folder is None or not folder.is_dir():
        return None
    found = sorted(p for p in folder.glob(f"*-step{int(step):08d}.*") if p.is_file())
    return found[0] if found else None
