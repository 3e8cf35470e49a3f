"""Held-out validation loss: which runs compute one, on what split, and how often.

Diffusion training loss is noisy by construction: every step draws its own timesteps and
noise, so the logged loss jumps by tens of percent from step to step, and two seeds of one
config end further apart than many config changes move them. A *validation* loss — the
same held-out images, at the same fixed timesteps, with the same noise, at every
evaluation — removes that sampling noise and shows over-fitting (it rises while the training
loss keeps falling), so it is the better basis for ranking configs and choosing a step.

sd-scripts' network trainers (``train_network.py`` and the ``sdxl_/sd3_/flux_train_network.py``
scripts built on it, at our pin) hold out ``--validation_split`` of each dataset (shuffled
with ``--validation_seed``; the same keys work in the dataset TOML), evaluate at four fixed
timesteps with the RNG reset to the validation seed, and log
``loss/validation/step_average`` every ``--validate_every_n_steps`` steps. Their full
fine-tune scripts and musubi-tuner (at our pin) have no validation; those presets keep the
training loss. ai-toolkit takes a list of validation images instead of a split: its adapter holds
the same share out itself (``bracket.trainer.ai_toolkit.validation``). Bracket's demo trainer
implements the same split rule and tag.

**When it is on.** By default when the trainer supports it and the dataset has at least
:data:`MIN_IMAGES` images. Below that, a 10 % split holds out one image or none
(sd-scripts rounds per subset), a loss over one image says more about that image than about
the config, and every image taken from a 10–20-image LoRA dataset is a real part of what
the LoRA learns from. The split is 10 % but at most :data:`MAX_HELD_OUT` images, because
each evaluation costs held-out images × 4 forward passes. The decision and the seed are made
once when a session is created and stored with it, so every run of a session (and a resumed
session) uses the same split.
"""

from __future__ import annotations

from dataclasses import dataclass

from bracket.trainer.sample_steps import SAMPLED_STEPS, sample_every

#: the tag sd-scripts' network trainers (and the demo trainer) log the validation loss under
VALIDATION_TAGS = ("loss/validation/step_average",)
#: a dataset needs at least this many images for the automatic validation split
MIN_IMAGES = 20
#: the automatic split holds out 10 % of the images ...
DEFAULT_SPLIT = 0.10
#: ... but at most this many (each evaluation costs held-out images × 4 forward passes)
MAX_HELD_OUT = 6
#: without sample steps to align with, a run is evaluated this many times (at its default sample steps)
DEFAULT_EVALUATIONS = SAMPLED_STEPS


@dataclass(frozen=True)
class ValidationPlan:
    """The held-out split of one session: share of the images and the shuffle seed."""

    split: float
    seed: int

    def every(self, max_steps: int, sample_every_n_steps: int | None = None) -> int:
        """Steps between evaluations: at the sample steps (``bracket.trainer.sample_steps``), so
        each sampled step has a validation loss — :data:`DEFAULT_EVALUATIONS` times per run
        unless an interval was asked for."""
        return sample_every(sample_every_n_steps, max_steps)


def automatic_split(images: int) -> float:
    """The split for a dataset of ``images`` images: 0 below :data:`MIN_IMAGES`, else 10 %
    capped at :data:`MAX_HELD_OUT` images."""
    if images < MIN_IMAGES:
        return 0.0
    return round(min(DEFAULT_SPLIT, MAX_HELD_OUT / images), 4)


def decide(requested: float | None, *, supported: bool, images: int | None, seed: int,
           trainer_name: str = "this trainer") -> tuple[float, str]:
    """(split to use, a note for the session) from the setting, the trainer and the dataset.

    ``requested`` None is automatic; 0 is off; a share is used as given (where supported).
    """
    if requested == 0:
        return 0.0, "Validation loss: off (switched off); scores use the training loss."
    if not supported:
        return 0.0, (f"Validation loss: not available — {trainer_name} has no held-out validation at our pin; "
                     "scores use the training loss.")
    if requested is None:
        split = automatic_split(images or 0)
        if not split:
            return 0.0, (f"Validation loss: off — the dataset has {images or 0} images, fewer than {MIN_IMAGES} "
                         "(too few to hold some out); scores use the training loss.")
    else:
        split = float(requested)
    held = f" (~{max(1, round(split * images))} of {images} images)" if images else ""
    return split, (f"Validation loss: on — {split:.0%} of the dataset held out{held}, seed {seed}, the same for "
                   "every run; the loss judge scores the validation loss.")
