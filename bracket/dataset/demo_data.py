"""The demo dataset: small procedurally drawn images of coloured shapes, with captions.

The embedded CPU demo (preset ``demo-cpu``) needs a dataset that anyone can make offline
in a second and that a tiny DDPM can learn in a minute: plain background, one large shape,
one of a few colours. Each image gets a caption file (``a red circle``) and the folder gets
an sd-scripts-style ``dataset.toml``, so the demo takes exactly the path a real dataset
takes (pre-flight, per-run TOML, caption files).

``python -m bracket demo-data DIR`` calls :func:`make_demo_dataset`; ``install.sh`` runs it
for ``runs/demo-data``. :data:`DEMO_PROMPTS` are the sample prompts the demo preset uses:
the same colour and shape words, one line per prompt with a fixed seed.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import tomli_w

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

#: colour word -> RGB; the demo trainer maps these same words to its class labels
COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40),
    "green": (40, 180, 60),
    "blue": (40, 80, 220),
    "yellow": (235, 210, 40),
}
SHAPES: tuple[str, ...] = ("circle", "square", "triangle")
BACKGROUND = (245, 245, 240)
IMAGE_SIZE = 64
IMAGE_FOLDER = "images"
TOML_NAME = "dataset.toml"
#: the default sample prompts of the demo preset: four of the twelve classes, fixed seeds
DEMO_PROMPTS: tuple[str, ...] = (
    "a red circle --d 1",
    "a blue square --d 2",
    "a green triangle --d 3",
    "a yellow circle --d 4",
)
_SUPERSAMPLE = 4
_STEM = re.compile(r"^shape_(\d{4})$")


def _draw_shape(shape: str, colour: tuple[int, int, int], rng: random.Random) -> "Image.Image":
    """One antialiased image: ``shape`` in ``colour``, random size and position."""
    from PIL import Image, ImageDraw  # imported to draw only: opening a session (status) needs no PIL

    big = IMAGE_SIZE * _SUPERSAMPLE
    image = Image.new("RGB", (big, big), BACKGROUND)
    draw = ImageDraw.Draw(image)
    side = rng.uniform(0.5, 0.75) * big
    left = rng.uniform(0.08 * big, big - side - 0.08 * big)
    top = rng.uniform(0.08 * big, big - side - 0.08 * big)
    box = (left, top, left + side, top + side)
    if shape == "circle":
        draw.ellipse(box, fill=colour)
    elif shape == "square":
        draw.rectangle(box, fill=colour)
    else:
        draw.polygon([(left + side / 2, top), (left + side, top + side), (left, top + side)], fill=colour)
    return image.resize((IMAGE_SIZE, IMAGE_SIZE), Image.Resampling.LANCZOS)


def dataset_toml_document(*, batch_size: int = 16, resolution: int = 32) -> dict:
    """The sd-scripts-style dataset TOML of a demo folder (image_dir relative to it)."""
    return {
        "general": {
            "caption_extension": ".txt",
            "batch_size": batch_size,
            "resolution": resolution,
            "enable_bucket": False,
        },
        "datasets": [{"subsets": [{"image_dir": IMAGE_FOLDER, "num_repeats": 1}]}],
    }


def make_demo_dataset(folder: Path, *, count: int = 64, seed: int = 0) -> Path:
    """Write ``count`` captioned shape images and ``dataset.toml`` into ``folder``.

    Returns the TOML's path. Idempotent: the same ``seed`` draws the same images, files
    are overwritten in place, and images of an earlier, larger ``count`` are removed.
    Colours and shapes cycle so that every combination appears about equally often.
    """
    if count < 1:
        raise ValueError("count must be at least 1")
    folder = Path(folder)
    images = folder / IMAGE_FOLDER
    images.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    combos = [(colour, shape) for colour in COLOURS for shape in SHAPES]
    for index in range(count):
        colour, shape = combos[index % len(combos)]
        stem = f"shape_{index:04d}"
        _draw_shape(shape, COLOURS[colour], rng).save(images / f"{stem}.png")
        (images / f"{stem}.txt").write_text(f"a {colour} {shape}\n", encoding="utf-8")
    for path in images.iterdir():
        match = _STEM.match(path.stem)
        if match and int(match.group(1)) >= count and path.suffix in (".png", ".txt"):
            path.unlink()
    toml_path = folder / TOML_NAME
    toml_path.write_text(tomli_w.dumps(dataset_toml_document()), encoding="utf-8")
    return toml_path


def make_demo_dataset_once(folder: Path, *, count: int = 64, seed: int = 0) -> Path | None:
    """Make the demo dataset at ``folder`` unless it is there, safe when several processes try
    at once (two searches started together on a fresh clone, the app and a CLI run).

    The images are drawn in a temporary folder beside ``folder`` and moved into place with one
    rename, so no process ever reads a half-written dataset; when another process got there
    first, its folder stays and ours is thrown away. Returns the TOML's path when this call
    made it, None when the dataset was there (so only its maker ever removes it)."""
    folder = Path(folder)
    if (folder / TOML_NAME).is_file():
        return None
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        make_demo_dataset(scratch, count=count, seed=seed)
        try:
            os.rename(scratch, folder)  # fails when another process's folder is there (not empty)
        except OSError:
            if not (folder / TOML_NAME).is_file():
                raise
            return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return folder / TOML_NAME
