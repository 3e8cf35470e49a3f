"""Whether and how a session's image judges run: their settings, the check Start and ``doctor``
make of their models, and the likeness references.

The three models (:data:`MODEL_SETTINGS`) are a session's settings (``SearchSettings.image_models``:
Setup's judges fields, ``run --judge-text-image/--judge-likeness/--judge-preference``), each falling
back to ``.env``: ``BRACKET_JUDGE_TEXT_IMAGE`` (a CLIP or SigLIP checkpoint: a folder or a Hugging
Face name in the local cache) turns them on; ``BRACKET_JUDGE_LIKENESS`` (DINOv2),
``BRACKET_JUDGE_PREFERENCE`` (a PickScore-style CLIP for the optional preference judge). A model
name is data (read by ``bracket.judge.image_models`` as files, never run nor downloaded); what runs
— ``BRACKET_JUDGE_PYTHON``, ``BRACKET_JUDGE_BACKBONE`` — comes from ``.env`` only.
``BRACKET_JUDGE_FACE`` (``.env`` only: a face model for the optional face-identity judge, which
runs when its weight is above 0), ``BRACKET_JUDGE_PYTHON``,
``BRACKET_JUDGE_DEVICE`` and ``BRACKET_JUDGE_BATCH`` refine them; ``BRACKET_JUDGE_BACKBONE``
(``module:factory``) swaps the models for another backbone (the tests' stand-in). The scorer that
runs them is ``bracket.session.scoring.image_scorer``.

The likeness references (:func:`likeness_references`) are the session's held-out images
(``bracket.dataset.references``: decided once at creation, :func:`decide_references`, and given
to the trainer, which leaves them out of every run, :func:`apply_references`), flagged "held-out
images" in each record; where none are held out (a small dataset, a trainer that cannot, an older
session) they are spread training images (at most :data:`REFERENCE_COUNT`), flagged "training
images" with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bracket import settings as app_settings
from bracket.dataset.references import MIN_IMAGES, choose, dataset_images, held_count, held_out_references
from bracket.dataset.references import note as references_note
from bracket.errors import BracketError
from bracket.judge.faces import detector_problem
from bracket.judge.image_judges import IMAGE_JUDGES
from bracket.judge.image_models import FACE_TYPES, LIKENESS_TYPES, TEXT_IMAGE_TYPES, WeightsProblem, check_weights
from bracket.judge.preference import NAME as PREFERENCE
from bracket.session.scoring.run_scores import effective_weights
from bracket.trainer.base import Trainer

#: the optional face-identity judge (``bracket.judge.faces``)
FACE = "face_identity"

#: at most this many dataset images are the likeness references (spread over the dataset)
REFERENCE_COUNT = 8
#: each model a session may choose (``SearchSettings.image_models``) -> its ``.env`` fallback, the
#: model families it accepts and its name in messages
MODEL_SETTINGS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "text_image": ("BRACKET_JUDGE_TEXT_IMAGE", TEXT_IMAGE_TYPES, "text-image"),
    "likeness": ("BRACKET_JUDGE_LIKENESS", LIKENESS_TYPES, "likeness"),
    "preference": ("BRACKET_JUDGE_PREFERENCE", TEXT_IMAGE_TYPES, "preference"),
}
#: a model name longer than this is a paste gone wrong
MAX_MODEL_NAME = 1000


def image_models_problems(models: Any) -> list[str]:
    """What is wrong with a session's chosen models (``SearchSettings.image_models``): an object of
    :data:`MODEL_SETTINGS`'s names, each a one-line folder or Hugging Face name."""
    if not isinstance(models, dict):
        return [f"image judges' models must be an object of {', '.join(MODEL_SETTINGS)}, got {str(models)[:60]!r}."]
    problems = [f"image judges' models: no model {name!r}; use {', '.join(MODEL_SETTINGS)}."
                for name in models if name not in MODEL_SETTINGS]
    for name, value in models.items():
        if name in MODEL_SETTINGS and (not isinstance(value, str) or len(value) > MAX_MODEL_NAME
                                       or any(ord(c) < 32 for c in value)):
            problems.append(f"the {MODEL_SETTINGS[name][2]} model must be one line naming a model folder or a "
                            f"Hugging Face name, got {str(value)[:60]!r}.")
    return problems


def chosen_models(text_image: str = "", likeness: str = "", preference: str = "") -> dict[str, str]:
    """A session's ``image_models`` from form boxes or options (blank: ``.env``'s)."""
    given = {"text_image": text_image, "likeness": likeness, "preference": preference}
    return {name: str(value).strip() for name, value in given.items() if str(value or "").strip()}


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
    #: a preference model (PickScore-style CLIP) for the optional preference judge; "" none
    preference: str = ""
    #: the face-identity judge runs (its weight is above 0); ``face``: its face model, "" the likeness model
    faces: bool = False
    face: str = ""

    def backbone(self) -> dict[str, Any]:
        spec = {"text_image": self.text_image, "likeness": self.likeness or None, "device": self.device,
                "batch_size": self.batch_size, "module": self.module or None}
        spec = {**spec, "preference": self.preference} if self.preference else spec
        return {**spec, "faces": True, "face": self.face or None} if self.faces else spec

    def digest(self) -> str:
        """What the figures depend on besides the image: the models (for the cache key)."""
        return json.dumps([self.text_image, self.likeness, self.module] + ([self.preference] if self.preference
                                                                           else [])
                          + (["faces", self.face] if self.faces else []))


def image_judge_config(weights: Mapping[str, float] | None = None, models: Mapping[str, str] | None = None
                       ) -> ImageJudgeConfig | None:
    """The image judges a session runs — its chosen ``models`` (``SearchSettings.image_models``),
    each one not chosen from ``.env`` — or None when no text-image model (nor stand-in) is set; with
    a session's ``weights``, the face-identity judge is on where it weighs above 0."""
    chosen = {name: str((models or {}).get(name) or "") or app_settings.env(env)
              for name, (env, _, _) in MODEL_SETTINGS.items()}
    text_image = chosen["text_image"]
    module = app_settings.env("BRACKET_JUDGE_BACKBONE")
    if not text_image and not module:
        return None
    try:
        batch = max(1, int(app_settings.env("BRACKET_JUDGE_BATCH", "8") or "8"))
    except ValueError:
        raise BracketError("BRACKET_JUDGE_BATCH must be a whole number of images, e.g. 8") from None
    return ImageJudgeConfig(text_image=text_image, likeness=chosen["likeness"],
                            python=app_settings.env("BRACKET_JUDGE_PYTHON"),
                            device=app_settings.env("BRACKET_JUDGE_DEVICE", "auto") or "auto", batch_size=batch,
                            module=module, preference=chosen["preference"],
                            faces=effective_weights(weights or {}).get(FACE, 0.0) > 0,
                            face=app_settings.env("BRACKET_JUDGE_FACE"))


def weighed_image_judges(weights: Mapping[str, float]) -> list[str]:
    """The image judges (the optional ones included) that weigh above 0 with a session's ``weights``."""
    laid = effective_weights(weights)
    return [name for name in (*IMAGE_JUDGES, PREFERENCE) if laid.get(name, 0.0) > 0]


def image_judges_wanted(weights: Mapping[str, float], sample_kind: str) -> bool:
    """Whether a session's image judges have anything to do: image or video samples, and one of
    them (the optional ones included) weighing above 0."""
    return sample_kind in ("image", "video") and bool(weighed_image_judges(weights))


def check_image_judges(config: ImageJudgeConfig | None) -> str | None:
    """Why the configured image judges cannot run (one sentence: a missing or broken weight, a
    python that is not there), or None when they can or none are configured."""
    if config is None:
        return None
    if config.faces and (problem := detector_problem()):
        return problem
    if config.module:
        return None
    python = config.python
    if python and not Path(python).expanduser().is_file():
        return f"BRACKET_JUDGE_PYTHON {python} does not exist; point it at a python with torch and transformers"
    try:
        for name, (_, kinds, role) in MODEL_SETTINGS.items():
            if getattr(config, name):
                check_weights(getattr(config, name), kinds, role)
        if config.faces and config.face:
            check_weights(config.face, FACE_TYPES, "BRACKET_JUDGE_FACE")
    except WeightsProblem as problem:
        return str(problem)
    return None


def reference_images(dataset: str | Path | None, style: str | None, count: int = REFERENCE_COUNT) -> list[Path]:
    """Up to ``count`` training images spread over the dataset (the references when none are held out)."""
    return choose(dataset_images(dataset, style), count)


def decide_references(trainer: Trainer, requested: int | None, *, wanted: bool) -> tuple[int, str]:
    """(images to hold out, the session's note on the references) for a new session: ``requested``
    when stored (0: none), else by :func:`bracket.dataset.references.held_count` where the image
    judges run (``wanted``) and the trainer can leave images out; the note is "" without judges."""
    images = len(dataset_images(trainer.field("dataset"), trainer.dataset_style))
    supported = bool(trainer.holds_out_references)
    if requested is None:
        count = held_count(images) if wanted and supported else 0
    else:
        count = int(requested) if supported and 0 < int(requested) < images else 0
    return count, references_note(images, count, supported=supported, wanted=wanted)


def apply_references(trainer: Trainer, count: int) -> None:
    """Give ``trainer`` the session's held-out likeness references (``count`` of them, by the one rule)."""
    held = held_out_references(trainer.field("dataset"), trainer.dataset_style, count)
    trainer.held_out_references = tuple(held) if held and trainer.holds_out_references else ()


def likeness_references(trainer: Trainer) -> tuple[list[Path], dict[str, Any]]:
    """The likeness references of a session's trainer and what they are (a record's ``references``)."""
    held = list(trainer.held_out_references)
    if held:
        return held, {"count": len(held), "source": "held-out images",
                      "note": "dataset images no run trains on (bracket.dataset.references)"}
    found = reference_images(trainer.field("dataset"), trainer.dataset_style)
    images = len(dataset_images(trainer.field("dataset"), trainer.dataset_style))
    why = (f"the dataset has {images} images, fewer than {MIN_IMAGES}" if images < MIN_IMAGES and
           trainer.holds_out_references else "this session holds no images out")
    return found, {"count": len(found), "source": "training images",
                   "note": f"{why}: likeness is measured against images the runs train on"}


def doctor_check(ctx: Any) -> bool | None:
    """``doctor``'s line on the image judges' models (its context's ``image_models`` as ``run`` would
    choose them, else ``.env``'s; ``ctx.report.add``): found and readable, or what to fetch; None (no
    line) when none are configured."""
    report, config = ctx.report, image_judge_config(models=ctx.image_models)
    if config is None:
        return None
    problem = check_image_judges(config)
    found = f"models found: {config.text_image}" + "".join(f", {m}" for m in (config.likeness, config.preference) if m)
    report.add("image judges", problem is None, problem or found)
    face = face_check(config)
    if face is not None:
        report.add("face identity", face[0], face[1], warning=face[2])
    return problem is None


def face_check(config: ImageJudgeConfig) -> tuple[bool, str, bool] | None:
    """``doctor``'s (ok, message, warning) on the optional face-identity judge's pieces: the detector
    and ``BRACKET_JUDGE_FACE``'s model. A named face model that is missing fails; a missing detector
    without one only warns (the judge is off unless weighted); None with a stand-in backbone."""
    if config.module:
        return None
    problem = detector_problem()
    if config.face and problem is None:
        try:
            check_weights(config.face, FACE_TYPES, "BRACKET_JUDGE_FACE")
        except WeightsProblem as error:
            problem = str(error)
    if problem:
        return (False, problem, False) if config.face else \
            (True, f"optional judge (off unless face_identity weighs above 0): {problem}", True)
    model = config.face or "the likeness model on face crops"
    return True, f"OpenCV's Haar face detector found; face embeddings: {model}", False
