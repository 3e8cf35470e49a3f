"""Whether and how a session's image judges run: their settings from ``.env``, the check Start
and ``doctor`` make of their models, and the likeness references.

``BRACKET_JUDGE_TEXT_IMAGE`` (a CLIP checkpoint: a folder or a Hugging Face name in the local
cache) turns them on; ``BRACKET_JUDGE_LIKENESS`` (DINOv2), ``BRACKET_JUDGE_PYTHON``,
``BRACKET_JUDGE_DEVICE`` and ``BRACKET_JUDGE_BATCH`` refine them; ``BRACKET_JUDGE_BACKBONE``
(``module:factory``) swaps the models for another backbone (the tests' stand-in). The scorer that
runs them is ``bracket.session.scoring.image_scorer``.

The likeness references are spread images of the dataset the runs train on (at most
:data:`REFERENCE_COUNT`), flagged "training images" in each record: a held-out share is not split
off the dataset yet, so likeness measures how close samples come to the training images.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bracket import settings as app_settings
from bracket.errors import BracketError
from bracket.judge.image_judges import IMAGE_JUDGES
from bracket.judge.image_models import LIKENESS_TYPES, TEXT_IMAGE_TYPES, WeightsProblem, check_weights
from bracket.session.scoring.run_scores import effective_weights

#: at most this many dataset images are the likeness references (spread over the dataset)
REFERENCE_COUNT = 8
_MEDIA = {".png", ".jpg", ".jpeg", ".webp", ".bmp"}


@dataclass(frozen=True)
class ImageJudgeConfig:
    """Where the image judges' models and python are (from ``.env`` / the environment)."""

    text_image: str = ""
    likeness: str = ""
    python: str = ""
    device: str = "auto"
    batch_size: int = 8
    #: ``module:factory`` of another backbone (the tests' deterministic stand-in)
    module: str = ""

    def backbone(self) -> dict[str, Any]:
        return {"text_image": self.text_image, "likeness": self.likeness or None, "device": self.device,
                "batch_size": self.batch_size, "module": self.module or None}

    def digest(self) -> str:
        """What the figures depend on besides the image: the models (for the cache key)."""
        return json.dumps([self.text_image, self.likeness, self.module])


def image_judge_config() -> ImageJudgeConfig | None:
    """The configured image judges, or None when no text-image model (nor stand-in) is set."""
    text_image = app_settings.env("BRACKET_JUDGE_TEXT_IMAGE")
    module = app_settings.env("BRACKET_JUDGE_BACKBONE")
    if not text_image and not module:
        return None
    try:
        batch = max(1, int(app_settings.env("BRACKET_JUDGE_BATCH", "8") or "8"))
    except ValueError:
        raise BracketError("BRACKET_JUDGE_BATCH must be a whole number of images, e.g. 8") from None
    return ImageJudgeConfig(text_image=text_image, likeness=app_settings.env("BRACKET_JUDGE_LIKENESS"),
                            python=app_settings.env("BRACKET_JUDGE_PYTHON"),
                            device=app_settings.env("BRACKET_JUDGE_DEVICE", "auto") or "auto", batch_size=batch,
                            module=module)


def image_judges_wanted(weights: Mapping[str, float], sample_kind: str) -> bool:
    """Whether a session's image judges have anything to do: image or video samples, and one of
    them weighing above 0."""
    laid = effective_weights(weights)
    return sample_kind in ("image", "video") and any(laid.get(name, 0.0) > 0 for name in IMAGE_JUDGES)


def check_image_judges(config: ImageJudgeConfig | None) -> str | None:
    """Why the configured image judges cannot run (one sentence: a missing or broken weight, a
    python that is not there), or None when they can or none are configured."""
    if config is None or config.module:
        return None
    python = config.python
    if python and not Path(python).expanduser().is_file():
        return f"BRACKET_JUDGE_PYTHON {python} does not exist; point it at a python with torch and transformers"
    try:
        check_weights(config.text_image, TEXT_IMAGE_TYPES, "BRACKET_JUDGE_TEXT_IMAGE")
        if config.likeness:
            check_weights(config.likeness, LIKENESS_TYPES, "BRACKET_JUDGE_LIKENESS")
    except WeightsProblem as problem:
        return str(problem)
    return None


def reference_images(dataset: str | Path | None, style: str | None, count: int = REFERENCE_COUNT) -> list[Path]:
    """Up to ``count`` images spread over the dataset's media folders (the likeness references)."""
    from bracket.dataset.runtime import dataset_image_dirs

    if not dataset or not style:
        return []
    try:
        folders = dataset_image_dirs(Path(dataset).expanduser(), str(style))
    except (BracketError, OSError, ValueError):
        return []
    found = sorted(p for folder in folders if Path(folder).is_dir() for p in Path(folder).iterdir()
                   if p.suffix.lower() in _MEDIA)
    if len(found) <= count:
        return found
    return [found[round(i * (len(found) - 1) / (count - 1))] for i in range(count)]


def doctor_check(report: Any) -> bool | None:
    """``doctor``'s line on the image judges' models (``report.add``): found and readable, or what
    to fetch; None (no line) when none are configured."""
    config = image_judge_config()
    if config is None:
        return None
    problem = check_image_judges(config)
    found = f"models found: {config.text_image}" + (f", {config.likeness}" if config.likeness else "")
    report.add("image judges", problem is None, problem or found)
    return problem is None
