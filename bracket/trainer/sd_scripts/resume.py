"""How an sd-scripts run pauses at a rung and resumes, read at the pin 48d368fa.

**Pause.** The run gets a ``--save_every_n_steps`` that divides the rung step and
``--save_state``: ``train_network.py`` (lines 1497-1504) writes ``output/bracket-step<r>-state``
at the rung (:data:`~bracket.trainer.pause.STEP_STATE_NAME`), also at its last step. Where the
config's learning-rate schedule is the same whatever the run's length (``constant``,
``constant_with_warmup``: :func:`~bracket.trainer.pause.own_step_limit`), the run's own
``--max_train_steps`` is the rung step: the trainer stops itself exactly there at any speed, writes its end-of-training
state and weights last, and :meth:`~KohyaPauseResume.paused_state` accepts the rung's state once
those are newer. A schedule that decays over the run (``cosine``, ``linear``) keeps
``--max_train_steps`` of the full length, and the session stops the run once the rung's state is
complete and a later step logged; a fast trainer may train on before the stop lands (to its end:
then it is a full run), and what it trained is kept and charged (``bracket.session.process.execute``).

**Resume.** ``--resume <state> --skip_until_initial_step --initial_step S``: accelerate restores
weights, optimizer, scheduler and RNG, and the skip sets ``global_step`` to ``S mod L``
(``L`` = batches per epoch; lines 1232-1344), exact only inside the first epoch. So every run
that pauses or resumes gets a dataset TOML whose ``num_repeats`` make one epoch hold the whole
run (:func:`one_epoch_repeats`): the counter then continues exactly; the data order is a fresh
shuffle, the same distribution and not the same sequence.

The full fine-tune scripts have no ``train_state.json`` nor the skip: they restart
(``resume_mode = "restart"``) and pause with weights only. docs/TRAINERS.md ("Pause and resume
per trainer") has the details and the other trainers.
"""

from __future__ import annotations

import math
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from bracket.dataset.preflight import IMAGE_EXTENSIONS
from bracket.errors import BracketError
from bracket.trainer.base import RunRequest, Trainer, save_resume_args
from bracket.trainer.pause import (
    ACCELERATE_LAST_FILE,
    STEP_STATE_NAME,
    TRAIN_STATE_FILE,
    accelerate_state_complete,
    paused_weights,
    saved_before_more,
)


def _images(folder: Path) -> int:
    try:
        return sum(1 for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_EXTENSIONS)
    except OSError:
        return 0


def one_epoch_repeats(document: MutableMapping[str, Any], min_batches: int, *, held_out: float = 0.0) -> int:
    """Multiply every training subset's ``num_repeats`` in ``document`` (a run's dataset TOML,
    its image folders in place) by the least factor that makes one epoch at least
    ``min_batches`` batches, counting the images that stay after a ``held_out`` share goes to
    validation; returns the factor (1: unchanged, also when no images can be counted)."""
    general = document.get("general", {})
    items, batch = 0, 1
    subsets = []
    for dataset in document.get("datasets", []):
        batch = max(batch, int(dataset.get("batch_size", general.get("batch_size", 1)) or 1))
        for subset in dataset.get("subsets", []):
            if subset.get("is_reg") or not isinstance(subset.get("image_dir"), str):
                continue
            repeats = int(subset.get("num_repeats", dataset.get("num_repeats", general.get("num_repeats", 1))) or 1)
            items += _images(Path(subset["image_dir"])) * repeats
            subsets.append((subset, repeats))
    kept = math.floor(items * (1.0 - float(held_out)))
    if kept < 1:
        return 1
    factor = max(1, math.ceil(int(min_batches) * batch / kept))
    if factor > 1:
        for subset, repeats in subsets:
            subset["num_repeats"] = repeats * factor
    return factor


class KohyaPauseResume(Trainer):
    """The pause and resume of sd-scripts' trainers, mixed into the adapter class."""

    #: "continue" for the network trainers (``train_network.py``), "restart" for full fine-tunes
    resume_mode = "continue"
    #: sd-scripts' ``--output_name`` of Bracket's runs
    output_name = "bracket"

    @property
    def pause_saves_state(self) -> bool:
        return self.resume_mode == "continue"

    def halving_run(self, request: RunRequest) -> bool:
        """Whether this run pauses or resumes (its dataset then holds the run in one epoch)."""
        return self.pause_saves_state and bool(request.stop_at_step or request.resume_from)

    def epoch_batches(self, request: RunRequest) -> int | None:
        """The least batches one epoch must hold for this run, or None when it need not."""
        return int(request.max_steps) + 1 if self.halving_run(request) else None

    def fit_epoch(self, document: MutableMapping[str, Any], request: RunRequest) -> None:
        least = self.epoch_batches(request)
        if least:
            held_out = float(self.validation.split) if getattr(self, "validation", None) else 0.0
            one_epoch_repeats(document, least, held_out=held_out)

    def pause_resume_args(self, request: RunRequest) -> list[str]:
        """Save, state, pause and resume flags of this run (see the module docstring)."""
        if request.resume_from and request.resume_step is not None and request.resume_step >= request.max_steps:
            raise BracketError(f"resume step {request.resume_step} is not before the run's last step "
                              f"{request.max_steps}; resume from an earlier state.")
        return save_resume_args(request, pause="state" if self.pause_saves_state else "weights",
                                continue_steps=self.pause_saves_state)

    def sample_at_first(self, request: RunRequest) -> bool:
        """``--sample_at_first`` only on a fresh start: a resumed run would sample the restored
        model as step 0 (``sample_images`` runs before ``global_step`` is set, line 1332)."""
        return not request.resume_from

    def paused_state(self, output_dir: Path, step: int) -> Path | None:
        """``output/bracket-step<step>-state`` (weights ``bracket-step<step>.safetensors`` for a
        full fine-tune) once it is whole and the trainer went on after it: it logged a later step,
        or the training ended (a run whose own step limit is the rung, ``pause.own_step_limit``)."""
        output_dir = Path(output_dir)
        if self.pause_saves_state:
            found = output_dir / STEP_STATE_NAME.format(self.output_name, int(step))
            if not accelerate_state_complete(found, (TRAIN_STATE_FILE,)):
                return None
            written = (found / ACCELERATE_LAST_FILE).stat().st_mtime
        else:
            return paused_weights(output_dir, self.output_name, int(step), self.loss_tags)
        return found if saved_before_more(output_dir, self.output_name, int(step), self.loss_tags, written) else None

