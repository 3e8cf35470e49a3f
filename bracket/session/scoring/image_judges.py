"""The image judges' figures as a run keeps them — the one reader of them.

The image scorer (``bracket.session.scoring.image_scorer``) stores, per run::

    judges["image"] = {
        "steps":  {"<step>": {"likeness": float|None, "prompt_following": float|None,
                              "image_quality": float|None, "face_identity": float|None, "n_images": int,
                              "faces": "k of n"}},   # faces: only with the face-identity judge on
        "images": {"<sample path relative to the run folder>": {"likeness": ..., "prompt_following": ...,
                   "image_quality": ..., "step": int, "prompt_kind": "in" | "held_out"}},
        "scales": {judge: "what the raw figure is"},
        "base":   {"step": 0, "prompt_following": float|None, ...} | None,   # the step-0 samples, if any
        "references": {"count": int, "source": "held-out images" | "training images", "note": str},
        "preference": {"<step>": {"<prompt>": float}}   # only with a preference model (optional judge)
        "error":  "why no figures" (only when the worker failed),
    }

Raw figures are higher = better (``bracket.judge.image_judges.SCALES``); a step's
``prompt_following`` is already less the base model's (``base``) where step-0 samples exist. A
run paused at a rung keeps the record of its pause step as ``judges["at_step"]["<step>"]["image"]``.

Everything that reads the figures reads them here (a new record shape changes this module only):
the export (:func:`image_parts`), the front, trust and Compare (:func:`scores_at`,
:func:`image_scores`), the run scores (:func:`image_results`, the preference judge's from
:func:`preference_at`), ``best_step`` (:func:`step_tables`), ``status --json`` and the report
(:func:`image_steps`, :func:`references_text`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bracket.judge.base import JudgeResult, finite_number
from bracket.judge.image_judges import IMAGE_JUDGES, score_figures
from bracket.judge.preference import NAME as PREFERENCE
from bracket.judge.preference import score_preference, win_shares

__all__ = ["FIDELITY", "FLEXIBILITY", "IMAGE_JUDGES", "RECORD", "SHORT", "has_image_scores", "image_parts",
           "image_results", "image_scores", "image_steps", "preference_at", "preference_steps", "references_text",
           "scores_at", "step_scores", "step_tables"]

#: the key of a run's ``judges`` that holds the image judges' record
RECORD = "image"
#: what each of the front's axes measures
FIDELITY, FLEXIBILITY = "likeness", "prompt_following"
#: short names for a cell or an axis
SHORT = {"likeness": "likeness", "prompt_following": "prompt", "image_quality": "quality", "face_identity": "face",
         PREFERENCE: "preference"}


def _record(run: Mapping[str, Any]) -> Mapping[str, Any]:
    record = (run.get("judges") or {}).get(RECORD)
    return record if isinstance(record, Mapping) else {}


def _scores(item: Any) -> dict[str, float]:
    if not isinstance(item, Mapping):
        return {}
    return {judge: value for judge in IMAGE_JUDGES if (value := finite_number(item.get(judge))) is not None}


def image_parts(run: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    """``{step: {"likeness", "prompt_following", "image_quality", "n_images"}}`` of ``run`` (raw
    figures, higher better, None where no sample of that kind was judged or the figure is not a
    number), sampled steps only (the base model's step 0 is ``judges["image"]["base"]``); {} when
    it has not been judged."""
    steps = _record(run).get("steps")
    out: dict[int, dict[str, Any]] = {}
    for key, figures in (steps.items() if isinstance(steps, Mapping) else ()):
        try:
            step = int(key)
        except (TypeError, ValueError):
            continue
        if isinstance(figures, Mapping):
            scores = _scores(figures)
            count = figures.get("n_images")
            out[step] = {**{name: scores.get(name) for name in IMAGE_JUDGES},
                         "n_images": int(count or 0) if finite_number(count) is not None else 0}
    return dict(sorted(out.items()))


def step_scores(run: Mapping[str, Any]) -> dict[int, dict[str, float]]:
    """Step -> judge -> raw score of one run, only the figures there are; steps without any left out."""
    return {step: scores for step, figures in image_parts(run).items()
            if (scores := {n: figures[n] for n in IMAGE_JUDGES if figures[n] is not None})}


def scores_at(run: Mapping[str, Any], step: int | None = None) -> tuple[int | None, dict[str, float]]:
    """(the step, its scores) of one run at ``step``: that step when it was scored, else the last
    scored step before it (else the first after it); ``step`` None: the last scored step."""
    table = step_scores(run)
    if not table:
        return None, {}
    if step is None or step not in table:
        before = [s for s in table if step is None or s <= step]
        chosen = max(before) if before else min(table)
    else:
        chosen = step
    return chosen, table[chosen]


def _image_scores(item: Any) -> dict[str, float]:
    """An image's raw scores: the image judges', and the preference model's figure where it gave one."""
    scores = _scores(item)
    preferred = finite_number(item.get(PREFERENCE)) if isinstance(item, Mapping) else None
    return {**scores, PREFERENCE: preferred} if preferred is not None else scores


def image_scores(run: Mapping[str, Any], path: str | Path) -> dict[str, float]:
    """Judge -> raw score of the sample file ``path`` of ``run`` (empty when it was not judged); the
    preference model's figure too where it gave one — comparable only with other samples of the same
    prompt (Compare's row), never across prompts.

    The record names a sample by its path relative to the run folder; a path given another way
    (absolute, or relative to another folder) is matched on its trailing parts."""
    images = _record(run).get("images")
    if not isinstance(images, Mapping) or not path:
        return {}
    path = Path(path)
    keys: list[str] = []
    run_dir = run.get("run_dir")
    if run_dir:
        try:
            keys.append(path.resolve().relative_to(Path(run_dir).resolve()).as_posix())
        except (OSError, ValueError):
            pass
    keys.append(path.as_posix())
    for key in keys:
        if key in images:
            return _image_scores(images[key])
    parts = path.parts
    for key, item in images.items():  # the longest trailing match, never the file name alone when a folder is named
        tail = Path(str(key)).parts
        if tail and len(tail) <= len(parts) and tuple(parts[-len(tail):]) == tuple(tail):
            return _image_scores(item)
    return {}


def references_text(runs: Any) -> str:
    """One sentence on what the runs' likeness was measured against (their records' ``references``:
    held-out or training images, and why), or "" when no record says."""
    for run in runs:
        found = _record(run).get("references")
        if not isinstance(found, Mapping) or not found.get("count"):
            continue
        count, source, note = int(found["count"]), str(found.get("source") or ""), str(found.get("note") or "")
        if source == "held-out images":
            return f"Likeness is measured against {count} held-out dataset images (never trained on)."
        return f"Likeness is measured against {count} training images ({note})." if note else \
            f"Likeness is measured against {count} training images."
    return ""


def has_image_scores(runs: Any) -> bool:
    """Whether any of ``runs`` carries an image judge's score."""
    return any(step_scores(run) for run in runs)


def _preference_table(run: Mapping[str, Any]) -> dict[int, dict[str, float]]:
    """Step -> prompt -> the preference model's figure of ``run``'s sample (the numbers there are)."""
    table = _record(run).get(PREFERENCE)
    steps: dict[int, dict[str, float]] = {}
    for key, prompts in (table.items() if isinstance(table, Mapping) else ()):
        try:
            found = {str(p): v for p, value in prompts.items() if (v := finite_number(value)) is not None}
            if found:
                steps[int(key)] = found
        except (AttributeError, TypeError, ValueError):
            continue
    return steps


def preference_steps(runs: Sequence[Mapping[str, Any]]) -> dict[int, dict[int, float]]:
    """Run id -> step -> its share of same-prompt wins (0..1, higher is better) against the other
    ``runs``' samples **of that step** (``bracket.judge.preference.win_shares``: never across
    prompts); a step where it met no other run is left out. For the per-step table only: the
    preference judge takes no part in the best step."""
    tables = {int(run["id"]): table for run in runs if run.get("id") is not None
              and (table := _preference_table(run))}
    out: dict[int, dict[int, float]] = {}
    for step in sorted({step for table in tables.values() for step in table}):
        shares = win_shares({run_id: table[step] for run_id, table in tables.items() if step in table})
        for run_id, (share, _prompts) in shares.items():
            out.setdefault(run_id, {})[step] = share
    return out


def preference_at(run: Mapping[str, Any], step: int | None = None) -> dict[str, float]:
    """Prompt -> the preference model's figure of ``run``'s sample of it, at ``step`` (default: its
    last step), else at its latest step before it; {} when no preference figure was kept there."""
    steps = _preference_table(run)
    last = step if step is not None else run.get("last_step")
    before = [s for s in steps if last is None or s <= int(last)]
    return steps[max(before)] if before else {}


def image_results(runs: Sequence[Mapping[str, Any]]) -> dict[str, dict[int, JudgeResult]]:
    """Per image judge, each judged run's result at its last step (else its latest judged step before
    it), the relative judges ranked among these runs (``bracket.judge.image_judges.score_figures``);
    runs never judged are left out."""
    figures = {}
    for run in runs:
        step, scores = scores_at(run, int(run["last_step"]) if run.get("last_step") else None)
        if step is not None:
            figures[int(run["id"])] = scores
    results = {name: score_figures(name, {run_id: f.get(name) for run_id, f in figures.items()})
               for name in IMAGE_JUDGES} if figures else {name: {} for name in IMAGE_JUDGES}
    preferred = {int(run["id"]): found for run in runs if (found := preference_at(run))}
    results[PREFERENCE] = score_preference(preferred) if preferred else {}
    return results


def step_tables(runs: Sequence[Mapping[str, Any]]) -> dict[str, list[dict[int, float]]]:
    """Per image judge, one ``{step: figure}`` table per run that has figures of it (for the
    per-step score of a config, ``bracket.session.scoring.best_step``)."""
    tables: dict[str, list[dict[int, float]]] = {}
    for run in runs:
        scored = step_scores(run)
        for name in IMAGE_JUDGES:
            table = {step: f[name] for step, f in scored.items() if name in f}
            if table:
                tables.setdefault(name, []).append(table)
    return tables


def image_steps(curve: Any) -> dict[int, dict[str, float]]:
    """The image judges' per-step figures of a config's ``StepCurve`` (step -> judge -> figure), the
    preference judge's share of same-prompt wins at each step among them where it has one."""
    out: dict[int, dict[str, float]] = {}
    for judge in (*IMAGE_JUDGES, PREFERENCE):
        for step, value in ((curve.per_judge.get(judge) or {}) if curve else {}).items():
            out.setdefault(int(step), {})[judge] = round(float(value), 5)
    return dict(sorted(out.items()))
