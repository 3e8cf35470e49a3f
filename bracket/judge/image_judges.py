"""The image judges' scores: likeness, prompt-following and image quality, from raw figures.

The figures come from the image-judge worker (``bracket.judge.image_worker``), which looks at
every sample image of a run; the session keeps them per image and per step in the run's
``judges["image"]`` (``bracket.session.scoring.image_judges``). Raw figures are **higher =
better**, on these scales (:data:`SCALES`):

* ``likeness`` (fidelity) -- mean cosine similarity, -1..1, of the image embeddings (DINOv2,
  or the text-image model's image tower) of the *in-distribution* samples to the reference
  images;
* ``prompt_following`` (flexibility) -- mean text-image cosine similarity (CLIP or SigLIP) of
  the *held-out* samples to their prompts, less the base model's (the step-0 samples) where the
  trainer rendered those;
* ``image_quality`` -- the CLIP-IQA figure, 0..1: the share the text-image model gives "Good
  photo." against "Bad photo." (antonym prompts), averaged over every sample;
* ``face_identity`` (optional, weight 0 by default) -- mean cosine, -1..1, of the embedding of the
  largest face in each *in-distribution* sample to the reference images' faces
  (``bracket.judge.faces``), over the samples where a face was found.

Like the loss judge, likeness, prompt-following and face identity are **normalised across the runs they
compare** (best 0, worst 1; differences under :data:`MIN_SPREAD` count as noise and stay near
0.5): a cosine of 0.71 means little on its own, a run's place among the others does. Image
quality is absolute (``1 - figure``), as a rating is. Pure functions, as every judge.
"""

from __future__ import annotations

from collections.abc import Mapping

from bracket.judge.base import JudgeResult, clamp01, normalise_lower_better

#: the three image judges (names in ``bracket.judge.combine.JUDGE_NAMES``)
IMAGE_JUDGES = ("likeness", "prompt_following", "image_quality", "face_identity")
#: the optional ones (weight 0 by default): their figures exist only where they are on
OPTIONAL = ("face_identity",)
#: what each raw figure is, for people and the stored record
SCALES = {
    "likeness": "cosine -1..1, higher is better (in-distribution samples vs the reference images)",
    "prompt_following": "text-image cosine -1..1, higher is better (held-out samples vs their prompts, "
                        "less the base model's step-0 figure where known)",
    "image_quality": "CLIP-IQA 0..1, higher is better (no reference)",
    "face_identity": "cosine -1..1, higher is better (largest face of in-distribution samples vs the reference "
                     "images' faces; samples without a face left out)",
}
#: differences smaller than this (in the raw figure's units) are noise: scores stay near 0.5
MIN_SPREAD = {"likeness": 0.01, "prompt_following": 0.005, "image_quality": 0.0, "face_identity": 0.01}
#: why a run has no figure of a judge
NO_DATA = {"likeness": "no in-distribution sample image was judged",
           "prompt_following": "no held-out sample image was judged",
           "face_identity": "no face was found in an in-distribution sample or in the reference images "
                            "(or the judge is off)"}
#: the judges scored relative to the other runs (the rest are absolute)
RELATIVE = ("likeness", "prompt_following", "face_identity")


def score_figures(name: str, figures: Mapping[int, float | None]) -> dict[int, JudgeResult]:
    """Judge ``name``'s results for runs (or steps) keyed by id, from their raw figures (None:
    no sample of that kind was judged, so the judge has no data there)."""
    known = {key: float(value) for key, value in figures.items() if value is not None}
    if name in RELATIVE:
        scores = normalise_lower_better({key: -value for key, value in known.items()},
                                        min_spread=MIN_SPREAD[name])
    else:
        scores = {key: clamp01(1.0 - value) for key, value in known.items()}
    out = {key: JudgeResult.scored(scores[key], {"raw": round(known[key], 5), "scale": SCALES[name]})
           for key in known}
    for key, value in figures.items():
        if value is None:
            out[key] = JudgeResult.no_data(NO_DATA.get(name, "no sample image was judged"))
    return out


def step_scores(name: str, figures: Mapping[int, float]) -> dict[int, float]:
    """Judge ``name``'s per-step score (lower better) from its raw figures per step: the steps are
    ranked among themselves as runs are (relative judges), or scored absolutely."""
    return {step: result.score for step, result in score_figures(name, dict(figures)).items()
            if result.score is not None}
