"""The fake sd-scripts trainer's training state, saved and resumed as ``train_network.py`` does
at sd-scripts 48d368fa (with accelerate 1.6.0), so that a wrong resume command fails a test.

What it copies from the real one:

* **The state folder** ``<output_dir>/<output_name>-step<8 digits>-state`` (and
  ``<output_name>-state`` at the end) with, in accelerate's order, ``train_state.json``
  (``{"current_epoch": E, "current_step": S}``, S the *run-local* ``global_step``),
  ``model.safetensors`` (the updates the model has had), ``optimizer.bin``,
  ``scheduler.bin`` (the scheduler's step) and, last, ``random_states_0.pkl``: a zip (as
  ``torch.save`` writes) holding the pickled RNG states. ``BRACKET_FAKE_SAVE_SECONDS``
  sleeps between the files (a state being written).
* **The epoch.** Batches per epoch ``L`` = the dataset TOML's training images (after the
  ``--validation_split`` share, per subset ``ceil``) times their ``num_repeats``, over its
  ``batch_size`` (``BRACKET_FAKE_EPOCH_BATCHES`` overrides it; without a dataset one epoch
  holds the whole run). The run has ``ceil(max_train_steps / L)`` epochs and each epoch's
  batch order is drawn from the RNG when the epoch starts.
* **The resume** (``--resume DIR``): model, optimizer, scheduler and RNG come back; the
  step ``S`` is ``--initial_step`` if given, else the state's; then, as lines 1232-1344:
  without ``--skip_until_initial_step`` the run starts at epoch ``S // L`` with
  ``global_step = 0`` and no batch skipped; with it, it skips ``S mod L`` batches of that
  epoch and sets ``global_step = S mod L`` (right only inside the first epoch). The loop
  ends at ``global_step >= max_train_steps`` or when the epochs run out.
* **Samples** with ``--sample_at_first`` are written (as ``e000000``) before the skip, so a
  resumed run writes the restored model's sample as step 0 too.

The loss at an update depends on the updates the model has had (not on the logged step),
on ``--max_train_steps`` (the schedule), on the RNG and, by ``BRACKET_FAKE_DATA_SPREAD``
(default 0), on which image the batch is: a wrong resume shows in the curve.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import random
import time
import zipfile
from pathlib import Path

STATE_FILES = ("train_state.json", "model.safetensors", "optimizer.bin", "scheduler.bin", "random_states_0.pkl")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")


def _toml(path: str | None) -> dict:
    if not path or not Path(path).is_file():
        return {}
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib.loads(Path(path).read_text(encoding="utf-8"))


def epoch_batches(args) -> int:
    """Batches per epoch (see the module docstring)."""
    override = os.environ.get("BRACKET_FAKE_EPOCH_BATCHES")
    if override:
        return max(1, int(override))
    document = _toml(args.dataset_config)
    general = document.get("general", {})
    items, batch = 0, 1
    for dataset in document.get("datasets", []):
        batch = max(batch, int(dataset.get("batch_size", general.get("batch_size", 1))))
        for subset in dataset.get("subsets", []):
            folder = Path(str(subset.get("image_dir", "")))
            if subset.get("is_reg") or not folder.is_dir():
                continue
            count = sum(1 for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
            if args.validation_split > 0:
                count = math.ceil(count * (1 - args.validation_split))
            repeats = int(subset.get("num_repeats", dataset.get("num_repeats", general.get("num_repeats", 1))))
            items += count * repeats
    if items < 1:
        return max(1, args.max_train_steps)
    return max(1, math.ceil(items / batch))


class TrainingState:
    """Model, optimizer, scheduler and RNG of one fake run."""

    def __init__(self, args) -> None:
        self.args = args
        self.rng = random.Random(args.seed)  # the noise of each step
        self.data_rng = random.Random(args.seed + 1)  # each epoch's batch order
        self.trained = 0  # updates the model has had (the model's weights)
        self.scheduler_step = 0
        self.epoch_length = epoch_batches(args)
        self.order: list[int] = []
        self.steps_from_state: int | None = None

    # -- saving and loading -----------------------------------------------------------------
    def save(self, folder: Path, epoch: int, global_step: int) -> None:
        pause = float(os.environ.get("BRACKET_FAKE_SAVE_SECONDS", "0") or 0)
        folder.mkdir(parents=True, exist_ok=True)
        contents = {
            "train_state.json": {"current_epoch": epoch, "current_step": global_step},
            "model.safetensors": {"trained": self.trained},
            "optimizer.bin": {"trained": self.trained},
            "scheduler.bin": {"last_epoch": self.scheduler_step},
        }
        for name, data in contents.items():
            (folder / name).write_text(json.dumps(data), encoding="utf-8")
            if pause:
                time.sleep(pause)
        with zipfile.ZipFile(folder / "random_states_0.pkl", "w") as archive:
            archive.writestr("random_states_0/data.pkl", pickle.dumps({"random_state": self.rng.getstate(),
                                                                   "data_state": self.data_rng.getstate()}))
        if folder.name.startswith("demo-"):  # run as the demo preset's trainer: its marker of a whole state, last
            (folder / "COMPLETE").write_text("", encoding="utf-8")

    def load(self, folder: Path) -> None:
        folder = Path(folder)
        self.trained = json.loads((folder / "model.safetensors").read_text(encoding="utf-8"))["trained"]
        self.scheduler_step = json.loads((folder / "scheduler.bin").read_text(encoding="utf-8"))["last_epoch"]
        with zipfile.ZipFile(folder / "random_states_0.pkl") as archive:
            states = pickle.loads(archive.read("random_states_0/data.pkl"))
        self.rng.setstate(states["random_state"])
        self.data_rng.setstate(states["data_state"])
        train_state = folder / "train_state.json"
        if train_state.is_file():
            self.steps_from_state = json.loads(train_state.read_text(encoding="utf-8"))["current_step"]

    # -- the run's shape ----------------------------------------------------------------------
    def start(self) -> tuple[int, int, int]:
        """``(epoch_to_start, batches_to_skip, global_step)`` as train_network.py computes them."""
        args = self.args
        initial = args.initial_step if args.initial_step is not None else (self.steps_from_state or 0)
        if initial <= 0:
            return 0, 0, 0
        if args.max_train_steps <= initial:
            raise SystemExit(f"AssertionError: max_train_steps should be greater than initial step: "
                             f"{args.max_train_steps} vs {initial}")
        epoch_to_start = initial // self.epoch_length
        if not args.skip_until_initial_step:
            return epoch_to_start, 0, 0
        skip = initial - epoch_to_start * self.epoch_length
        return epoch_to_start, skip, skip

    def epochs(self) -> int:
        return math.ceil(self.args.max_train_steps / self.epoch_length)

    def new_epoch(self) -> None:
        self.order = list(range(self.epoch_length))
        self.data_rng.shuffle(self.order)

    # -- one update ----------------------------------------------------------------------------
    def update(self, batch: int, curve) -> float:
        """Train on ``batch`` of the epoch; the loss of this update."""
        self.trained += 1
        self.scheduler_step += 1
        spread = float(os.environ.get("BRACKET_FAKE_DATA_SPREAD", "0") or 0)
        image = self.order[batch] if batch < len(self.order) else batch
        data = spread * (random.Random(image).random() - 0.5)
        return curve(self.trained, self.rng) + data
