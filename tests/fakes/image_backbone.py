"""A deterministic stand-in for the image judges' models, for the planted samples of the fake trainer.

The image-judge worker loads it instead of the transformers models when ``BRACKET_JUDGE_BACKBONE``
is ``tests.fakes.image_backbone:Backbone``; everything else of the judge pipeline (the worker
process, the cache, the stored figures, the scores, the best step) is the real one. It reads what
``fake_outputs.planted_image`` draws:

* ``image_embeddings``: ``(red, 1 - red)`` normalised, ``red`` the redness of the middle square, so
  a sample's cosine to a red-square reference grows with how far the subject has faded in;
* ``prompt_similarity``: for a prompt with a held-out context word, the blueness of the top band
  (the context, which over-fitting erases); else the redness of the middle;
* ``quality``: 1 - the mean difference of neighbouring pixels (the grain a high loss leaves).
"""

from __future__ import annotations

import math
import os
from typing import Any

from tests.fakes.fake_outputs import CONTEXT_WORDS

#: the environment variable naming a file each load of this backbone adds a line to (its pid)
LOADS_FILE = "BRACKET_TEST_BACKBONE_LOADS"


def _region(image: Any, box: tuple[float, float, float, float]) -> tuple[float, float, float]:
    width, height = image.size
    crop = image.crop((round(box[0] * width), round(box[1] * height), round(box[2] * width),
                       round(box[3] * height)))
    pixels = list(crop.getdata())
    return tuple(sum(p[c] for p in pixels) / len(pixels) / 255.0 for c in range(3))  # type: ignore[return-value]


def redness(image: Any) -> float:
    r, g, b = _region(image, (0.3, 0.3, 0.7, 0.7))
    return min(1.0, max(0.0, r - (g + b) / 2.0))


def blueness(image: Any) -> float:
    r, g, b = _region(image, (0.0, 0.0, 1.0, 0.1))
    return min(1.0, max(0.0, b - (r + g) / 2.0))


class Backbone:
    """The three methods of ``bracket.judge.image_models.TransformersBackbone``, by colour."""

    def __init__(self, **spec: Any) -> None:
        self.spec = spec
        loads = os.environ.get(LOADS_FILE)
        if loads:  # a test counts the loads: one line per load, with the process that made it
            with open(loads, "a", encoding="utf-8") as out:
                out.write(f"{os.getpid()}\n")

    def image_embeddings(self, images: list[Any]) -> list[list[float]]:
        rows = []
        for image in images:
            red = redness(image)
            norm = math.hypot(red, 1.0 - red) or 1.0
            rows.append([red / norm, (1.0 - red) / norm])
        return rows

    def prompt_similarity(self, images: list[Any], texts: list[str]) -> list[float]:
        return [blueness(image) if any(w in text.lower() for w in CONTEXT_WORDS) else redness(image)
                for image, text in zip(images, texts)]

    def quality(self, images: list[Any]) -> list[float]:
        values = []
        for image in images:
            grey = image.convert("L")
            width, height = grey.size
            pixels = list(grey.getdata())
            steps = [abs(pixels[y * width + x] - pixels[y * width + x + 1]) for y in range(height)
                     for x in range(width - 1)]
            values.append(1.0 - sum(steps) / len(steps) / 255.0)
        return values


class Crashing(Backbone):
    """A backbone whose process ends in the middle of a job (a worker killed by the system)."""

    def quality(self, images: list[Any]) -> list[float]:
        os._exit(3)
