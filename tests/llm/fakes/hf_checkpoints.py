"""Checkpoints of the fake Hugging Face trainers (fake Axolotl, fake ``trl.SFTTrainer``), saved and
resumed as transformers 5.16/5.17's ``Trainer`` does: ``checkpoint-<step>/`` with the adapter
(``adapter_config.json`` and its weights, as ``PeftModel.save_pretrained`` writes them),
``optimizer.pt``, ``scheduler.pt``, ``rng_state.pth`` and, last, ``trainer_state.json``
(``global_step``); ``resume_from_checkpoint`` reads ``global_step`` back from it and the run goes
on from the next step to ``max_steps`` (the full length). ``FAKE_HF_SAVE_SECONDS`` sleeps between
the files (a checkpoint being written), ``FAKE_HF_STEP_SECONDS`` before each step, and
``FAKE_HF_HOLD_SECONDS`` after a checkpoint before the end (:func:`hold`)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path


def step_pause() -> None:
    seconds = float(os.environ.get("FAKE_HF_STEP_SECONDS", "0") or 0)
    if seconds:
        time.sleep(seconds)


def hold(step: int, max_steps: int) -> None:
    """After a checkpoint before the last step: the next step of a real model takes time, in which
    a pause's stop lands. A fake step takes none, so without this a run races to its end before
    the stop and a halving search never pauses; ``FAKE_HF_HOLD_SECONDS`` (an upper bound: the stop
    ends the process sooner) stands for that time."""
    seconds = float(os.environ.get("FAKE_HF_HOLD_SECONDS", "0") or 0)
    if seconds and step < max_steps:
        time.sleep(seconds)


def save_checkpoint(output_dir: Path, step: int, log_history: list | None = None,
                    adapter_config: dict | None = None) -> Path:
    folder = Path(output_dir) / f"checkpoint-{int(step)}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "adapter_config.json").write_text(json.dumps(adapter_config or {}), encoding="utf-8")
    pause = float(os.environ.get("FAKE_HF_SAVE_SECONDS", "0") or 0)
    for name in ("adapter_model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth"):
        (folder / name).write_bytes(b"fake")
        if pause:
            time.sleep(pause)
    state = {"global_step": int(step), "log_history": list(log_history or [])}
    (folder / "trainer_state.json").write_text(json.dumps(state), encoding="utf-8")
    return folder


def resumed_step(checkpoint: str | os.PathLike | None) -> int:
    """The ``global_step`` a resume starts from (0 without a checkpoint); a checkpoint without a
    whole ``trainer_state.json`` fails as transformers' ``TrainerState.load_from_json`` does."""
    if not checkpoint:
        return 0
    return int(json.loads((Path(checkpoint) / "trainer_state.json").read_text(encoding="utf-8"))["global_step"])
