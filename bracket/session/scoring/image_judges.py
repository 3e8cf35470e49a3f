"""The image judges' figures as a run keeps them, and what the scores read from them.

The image scorer (``bracket.session.scoring.image_scorer``) stores, per run::

    judges["image"] = {
        "steps":  {"<step>": {"likeness": float|None, "prompt_following": float|None,
                              "image_quality": float|None, "n_images": int}},
        "images": {"<sample path relative to the run folder>": {"likeness": ..., "prompt_following": ...,
                   "image_quality": ..., "step": int, "prompt_kind": "in" | "held_out"}},
        "scales": {judge: "what the raw figure is"},
        "base":   {"step": 0, "prompt_following": float|None, ...} | None,   # the step-0 samples, if any
        "references": {"count": int, "source": "held-out images" | "training images", ...},
        "error":  "why no figures" (only when the worker failed),
    }

Raw figures are higher = better (``bracket.judge.image_judges.SCALES``); a step's
``prompt_following`` is already corrected by the base model's (``base``) where the trainer
rendered step-0 samples. A run paused at a rung keeps the record of its pause step as
``judges["at_step"]["<step>"]["image"]``. :func:`image_parts` is the one read of a run's
per-step figures (the app, ``status --json``, the report and the export call it);
:func:`image_results` turns the runs' figures at their last step into judge results, for
``bracket.session.scoring.run_scores``; :func:`step_tables` gives ``best_step`` the per-step figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bracket.judge.base import JudgeResult
from bracket.judge.image_judges import IMAGE_JUDGES, score_figures

#: the key of a run's ``judges`` that holds the image judges' record
RECORD = "image"


def image_parts(run: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    """``{step: {"likeness", "prompt_following", "image_quality", "n_images"}}`` of ``run`` (raw
    figures, higher better, None where no sample of that kind was judged), sampled steps only
    (the base model's step 0 is ``judges["image"]["base"]``); {} when it has not been judged."""
    record = (run.get("judges") or {}).get(RECORD) or {}
    out: dict[int, dict[str, Any]] = {}
    for step, figures in (record.get("steps") or {}).items():
        if isinstance(figures, Mapping):
            out[int(step)] = {**{name: figures.get(name) for name in IMAGE_JUDGES},
                              "n_images": int(figures.get("n_images") or 0)}
    return dict(sorted(out.items()))


def figures_at(run: Mapping[str, Any], step: int | None = None) -> dict[str, Any] | None:
    """``run``'s figures at ``step`` (default: its last step), else at its latest judged step before
    it; None when no step up to there was judged."""
    parts = image_parts(run)
    last = int(step if step is not None else run.get("last_step") or max(parts, default=0))
    if last in parts:
        return parts[last]
    earlier = [s for s in parts if s <= last]
    return parts[max(earlier)] if earlier else None


def image_results(runs: Sequence[Mapping[str, Any]]) -> dict[str, dict[int, JudgeResult]]:
    """Per image judge, each judged run's result at its last step, the relative judges ranked among
    these runs (``bracket.judge.image_judges.score_figures``); runs never judged are left out."""
    figures = {int(run["id"]): found for run in runs if (found := figures_at(run)) is not None}
    return {name: score_figures(name, {run_id: f.get(name) for run_id, f in figures.items()})
            for name in IMAGE_JUDGES} if figures else {name: {} for name in IMAGE_JUDGES}


def step_tables(runs: Sequence[Mapping[str, Any]]) -> dict[str, list[dict[int, float]]]:
    """Per image judge, one ``{step: figure}`` table per run that has figures of it (for the
    per-step score of a config, ``bracket.session.scoring.best_step``)."""
    tables: dict[str, list[dict[int, float]]] = {}
    for run in runs:
        parts = image_parts(run)
        for name in IMAGE_JUDGES:
            table = {step: float(f[name]) for step, f in parts.items() if f.get(name) is not None}
            if table:
                tables.setdefault(name, []).append(table)
    return tables
