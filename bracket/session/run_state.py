"""Which saved trainer state a run may resume from: its own, complete, and before its end.

A resumed launch (a halving run promoted from its rung, an interrupted promotion going on) hands
a state folder to the trainer, which restores weights, optimizer and step from it. A state is
used only when

* it belongs to the run: the run folder holds :data:`RUN_FILE`, which Bracket writes before the
  run's first launch with the session's name and the run's id, and the state's real path (links
  followed) is inside that run folder — another session's state linked or copied in is refused;
* the trainer's own completeness rule accepts it (``Trainer.paused_state`` for its step: every
  file written, a later step logged where the trainer saves before logging);
* its step — the folder's name and its ``train_state.json`` where there is one — is a whole
  number after 0 and before the run's length (``current_step: 1e400`` or past the length made
  the trainer exit at once, "done" at step 4 of 16).

:func:`resumable_state` picks, of a run's states, the newest that passes (else the one before,
else none: the run starts at step 0); :func:`state_problem` says why a given one does not.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

#: written into a run folder before the run's first launch: whose run the folder is
RUN_FILE = "bracket-run.json"
#: a kohya-style step state folder (``<output_name>-step<8 digits>-state``) and its step
_STEP_STATE = re.compile(r".+-step(\d{1,12})-state")
_TRAIN_STATE = "train_state.json"


def mark_run_folder(run_dir: Path, session: str, run_id: int) -> None:
    """Record in ``run_dir`` that it is run ``run_id`` of ``session`` (once; kept across launches)."""
    marker = Path(run_dir) / RUN_FILE
    if not marker.is_file():
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps({"session": session, "run": int(run_id)}), encoding="utf-8")


def folder_problem(run_dir: Path, session: str, run_id: int) -> str | None:
    """Why ``run_dir`` is not run ``run_id`` of ``session`` (no or another :data:`RUN_FILE`), or None."""
    try:
        owner = json.loads((Path(run_dir) / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"its run folder {run_dir} has no {RUN_FILE} of Bracket's"
    if not isinstance(owner, dict) or owner.get("session") != session or owner.get("run") != int(run_id):
        return f"its run folder {run_dir} belongs to another run ({str(owner)[:80]})"
    return None


def recorded_step(state: Path) -> int | None:
    """``current_step`` of ``state``'s ``train_state.json`` as a whole number; None without the
    file; -1 when the file is there but holds no finite whole number (a damaged state)."""
    path = Path(state) / _TRAIN_STATE
    if not path.exists():
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))["current_step"]
    except (OSError, ValueError, KeyError, TypeError):
        return -1
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value != int(value):
        return -1
    return int(value)


def state_problem(state: Path, *, run_dir: Path, step: int, length: int, session: str, run_id: int) -> str | None:
    """Why ``state`` (saved at ``step``) is not one run ``run_id`` of ``session`` in ``run_dir``,
    ``length`` steps long, may resume from; None when it may (see the module docstring)."""
    problem = folder_problem(run_dir, session, run_id)
    if problem:
        return problem
    try:
        real, root = Path(state).resolve(strict=True), Path(run_dir).resolve(strict=True)
    except (OSError, RuntimeError) as error:
        return f"its state {state} cannot be read ({type(error).__name__})"
    if not real.is_relative_to(root):
        return f"its state {state} is a link to {real}, outside its run folder"
    if not 0 < int(step) < int(length):
        return f"its state of step {step} is not before the run's length {length}"
    recorded = recorded_step(state)
    if recorded is not None and recorded != int(step):
        said = recorded if recorded >= 0 else "that is not a whole number"
        return f"its state {state} records step {said}, not {step}"
    return None


def resumable_state(trainer: Any, output_dir: Path, *, run_dir: Path, length: int, session: str,
                    run_id: int, at_most: int | None = None) -> tuple[Path, int] | None:
    """The newest step state under ``output_dir`` that run ``run_id`` may resume from (its own, the
    trainer's completeness rule accepts it, before ``length``; ``at_most``: at or before that step),
    with its step; None: start at 0."""
    try:
        entries = list(Path(output_dir).iterdir())
    except OSError:
        return None
    found = sorted(((int(m.group(1)), p) for p in entries if (m := _STEP_STATE.fullmatch(p.name))), reverse=True)
    for step, state in found:
        if at_most is not None and step > at_most:
            continue
        accepted = trainer.paused_state(Path(output_dir), step)
        if accepted is None or Path(accepted) != state:
            continue
        if state_problem(state, run_dir=run_dir, step=step, length=length, session=session, run_id=run_id) is None:
            return state, step
    return None
