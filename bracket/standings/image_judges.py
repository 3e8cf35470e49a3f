"""The image judges' raw scores as a run's judge record keeps them — the one reader of them.

The image judges (likeness, prompt-following, image quality; docs/SCORING.md) write, per run,
``judges["image"]``::

    {"steps":  {"<step>": {"likeness": float|null, "prompt_following": float|null,
                           "image_quality": float|null, "n_images": int}},
     "images": {"<sample path relative to the run folder>": {"likeness": ..., "prompt_following": ...,
                "image_quality": ..., "step": int, "prompt_kind": "in" | "held_out"}},
     "scales": {...}}

Raw values, higher is better. Everything that shows them — the fidelity-against-flexibility
front (:mod:`bracket.standings.front`), how far each judge agrees with the person
(:mod:`bracket.standings.trust`), Compare's scores per image and its order by a judge —
reads them here, so a change of that record's shape is a change of this module only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bracket.judge.image_judges import IMAGE_JUDGES

#: the key of the image judges' record in a run's judges
IMAGE_KEY = "image"
#: what each of the front's axes measures
FIDELITY, FLEXIBILITY = "likeness", "prompt_following"
#: short names for a cell or an axis
SHORT = {"likeness": "likeness", "prompt_following": "prompt", "image_quality": "quality"}


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _record(run: Mapping[str, Any]) -> Mapping[str, Any]:
    record = (run.get("judges") or {}).get(IMAGE_KEY)
    return record if isinstance(record, Mapping) else {}


def _scores(item: Any) -> dict[str, float]:
    if not isinstance(item, Mapping):
        return {}
    return {judge: value for judge in IMAGE_JUDGES if (value := _finite(item.get(judge))) is not None}


def step_scores(run: Mapping[str, Any]) -> dict[int, dict[str, float]]:
    """Step -> judge -> raw score (higher is better) of one run; steps without a score left out."""
    found: dict[int, dict[str, float]] = {}
    steps = _record(run).get("steps")
    for key, item in (steps.items() if isinstance(steps, Mapping) else ()):
        try:
            step = int(key)
        except (TypeError, ValueError):
            continue
        if scores := _scores(item):
            found[step] = scores
    return dict(sorted(found.items()))


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


def image_scores(run: Mapping[str, Any], path: str | Path) -> dict[str, float]:
    """Judge -> raw score of the sample file ``path`` of ``run`` (empty when it was not judged).

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
            return _scores(images[key])
    parts = path.parts
    for key, item in images.items():  # the longest trailing match, never the file name alone when a folder is named
        tail = Path(str(key)).parts
        if tail and len(tail) <= len(parts) and tuple(parts[-len(tail):]) == tuple(tail):
            return _scores(item)
    return {}


def has_image_scores(runs: Any) -> bool:
    """Whether any of ``runs`` carries an image judge's score."""
    return any(step_scores(run) for run in runs)


def image_steps(curve: Any) -> dict[int, dict[str, float]]:
    """The image judges' per-step figures of a config's ``StepCurve`` (step -> judge -> figure)."""
    out: dict[int, dict[str, float]] = {}
    for judge in IMAGE_JUDGES:
        for step, value in ((curve.per_judge.get(judge) or {}) if curve else {}).items():
            out.setdefault(int(step), {})[judge] = round(float(value), 5)
    return dict(sorted(out.items()))
