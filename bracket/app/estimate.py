"""The Setup form's wall-time estimate: from runs like the ones the form would start.

A run's time depends on the model, the steps, the resolution and the batch, so the estimate
takes only finished runs of the **same preset, steps and resolution field** (and, where the
form fixes the batch sizes, of those batches) — of the open session and of earlier sessions in
the runs folder — and is "unknown until the first run" otherwise. The demo's seconds never
stand in for an SDXL run.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from bracket.errors import BracketError
from bracket.session import Session
from bracket.session.create import SESSION_FILE, read_session_file

#: the preset field that sets the training resolution, where a preset has one
RESOLUTION_FIELD = "resolution"
#: the run parameters that are a batch size
BATCH_KNOBS = ("batch_size", "train_batch_size", "micro_batch_size")


class Estimate(NamedTuple):
    """Median seconds of the matching runs × the runs asked for, and what it is based on."""

    seconds: float
    runs: int
    sessions: int


def _batch(params: Mapping[str, Any]) -> Any:
    return next((params[k] for k in BATCH_KNOBS if k in params), None)


def matching_durations(session: Session, steps: int, resolution: str, batches: Collection[Any] | None) -> list[float]:
    """Durations of ``session``'s finished search runs of ``steps`` steps at ``resolution``
    (the preset field's value, "" when none) and a batch in ``batches`` (None: any)."""
    if str((session.parts.fields or {}).get(RESOLUTION_FIELD, "") or "") != resolution:
        return []
    found = []
    for run in session.store.runs(session.name, with_series=False, statuses=("done",)):
        if run.get("kind") == "setup" or run.get("stage") != "search" or not run.get("duration_s"):
            continue
        if int(run.get("max_steps") or 0) != int(steps):
            continue
        if batches is not None and _batch(dict(run.get("params") or {})) not in batches:
            continue
        found.append(float(run["duration_s"]))
    return found


def wall_time_estimate(runs_dir: Path, preset_id: str, steps: int, fields: Mapping[str, str] | None,
                       total_runs: int, *, current: Session | None = None, storage_url: str | None = None,
                       batches: Collection[Any] | None = None) -> Estimate | None:
    """The estimate for ``total_runs`` runs of ``preset_id`` at ``steps`` steps with ``fields``,
    from matching finished runs of ``current`` (the open session) and the sessions of
    ``runs_dir``; None when there is none."""
    from bracket.fields import merge_with_defaults
    from bracket.registry import get_preset

    try:  # the field's default when the form leaves it empty, as the session stores it
        merged = merge_with_defaults(get_preset(preset_id).fields, dict(fields or {}))
    except (BracketError, KeyError):
        return None
    resolution = str(merged.get(RESOLUTION_FIELD, "") or "")
    durations: list[float] = []
    sessions = 0
    seen: set[Path] = set()
    if current is not None and current.parts.preset.id == preset_id:
        found = matching_durations(current, steps, resolution, batches)
        durations += found
        sessions += bool(found)
        seen.add(current.folder.resolve())
    folders = sorted(Path(runs_dir).glob(f"*/{SESSION_FILE}")) if Path(runs_dir).is_dir() else []
    for path in folders:
        folder = path.parent
        if folder.resolve() in seen:
            continue
        try:
            if read_session_file(folder).get("preset_id") != preset_id:
                continue
            session = Session.open(folder, storage_url=storage_url, validate=False)
        except (BracketError, ValueError, TypeError, KeyError):
            continue  # a damaged folder adds nothing to the estimate
        try:
            found = matching_durations(session, steps, resolution, batches)
        finally:
            session.store.close()
        durations += found
        sessions += bool(found)
    if not durations:
        return None
    return Estimate(statistics.median(durations) * total_runs, len(durations), sessions)
