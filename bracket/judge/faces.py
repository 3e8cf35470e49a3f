"""Faces for the optional face-identity judge: found, cropped and compared in the worker process.

* **Detector**: OpenCV's frontal-face Haar cascade (``haarcascade_frontalface_default.xml``), which
  ships inside the ``opencv-python-headless`` wheel of the 4.x series (``cv2.data.haarcascades``;
  OpenCV 5 dropped the cascades). OpenCV is Apache-2.0; the cascade file carries Intel's
  BSD-style licence in its header. Nothing is downloaded. It finds upright, roughly frontal
  faces; profiles, strongly stylised or very small faces are often missed.
* **Embedding**: the backbone's ``face_embeddings`` (a face model named in ``BRACKET_JUDGE_FACE``,
  ``bracket.judge.image_models``), else its ``image_embeddings`` (the likeness model: DINOv2 or
  CLIP) on the face crop — a *crop likeness*, not a trained face-recognition network.

A sample's figure is the mean cosine of its largest face's embedding to each reference image's
largest face (:func:`mean_cosine`; the references' faces are embedded once, :func:`reference_faces`,
and kept by the worker); a sample where no face is found has no figure and the note
:data:`NO_FACE`; when no reference image shows a face, no sample has a figure
(:data:`NO_REFERENCE_FACE`). The largest face is taken as the subject's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bracket.judge.image_models import WeightsProblem, mean_cosine

#: the cascade file inside ``cv2.data.haarcascades``
CASCADE = "haarcascade_frontalface_default.xml"
#: what pip installs when the detector is missing (4.x: the series that ships the cascades)
INSTALL = "pip install 'opencv-python-headless>=4.10,<5'"
#: a sample's note when the detector finds no face in it
NO_FACE = "no face found"
#: every sample's note when no reference image shows a face
NO_REFERENCE_FACE = "no face found in the reference images"
#: the share of the box added on each side of a face before cropping (hair line, chin, ears)
MARGIN = 0.2


class FaceDetector:
    """OpenCV's bundled frontal-face cascade; :meth:`largest_face` crops the biggest face found."""

    def __init__(self) -> None:
        try:
            import cv2
        except ImportError:
            raise WeightsProblem(f"the face-identity judge needs OpenCV's face detector: {INSTALL}") from None
        if not hasattr(cv2, "CascadeClassifier") or not hasattr(cv2, "data"):
            raise WeightsProblem(f"OpenCV {cv2.__version__} has no bundled Haar cascades (OpenCV 5 dropped them); "
                                 f"{INSTALL}")
        path = Path(getattr(cv2, "data").haarcascades) / CASCADE  # noqa: B009 - not in OpenCV's stubs
        self.cv2: Any = cv2
        self.cascade: Any = cv2.CascadeClassifier(str(path)) if path.is_file() else None
        if self.cascade is None or self.cascade.empty():
            raise WeightsProblem(f"OpenCV's face cascade {path} is missing or unreadable; reinstall it: {INSTALL}")

    def boxes(self, image: Any) -> list[tuple[int, int, int, int]]:
        """The faces of a PIL image as (x, y, width, height), the largest first."""
        import numpy as np

        grey = self.cv2.cvtColor(np.asarray(image.convert("RGB")), self.cv2.COLOR_RGB2GRAY)
        smallest = max(24, min(grey.shape) // 12)
        found = self.cascade.detectMultiScale(grey, scaleFactor=1.1, minNeighbors=5, minSize=(smallest, smallest))
        boxes = [(int(x), int(y), int(w), int(h)) for x, y, w, h in found]
        return sorted(boxes, key=lambda b: (-b[2] * b[3], b[0], b[1]))

    def largest_face(self, image: Any) -> Any | None:
        """The crop of the largest face with :data:`MARGIN` around it, or None when none is found."""
        boxes = self.boxes(image)
        if not boxes:
            return None
        x, y, w, h = boxes[0]
        dx, dy = round(w * MARGIN), round(h * MARGIN)
        return image.crop((max(0, x - dx), max(0, y - dy), min(image.width, x + w + dx), min(image.height, y + h + dy)))


def detector_problem() -> str | None:
    """Why the face detector cannot run here (one sentence), or None when it can."""
    try:
        FaceDetector()
    except WeightsProblem as problem:
        return str(problem)
    return None


def _embedder(backbone: Any) -> Any:
    """How ``backbone`` embeds face crops: its face model, else its likeness embeddings."""
    return getattr(backbone, "face_embeddings", None) or backbone.image_embeddings


def reference_faces(backbone: Any, detector: FaceDetector, references: Sequence[Any]) -> list[list[float]]:
    """The embeddings of the largest face of each reference image that shows one (``[]``: none does)."""
    faces = [face for face in map(detector.largest_face, references) if face is not None]
    return _embedder(backbone)(faces) if faces else []


def face_figures(backbone: Any, detector: FaceDetector, refs: Sequence[Sequence[float]], frames: Sequence[Any],
                 chosen: Sequence[int]) -> tuple[dict[int, float], dict[int, str]]:
    """(figure per frame index, note per frame index) for the frames ``chosen`` (in-distribution):
    the mean cosine of each frame's largest face to the references' faces ``refs``
    (:func:`reference_faces`); a frame without a face (or every frame, when no reference shows one)
    gets a note instead of a figure."""
    if not refs:
        return {}, dict.fromkeys(chosen, NO_REFERENCE_FACE)
    crops = {index: detector.largest_face(frames[index]) for index in chosen}
    found = [index for index, crop in crops.items() if crop is not None]
    rows = _embedder(backbone)([crops[index] for index in found]) if found else []
    figures = {index: mean_cosine(row, refs) for index, row in zip(found, rows)}
    return figures, {index: NO_FACE for index, crop in crops.items() if crop is None}
