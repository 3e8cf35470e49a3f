"""Pausing a run at a rung and telling when its saved state is complete (issue 38).

A run paused at step ``r`` keeps the schedule of its full length and saves its state at
``r``; the session stops it once :meth:`Trainer.paused_state` finds that state complete.
Complete means more than "the folder exists": the trainer writes the folder file by file,
and it logs step ``r`` (and validates at ``r``) only *after* saving. What the kohya trainers
write, read at their pins:

* ``accelerator.save_state`` (accelerate 1.6.0, the pin of sd-scripts and musubi-tuner,
  ``Accelerator.save_state`` and ``checkpointing.save_accelerator_state``) runs the
  save hooks first (sd-scripts' ``train_network.py`` writes ``train_state.json`` there),
  then writes ``model.safetensors``, ``optimizer.bin``, ``scheduler.bin`` (``sampler.bin``
  only for a seedable sampler, ``scaler.pt`` only with fp16 scaling) and, last,
  ``random_states_0.pkl`` with ``torch.save`` — a zip archive whose end record is the last
  thing written, so a readable zip means the whole state is on disk. No custom objects are
  registered by either trainer, so nothing follows.
* ``train_network.py`` (sd-scripts 48d368fa, lines 1497-1532) saves the step's weights and
  state *before* it logs that step's loss and runs that step's validation; the state is
  therefore only safe to stop at once the trainer has logged a later step, which
  :func:`logged_past` reads from its event files — or once the training ended after it: both
  write the run's last weights ``<output_name>.safetensors`` after everything else
  (:func:`ended_after`), which is how a run whose own ``--max_train_steps`` is the rung step
  ends (``bracket.trainer.sd_scripts.resume``: the trainer stops itself at the rung).
"""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bracket.search.knobs import CategoricalKnob, FixedKnob

#: the files ``accelerator.save_state`` writes for one model, one optimizer and one scheduler
ACCELERATE_STATE_FILES = ("model.safetensors", "optimizer.bin", "scheduler.bin", "random_states_0.pkl")
#: written last by ``save_accelerator_state`` (``torch.save``: a zip archive)
ACCELERATE_LAST_FILE = "random_states_0.pkl"
#: sd-scripts' network trainers record ``{"current_epoch": E, "current_step": S}`` here
TRAIN_STATE_FILE = "train_state.json"
#: sd-scripts' and musubi-tuner's ``STEP_STATE_NAME`` (``library/train_util.py``, ``utils/train_utils.py``)
STEP_STATE_NAME = "{}-step{:08d}-state"
#: their ``get_step_ckpt_name``: the weights saved at a step
STEP_WEIGHTS_NAME = "{}-step{:08d}.{}"
#: their ``get_last_ckpt_name``: the weights saved when the training ends, the last file a run writes
LAST_WEIGHTS_NAME = "{}.safetensors"


#: learning-rate schedules (the kohya trainers' ``--lr_scheduler``) whose rate at a step does not depend on
#: the run's length (a warm-up of a number of steps, then flat): a run's first ``r`` steps are the same
#: whatever its ``--max_train_steps``
LENGTH_FREE_SCHEDULERS = ("constant", "constant_with_warmup")
#: the configs of a kohya trainer whose run asked to pause at a rung gets that rung as its own step limit
#: (:func:`own_step_limit`): knob -> the values it must have (the adapters' ``Trainer.stops_at_pause_when``)
KOHYA_SELF_STOP = (("lr_scheduler", LENGTH_FREE_SCHEDULERS),)


def stops_itself(knobs: Mapping[str, Any], when: Sequence[tuple[str, Sequence[str]]]) -> bool:
    """Whether a config ``knobs`` meets ``when`` (knob, values) pairs (none given: never): each knob has one
    of its values — a run of it asked to pause at a rung carries its own step limit there."""
    return bool(when) and all(str(knobs.get(name)) in values for name, values in when)


def space_stops_itself(space: Mapping[str, Any], when: Sequence[tuple[str, Sequence[str]]]) -> bool:
    """Whether every config of ``space`` (a ``SearchSpace``) meets ``when`` (:func:`stops_itself`): each knob
    named there is in the space for every config (not conditional) and can take only those values."""
    def only(name: str, values: Sequence[str]) -> bool:
        knob = space.get(name)
        if knob is None or knob.when:
            return False
        if isinstance(knob, FixedKnob):
            return str(knob.value) in values
        return isinstance(knob, CategoricalKnob) and all(str(c) in values for c in knob.choices)

    return bool(when) and all(only(name, values) for name, values in when)


def own_step_limit(max_steps: int, stop_at_step: int | None, knobs: Mapping[str, Any]) -> int:
    """A kohya run's ``--max_train_steps``: the step it pauses at (``RunRequest.stop_at_step``) where the
    config's ``lr_scheduler`` is one of :data:`LENGTH_FREE_SCHEDULERS` (:data:`KOHYA_SELF_STOP`) — the
    trainer then stops itself exactly at the rung, at any speed, its last files written after the rung's
    (:func:`ended_after`) — else the run's full length (its schedule's; the session stops it at the rung)."""
    if stop_at_step and stops_itself(knobs, KOHYA_SELF_STOP):
        return min(int(stop_at_step), int(max_steps))
    return int(max_steps)


def pause_save_every(stop_at_step: int, save_every: int | None) -> int:
    """The ``--save_every_n_steps`` that makes ``stop_at_step`` a save step: the step itself, or
    the largest divisor of it that is also a divisor of a requested cadence (so the run's own
    checkpoints stay where they were asked for)."""
    stop = int(stop_at_step)
    return math.gcd(stop, int(save_every)) if save_every else stop


def zip_complete(path: Path) -> bool:
    """Whether ``path`` is a whole zip archive (``torch.save``'s format: its end record is written last)."""
    try:
        return path.is_file() and zipfile.is_zipfile(path)
    except OSError:
        return False


def accelerate_state_complete(folder: Path, extra: Sequence[str] = ()) -> bool:
    """Whether ``folder`` holds a whole ``accelerator.save_state`` (and the ``extra`` files)."""
    folder = Path(folder)
    names = (*extra, *ACCELERATE_STATE_FILES)
    if not all((folder / name).is_file() for name in names):
        return False
    return zip_complete(folder / ACCELERATE_LAST_FILE)


def read_train_state(folder: Path) -> tuple[int, int] | None:
    """``(current_epoch, current_step)`` of an sd-scripts state folder, or None without one."""
    try:
        data = json.loads((Path(folder) / TRAIN_STATE_FILE).read_text(encoding="utf-8"))
        return int(data["current_epoch"]), int(data["current_step"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _highest_step(files: Iterable[Path], tags: Sequence[str]) -> int | None:
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    highest = None
    for path in files:
        try:
            for event in EventFileLoader(str(path)).Load():
                if any(value.tag in tags for value in event.summary.value):
                    highest = event.step if highest is None else max(highest, event.step)
        except Exception:  # a record being written, a vanished file: read what is there
            continue
    return highest


def logged_past(logging_dir: Path | None, step: int, tags: Sequence[str], *, since: float = 0.0,
                glob: str = "**/events.out.tfevents.*") -> bool:
    """Whether an event file under ``logging_dir`` written at or after ``since`` (a time stamp:
    the state's last file, so that an earlier launch's events of the same run do not count)
    holds one of the step scalars ``tags`` (the loss) at a step after ``step``. Only those: the
    per-epoch scalars both kohya trainers log use the epoch number as their step."""
    if logging_dir is None or not Path(logging_dir).is_dir():
        return False
    files = []
    for path in sorted(Path(logging_dir).glob(glob)):
        try:
            if path.stat().st_mtime >= since:
                files.append(path)
        except OSError:
            continue
    highest = _highest_step(files, tuple(tags))
    return highest is not None and highest > int(step)


def ended_after(output_dir: Path, output_name: str, since: float) -> bool:
    """Whether the training ended at or after ``since`` (a time stamp: a state's last file): its
    last weights (:data:`LAST_WEIGHTS_NAME`), written after every other file, are that new."""
    try:
        return (Path(output_dir) / LAST_WEIGHTS_NAME.format(output_name)).stat().st_mtime >= since
    except OSError:
        return False


def saved_before_more(output_dir: Path, output_name: str, step: int, tags: Sequence[str], since: float) -> bool:
    """Whether a kohya trainer went on after the files it saved for ``step`` (the newest written at
    ``since``): it logged a later step, or its training ended after them (its own step limit)."""
    return (logged_past(Path(output_dir).parent / "logs", int(step), tags, since=since)
            or ended_after(output_dir, output_name, since))


def paused_weights(output_dir: Path, output_name: str, step: int, tags: Sequence[str]) -> Path | None:
    """``<output_dir>/<output_name>-step<step>.safetensors`` (the weights a kohya trainer saves at
    a ``--save_every_n_steps`` step) once the trainer went on after them (:func:`saved_before_more`)
    — the pause of a trainer whose resume restarts (nothing else of its state is needed)."""
    found = Path(output_dir) / STEP_WEIGHTS_NAME.format(output_name, int(step), "safetensors")
    try:
        written = found.stat().st_mtime
    except OSError:
        return None
    return found if saved_before_more(output_dir, output_name, step, tags, written) else None
