"""The image-judge worker: ``python -m bracket.judge.image_worker JOB.json RESULT.json``.

A separate process (the app's python, or the trainer venv's with ``BRACKET_JUDGE_PYTHON``: it
has torch and the GPU), so loading the models and scoring never blocks the app or the search's
loop; the session starts one per batch of images not yet in its cache
(``bracket.session.scoring.image_judges``). The job names the models and the images:

    {"backbone": {"text_image": "...", "likeness": "..." | null, "device": "auto", "batch_size": 8,
                  "module": "package.module:Factory" | null, "preference": "..." (optional),
                  "faces": true, "face": "..." (optional: the face-identity judge and its model)},
     "references": ["/data/ref1.png", ...],
     "images": [{"path": "...", "prompt": "...", "kind": "in" | "held_out"}, ...],
     "video_frames": 3}

and the result gives per image ``{"likeness", "prompt_following", "image_quality"}`` (raw
figures, higher better; see ``bracket.judge.image_judges``), and ``"preference"`` (the preference
model's logit, ``bracket.judge.preference``) when the backbone names a ``preference`` model,
and ``"face_identity"`` with ``"face"`` ("found" or why not; ``bracket.judge.faces``) for
in-distribution samples when it sets ``faces``:
likeness for in-distribution samples only (their mean cosine to the reference images), prompt-following for held-out
samples only, quality for every one; a video is judged from ``video_frames`` evenly spaced
frames, the figures averaged. ``module`` (a factory called with the backbone's settings) swaps
the transformers models for another backbone with the same three methods (the tests' stand-in).
An image that cannot be read gets ``{"error": "..."}``; a model that cannot be loaded ends the
worker with one ``error:`` line on stderr and exit code 2.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from bracket.judge.faces import NO_FACE, FaceDetector, face_figures
from bracket.judge.image_models import TransformersBackbone, WeightsProblem, mean_cosine
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


def score_images(backbone: Any, references: list[Any], images: list[dict[str, Any]], video_count: int,
                 faces: FaceDetector | None = None) -> dict[str, dict[str, Any]]:
    """Raw figures per image path (see the module docstring); with a face detector, the
    face-identity figure (or why there is none) of each in-distribution sample as well."""
    refs = backbone.image_embeddings(references) if references else []
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
        follows = {i: min(1.0, max(-1.0, float(v)))  # a cosine, clipped as mean_cosine clips
                   for i, v in zip(outside, backbone.prompt_similarity([frames[i] for i in outside], texts))}
    face, face_notes = face_figures(backbone, faces, references, frames, inside) if faces else ({}, {})
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


def run(job: dict[str, Any]) -> dict[str, Any]:
    started = time.perf_counter()
    backbone = load_backbone(dict(job.get("backbone") or {}))
    loaded = time.perf_counter()
    references = [frame for path in job.get("references") or () for frame in read_frames(Path(path), 1)]
    faces = FaceDetector() if (job.get("backbone") or {}).get("faces") else None
    images = score_images(backbone, references, list(job.get("images") or ()),
                          int(job.get("video_frames") or DEFAULT_VIDEO_FRAMES), faces)
    return {"images": images, "load_s": round(loaded - started, 3), "score_s": round(time.perf_counter() - loaded, 3),
            "peak_rss_mb": peak_rss_mb()}


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
    if len(argv) != 2:
        print("error: usage: python -m bracket.judge.image_worker JOB.json RESULT.json", file=sys.stderr)
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
