"""The image-judge worker: ``python -m bracket.judge.image_worker --serve`` (a session's), or
``python -m bracket.judge.image_worker JOB.json RESULT.json`` (one job, for the bench).

A separate process (the app's python, or ``BRACKET_JUDGE_PYTHON``: torch and the GPU). A session
starts **one** for the whole search (``bracket.session.scoring.judge_worker``) with ``--serve``: a
job a JSON line on stdin, its answer a JSON line on stdout (any other output goes to stderr, the
log); the models stay loaded from job to job, loaded again only when a job names others, and so do
the reference images' embeddings while the models and the files (path, mtime, size) are the same
(:meth:`Models.references`: a search's references are embedded once, not for every run). A job:

    {"backbone": {"text_image": "...", "likeness": "..." | null, "device": "auto", "batch_size": 8,
                  "module": "package.module:Factory" | null, "preference": "..." (optional),
                  "faces": true, "face": "..." (optional: the face-identity judge and its model)},
     "references": ["/data/ref1.png", ...],
     "images": [{"path": "...", "prompt": "...", "kind": "in" | "held_out"}, ...],
     "video_frames": 3}

The answer gives per image ``{"likeness", "prompt_following", "image_quality"}`` (raw figures,
higher better: ``bracket.judge.image_judges``; likeness for in-distribution samples, prompt-following
for held-out ones, quality for all), ``"preference"`` with a preference model
(``bracket.judge.preference``), ``"face_identity"`` and ``"face"`` for in-distribution samples with
``faces`` (``bracket.judge.faces``); a video is judged from ``video_frames`` frames, averaged.
``module`` swaps the transformers models for another backbone (the tests' stand-in). An unreadable
image gets ``{"error": ...}``; a model that cannot be loaded is the answer ``{"error": "image
judges: ..."}`` (the next job tries again), in the one-job mode one ``error:`` line and exit code 2.
Every answer says ``loads``: the models loaded so far.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bracket.judge.faces import NO_FACE, FaceDetector, face_figures, reference_faces
from bracket.judge.image_models import TransformersBackbone, WeightsProblem, clip_cosine, mean_cosine
from bracket.judge.vlm import DEFAULT_VIDEO_FRAMES, is_video, video_frames


def load_backbone(spec: dict[str, Any]) -> Any:
    """The backbone the job names: the transformers models, or ``module``'s factory."""
    if spec.get("module"):
        module, _, attr = str(spec["module"]).partition(":")
        return getattr(importlib.import_module(module), attr or "Backbone")(**spec)
    return TransformersBackbone(str(spec["text_image"]), spec.get("likeness") or None,
                                device=str(spec.get("device") or "auto"), batch_size=int(spec.get("batch_size") or 8),
                                preference=spec.get("preference") or None, face=spec.get("face") or None)


def read_frames(path: Path, video_count: int) -> list[Any]:
    """The RGB image(s) of one sample: the image, or ``video_count`` frames of a video."""
    from PIL import Image

    if is_video(path):
        return video_frames(path, video_count)
    with Image.open(path) as image:
        return [image.convert("RGB")]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


@dataclass(frozen=True)
class ReferenceEmbeddings:
    """The reference images as the judges compare samples to them: their likeness embeddings, and
    their largest faces' (``faces.reference_faces``) where the face-identity judge is on."""

    likeness: list[list[float]] = field(default_factory=list)
    faces: list[list[float]] = field(default_factory=list)


def embed_references(backbone: Any, references: Sequence[Any], faces: FaceDetector | None = None
                     ) -> ReferenceEmbeddings:
    """The :class:`ReferenceEmbeddings` of the reference images ``references`` (PIL images)."""
    return ReferenceEmbeddings(backbone.image_embeddings(references) if references else [],
                               reference_faces(backbone, faces, references) if faces else [])


def score_images(backbone: Any, references: ReferenceEmbeddings, images: list[dict[str, Any]], video_count: int,
                 faces: FaceDetector | None = None) -> dict[str, dict[str, Any]]:
    """Raw figures per image path (see the module docstring) against the embedded ``references``
    (:func:`embed_references`); with a face detector, the face-identity figure (or why there is
    none) of each in-distribution sample as well."""
    refs = references.likeness
    frames: list[Any] = []
    owners: list[int] = []
    out: dict[str, dict[str, Any]] = {}
    for index, item in enumerate(images):
        try:
            read = read_frames(Path(item["path"]), video_count)
        except (OSError, ValueError) as error:
            out[item["path"]] = {"error": f"{Path(item['path']).name}: {error}"}
            continue
        frames += read
        owners += [index] * len(read)
    if not frames:
        return out
    quality = backbone.quality(frames)
    inside = [i for i, owner in enumerate(owners) if images[owner].get("kind") != "held_out"]
    outside = [i for i, owner in enumerate(owners) if images[owner].get("kind") == "held_out"]
    likeness: dict[int, float] = {}
    if refs and inside:
        for i, row in zip(inside, backbone.image_embeddings([frames[i] for i in inside])):
            likeness[i] = mean_cosine(row, refs)
    follows: dict[int, float] = {}
    if outside:
        texts = [images[owners[i]]["prompt"] for i in outside]
        follows = dict(zip(outside, map(clip_cosine, backbone.prompt_similarity([frames[i] for i in outside], texts))))
    face, face_notes = face_figures(backbone, faces, references.faces, frames, inside) if faces else ({}, {})
    preferred = getattr(backbone, "preference", None)
    preference = preferred(frames, [images[owner]["prompt"] for owner in owners]) if preferred else None
    for index, item in enumerate(images):
        mine = [i for i, owner in enumerate(owners) if owner == index]
        if not mine:
            continue
        out[item["path"]] = {"likeness": _mean([likeness[i] for i in mine if i in likeness]),
                             "prompt_following": _mean([follows[i] for i in mine if i in follows]),
                             "image_quality": _mean([quality[i] for i in mine])}
        if preference is not None:
            out[item["path"]]["preference"] = _mean([float(preference[i]) for i in mine])
        if faces is not None and item.get("kind") != "held_out":
            found = [face[i] for i in mine if i in face]
            out[item["path"]]["face_identity"] = _mean(found)
            out[item["path"]]["face"] = "found" if found else next((face_notes[i] for i in mine if i in face_notes),
                                                                   NO_FACE)
    return out


class Models:
    """The backbone this process has loaded, its face detector and the reference images' embeddings,
    kept from job to job; made again only for another spec (the embeddings: other reference files)."""

    def __init__(self) -> None:
        self.spec: str | None = None
        self.backbone: Any = None
        self.faces: FaceDetector | None = None
        self.loads = 0
        #: ((spec, each reference file's path, mtime and size), their embeddings): the last set asked for
        self._references: tuple[tuple[Any, ...], ReferenceEmbeddings] | None = None

    def get(self, spec: dict[str, Any]) -> Any:
        key = json.dumps(spec, sort_keys=True)
        if key != self.spec:
            # the old models (and what they embedded) go before the new ones load
            self.backbone, self.faces, self.spec, self._references = None, None, None, None
            self.backbone = load_backbone(spec)
            self.faces = FaceDetector() if spec.get("faces") else None
            self.spec = key
            self.loads += 1
        return self.backbone

    def references(self, paths: Sequence[str]) -> ReferenceEmbeddings:
        """The embeddings of the reference images at ``paths`` by the models of the last :meth:`get`,
        read and embedded again only when the spec or a file (its path, mtime or size) changed."""
        files = []
        for path in paths:
            stat = os.stat(path)
            files.append((str(path), stat.st_mtime_ns, stat.st_size))
        key = (self.spec, *files)
        if self._references is None or self._references[0] != key:
            images = [frame for path in paths for frame in read_frames(Path(path), 1)]
            self._references = key, embed_references(self.backbone, images, self.faces)
        return self._references[1]


def run(job: dict[str, Any], models: Models | None = None) -> dict[str, Any]:
    models = models or Models()
    started = time.perf_counter()
    backbone = models.get(dict(job.get("backbone") or {}))
    loaded = time.perf_counter()
    references = models.references([str(path) for path in job.get("references") or ()])
    images = score_images(backbone, references, list(job.get("images") or ()),
                          int(job.get("video_frames") or DEFAULT_VIDEO_FRAMES), models.faces)
    return {"images": images, "load_s": round(loaded - started, 3), "score_s": round(time.perf_counter() - loaded, 3),
            "peak_rss_mb": peak_rss_mb(), "loads": models.loads}


def serve(requests: Any, answers: Any) -> int:
    """Answer each job line of ``requests`` with one JSON line on ``answers``, the models kept loaded;
    ends at the end of ``requests`` (the session closed it, or ended)."""
    models = Models()
    for line in requests:
        if not line.strip():
            continue
        try:
            answer = run(json.loads(line), models)
        except (WeightsProblem, OSError, ValueError, ImportError) as error:
            answer = {"error": f"image judges: {error}", "loads": models.loads}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
    return 0


def peak_rss_mb() -> float:
    """The worker's peak resident memory in MiB (its current one where the peak is not known)."""
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
        return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)
    except ImportError:  # Windows
        import psutil

        return round(psutil.Process().memory_info().rss / (1024 * 1024), 1)


def main(argv: list[str]) -> int:
    if argv == ["--serve"]:
        answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
        sys.stdout.flush()
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a library's print goes to the log, not the answers
        return serve(sys.stdin, answers)
    if len(argv) != 2:
        print("error: usage: python -m bracket.judge.image_worker --serve | JOB.json RESULT.json", file=sys.stderr)
        return 2
    job_path, result_path = Path(argv[0]), Path(argv[1])
    try:
        result = run(json.loads(job_path.read_text(encoding="utf-8")))
    except (WeightsProblem, OSError, ValueError, ImportError) as error:
        print(f"error: image judges: {error}", file=sys.stderr)
        return 2
    temporary = result_path.with_name(result_path.name + f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(result), encoding="utf-8")
    os.replace(temporary, result_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
