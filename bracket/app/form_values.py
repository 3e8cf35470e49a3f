"""A session's settings as Setup-form values: the form reflects the open session, and
"clone settings" starts a new session from an old one.

:func:`form_values` is the inverse of ``bracket.app.forms.settings_from_form``: what a
person would have to type into the Setup tab to get ``session``'s preset, fields and
settings again. Feeding the values back through ``settings_from_form`` gives the same
search (tested), so a clone is the same search under a new name. The bounds (learning
rate, batch sizes, ``--bound``) fill the search-space table (``bracket.app.space_editor``).
The VLM API key is never stored, so it is never filled in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bracket import settings as app_settings
from bracket.judge.combine import DEFAULT_WEIGHTS, JUDGE_NAMES
from bracket.session import SearchSettings
from bracket.session.scoring import effective_weights
from bracket.session.scoring.image_config import MODEL_SETTINGS

#: the Setup form's image-judge model boxes (``judge_text_image``…), one per ``SearchSettings.image_models`` name
IMAGE_MODEL_BOXES = tuple(f"judge_{name}" for name in MODEL_SETTINGS)


def weight_name(judge: str) -> str:
    """The Setup form's name of judge ``judge``'s weight box (``weight_loss``): a form value by name."""
    return f"weight_{judge}"


#: the Setup form's weight boxes: form name → (judge, default weight), in the judges' order
WEIGHT_BOXES: dict[str, tuple[str, float]] = {weight_name(judge): (judge, float(DEFAULT_WEIGHTS.get(judge, 0.0)))
                                              for judge in JUDGE_NAMES}


def image_model_defaults() -> dict[str, tuple[str, str]]:
    """Each image-judge model box (:data:`IMAGE_MODEL_BOXES`) → (its ``.env`` setting, what ``.env``
    gives it): what a blank box means."""
    return {f"judge_{name}": (env, app_settings.env(env)) for name, (env, _, _) in MODEL_SETTINGS.items()}


def form_weights(values: Mapping[str, Any]) -> dict[str, Any]:
    """Judge → weight from the weight boxes in ``values`` (form name → value; a box not given:
    its default). A ``weight_…`` name of no judge is a bug: ``TypeError``."""
    unknown = sorted(name for name in values if name not in WEIGHT_BOXES)
    if unknown:
        raise TypeError(f"the Setup form has no weight boxes {unknown}")
    return {judge: values.get(name, default) for name, (judge, default) in WEIGHT_BOXES.items()}


def weight_boxes(weights: Mapping[str, float]) -> dict[str, float]:
    """Form name → value of every weight box for judge → weight ``weights`` (0 for a judge not in it)."""
    return {name: float(weights.get(judge, 0.0)) for name, (judge, _) in WEIGHT_BOXES.items()}


def settings_values(settings: SearchSettings) -> dict[str, Any]:
    """The search part of the form for ``settings`` (keys are ``settings_from_form``'s)."""
    laid = effective_weights(settings.weights)
    weights = {name: float(laid.get(name, 0.0)) for name in JUDGE_NAMES}
    return {
        "budget": settings.budget, "steps": settings.steps, "seeds": settings.seeds,
        "prompts": settings.sample_prompts, "sample_every": settings.sample_every_n_steps or 0,
        "algorithm": settings.algorithm, "bounds": dict(settings.bounds or {}), "weights": weights,
        "vlm_base_url": str((settings.vlm or {}).get("base_url", "")), "vlm_model": str((settings.vlm or {}).get(
            "model", "")), "lr_bracket": bool(settings.lr_bracket), "warm_start_from": list(settings.warm_start_from),
        "confirm": settings.confirm, "validation": settings.validation_split != 0.0,
        "halving": settings.halving is not None,
        **{f"judge_{name}": str((settings.image_models or {}).get(name, "")) for name in MODEL_SETTINGS},
    }


def form_values(preset_id: str, fields: Mapping[str, str], settings: SearchSettings, name: str = "") -> dict[str, Any]:
    """Everything the Setup tab shows for a session: preset, fields, the search settings and
    the source session's ``name`` (the form's name box stays empty: a new session gets a new one)."""
    return {"preset_id": preset_id, "fields": dict(fields), "source": name, **settings_values(settings)}


def session_form_values(session: Any) -> dict[str, Any]:
    """:func:`form_values` of an open ``Session``."""
    return form_values(session.parts.preset.id, session.parts.fields, session.settings, session.name)
