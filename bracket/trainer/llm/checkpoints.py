"""Pause and resume of the Hugging Face Trainer-based LLM adapters (Axolotl, Unsloth; issue 38).

Read at the pinned ``transformers`` (5.16.1 under axolotl 0.19.0, 5.17.0 under unsloth):

* **Pause.** ``save_strategy: steps`` with a ``save_steps`` that divides the rung step
  writes ``<output_dir>/checkpoint-<step>/``. ``_maybe_log_save_evaluate`` logs the step's
  loss, then evaluates, then saves (``_save_checkpoint``), and ``_save_checkpoint`` writes the
  adapter, then ``optimizer.pt``/``scheduler.pt``, ``rng_state.pth`` and, last,
  ``trainer_state.json`` (``TrainerState.save_to_json``, one write): a checkpoint whose
  ``trainer_state.json`` reads as JSON with ``global_step`` equal to the step is complete,
  and the step's loss and eval are already in the event files.
* **Resume.** ``trainer.train(resume_from_checkpoint=...)`` (Axolotl's
  ``resume_from_checkpoint`` key, the Unsloth driver's ``resume_from``) restores adapter,
  optimizer, scheduler and RNG, reads ``global_step`` from ``trainer_state.json`` and skips
  the batches already seen in the current epoch (``_init_training_state``: ``global_step %
  steps_per_epoch``, any epoch, unless ``ignore_data_skip``). ``max_steps`` stays the full
  length, so the schedule is the full run's and the logged steps continue. Both also
  evaluate once at the start of a resumed run (``eval_on_start``), at the saved step.
* **Answers at the pause.** ``_save_checkpoint`` saves the model through ``save_model`` →
  ``_save``, which calls ``save_pretrained`` on the ``PeftModel`` the LoRA run trains:
  ``checkpoint-<step>/`` holds ``adapter_config.json`` and ``adapter_model.safetensors``, so
  ``llm_generate.py --adapter checkpoint-<step>`` loads the adapter of the pause step as it
  loads a finished run's (``LLMTrainer.rung_commands``).

Steps: the pause step is the request's ``stop_at_step`` as the same share of the run in
optimizer steps (:func:`pause_step`, ``bracket.search.halving.scaled_step``); docs/TRAINERS.md
("Steps") says more.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from bracket.search.halving import scaled_step
from bracket.trainer.base import LaunchSpec, RunRequest
from bracket.trainer.llm.base import LLMTrainer
from bracket.trainer.pause import pause_save_every

#: transformers' ``PREFIX_CHECKPOINT_DIR`` and ``TRAINER_STATE_NAME``
CHECKPOINT_PREFIX = "checkpoint"
TRAINER_STATE = "trainer_state.json"


def pause_step(request: RunRequest, steps: int) -> int | None:
    """The optimizer step of ``request.stop_at_step`` in a run of ``steps`` optimizer steps
    (``request.max_steps`` request steps): the same share of the run, at least 1 and before the end."""
    if not request.stop_at_step:
        return None
    return max(1, min(int(steps) - 1, scaled_step(int(request.stop_at_step), int(request.max_steps), int(steps))))


def checkpoint_complete(output_dir: Path, step: int) -> Path | None:
    """``<output_dir>/checkpoint-<step>`` once its ``trainer_state.json`` (written last) is whole."""
    folder = Path(output_dir) / f"{CHECKPOINT_PREFIX}-{int(step)}"
    try:
        state = json.loads((folder / TRAINER_STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return folder if isinstance(state, dict) and state.get("global_step") == int(step) else None


class HFPauseResume(LLMTrainer):
    """Mixed into the Axolotl and Unsloth adapters (before ``LLMTrainer``, whose run it extends)."""

    resume_mode = "continue"

    def save_steps(self, request: RunRequest, steps: int) -> int | None:
        """``save_steps`` of the run: a divisor of the pause step (and of a requested cadence)."""
        pause = pause_step(request, steps)
        every = request.save_every_n_steps
        return pause_save_every(pause, every) if pause else (int(every) if every else None)

    def prepare_run(self, request: RunRequest) -> LaunchSpec:
        spec = super().prepare_run(request)
        assert spec.max_steps is not None, "LLMTrainer.launch_spec sets the run's optimizer steps"
        return replace(spec, pause_step=pause_step(request, int(spec.max_steps)))

    def paused_state(self, output_dir: Path, step: int) -> Path | None:
        return checkpoint_complete(output_dir, step)
