"""ai-toolkit's held-out validation: the images Bracket holds out and the ``validation_config`` naming them.

ai-toolkit (``TrainConfig.validation_config``, ``BaseSDTrainProcess.validate`` at the pin) takes a
list of ``validation_items`` (image path and prompt), encodes them once, and every
``validate_every_n_steps`` steps (and at a launch's first step) predicts them at fixed sigmas with
fixed noise, logging the mean MSE as ``val/loss`` — to its ``loss_log.db`` only, which the session
reads (``LaunchSpec.metrics_db``). It does not remove those images from the training data, so
Bracket trains from a folder of links to the rest (``bracket.dataset.references.training_folder``).
"""

from __future__ import annotations

import random
from pathlib import Path

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
VALIDATION_TAGS = ("val/loss",)


def images_of(folders: list[Path]) -> list[Path]:
    return sorted(p for folder in folders if folder.is_dir() for p in folder.iterdir()
                  if p.suffix.lower() in IMAGE_SUFFIXES)


def held_out(images: list[Path], split: float, seed: int) -> list[Path]:
    """The ``split`` share of ``images`` (at least one, never all), drawn with ``seed``: the same every run."""
    if split <= 0 or len(images) < 2:
        return []
    count = min(len(images) - 1, max(1, round(split * len(images))))
    return sorted(random.Random(seed).sample(images, count))


def validation_items(images: list[Path], caption_ext: str = ".txt") -> list[dict[str, str]]:
    items = []
    for image in images:
        caption = image.with_suffix(caption_ext)
        prompt = caption.read_text(encoding="utf-8").strip() if caption.is_file() else ""
        items.append({"image_path": str(image), "prompt": prompt})
    return items
