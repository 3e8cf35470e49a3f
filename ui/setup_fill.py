"""Filling the Setup form: what a preset switch brings in (:func:`switch_preset`: everything that
depends on the preset, from that preset's own defaults or the loaded session, in one event), and
the form filled from a session (Open, Resume, a page load: :func:`reflect_open`; Clone settings:
:func:`clone_settings`), with the texts they show — the wall-time estimate, the past sessions to
warm-start from, the search-space table. ``ui.setup_tab`` wires them to the form by name
(``ui.setup_form``)."""

from __future__ import annotations

import time
from typing import Any

import gradio as gr

from bracket.app.field_slots import shown_fields
from bracket.app.form_values import IMAGE_MODEL_BOXES, weight_boxes
from bracket.app.forms import plan_text
from bracket.app.manager import SessionManager
from bracket.app.programs import is_configured_judge
from bracket.app.prompt_field import validation_note
from bracket.errors import BracketError
from ui.render import format_duration
from ui.setup_fields import slot_updates
from ui.setup_preset import DEFAULTS, confirm_default, loaded_values, on_preset, prompts_for
from ui.setup_space import space_preview


def estimate_text(manager: SessionManager, budget: Any, preset_id: str | None = None, steps: Any = None,
                  fields: dict[str, str] | None = None) -> str:
    """The wall time of ``budget`` runs of the form's preset, steps and resolution, from finished runs
    of the same (``bracket.app.estimate``); "unknown" until there is one."""
    try:
        runs = int(budget)
        whole = int(steps) if preset_id else None
    except (TypeError, ValueError):
        return ""
    estimate = manager.reading.estimate_seconds(runs, preset_id or None, whole, fields)
    if estimate is None:
        return "Wall-time estimate: unknown until the first run of this preset at these steps and resolution."
    where = f"{estimate.sessions} session{'s' if estimate.sessions > 1 else ''}"
    return (f"Estimated wall time ≈ **{format_duration(estimate.seconds)}** (median of {estimate.runs} finished "
            f"run{'s' if estimate.runs > 1 else ''} of this preset, steps and resolution ({where}) × {runs} runs).")


def past_picked(manager: SessionManager, preset_id: str | None,
                loaded: dict[str, Any] | None = None) -> tuple[list[tuple[str, str]], list[str]]:
    """(earlier sessions of this preset as (label, folder), the folders picked: those of the session
    the form was filled from)."""
    found = manager.reading.past_sessions(preset_id)
    choices = [(s.label, str(s.folder)) for s in found]
    offered = {folder for _, folder in choices}
    return choices, [f for f in loaded_values(loaded, preset_id or "").get("warm_start_from", []) if f in offered]


def past_choices(manager: SessionManager, preset_id: str | None, loaded: dict[str, Any] | None = None) -> Any:
    """Earlier sessions of this preset, with their dates, run counts and winners, to warm-start from
    (picked: those of the session the form was filled from)."""
    choices, picked = past_picked(manager, preset_id, loaded)
    return gr.Dropdown(choices=choices, value=picked or None)


def space_for_preset(preset_id: str, fields: dict[str, str], steps: Any, loaded: dict[str, Any] | None
                     ) -> tuple[Any, dict[str, Any], str]:
    """(table, bounds, message) for a newly picked preset: the bounds of the session the form
    was filled from when it is of this preset, else none (another preset's bounds do not fit)."""
    bounds = dict(loaded_values(loaded, preset_id).get("bounds") or {})
    frame, message = space_preview(preset_id, fields, steps, bounds)
    return frame, bounds, message


def shown_judge_url(manager: SessionManager, url: str) -> str:
    """A loaded session's judge URL as the form may show it (blank when the form may not pick it)."""
    if manager.allow_custom_executables or is_configured_judge(url):
        return url or ""
    return ""


def switch_preset(manager: SessionManager, preset_id: str, loaded: dict[str, Any] | None, seeds: Any = None,
                  lr_bracket: Any = True, algorithm: str = "tpe", halving: Any = False) -> dict[str, Any]:
    """Everything of the form that depends on the preset (:data:`SWITCHED`: the field slots among it), computed from
    ``preset_id`` alone — its defaults, or the values of the session the form was filled from
    (``loaded``) when it is of this preset — in one event: never from the fields or the prompts
    the previous preset left in the form (an event reading them while they still hold the demo's
    once proposed the demo dataset's captions for SDXL)."""
    if not preset_id:
        return {}
    values = loaded_values(loaded, preset_id)
    notes, fields, preflight, budget, steps = on_preset(preset_id, loaded)
    fields = shown_fields(preset_id, fields, manager.allow_custom_executables)  # the fields as the boxes show them
    confirm = confirm_default(preset_id, loaded)
    table, bounds, space_message = space_for_preset(preset_id, fields, steps, loaded)
    prompts, origin = prompts_for(preset_id, fields, "", loaded)
    past, picked = past_picked(manager, preset_id, loaded)
    seeds = values.get("seeds", seeds if seeds not in (None, "") else DEFAULTS.seeds)
    plan = plan_text(budget, seeds, confirm, preset_id, values.get("lr_bracket", lr_bracket),
                     values.get("algorithm", algorithm), bounds, fields, steps, picked,
                     values.get("halving", halving))
    return {"fields": fields, "notes": notes, "preflight": preflight, "budget": budget, "steps": steps,
            "confirm": confirm, "validation": gr.update(info=validation_note(preset_id)), "prompts": prompts,
            "prompt_origin": origin, "space": table, "bounds": bounds, "space_message": space_message, "plan": plan,
            "estimate": estimate_text(manager, budget, preset_id, steps, fields),
            "warm_start_from": gr.Dropdown(choices=past, value=picked or None),
            **slot_updates(preset_id, fields, manager.allow_custom_executables), "form_token": time.monotonic_ns()}


def fill_form(manager: SessionManager, values: dict[str, Any], message: str) -> dict[str, Any]:
    """The form's values by name (:data:`FILLED`) from session ``values`` (``bracket.app.form_values``)."""
    loaded = dict(values)
    preset_id = values["preset_id"]
    switched = switch_preset(manager, preset_id, loaded)
    kept = ("budget", "seeds", "steps", "sample_every", "algorithm", "lr_bracket", "confirm", "halving", "vlm_model",
            *IMAGE_MODEL_BOXES)
    return {**switched, "preset_id": preset_id, "loaded": loaded, **{key: values[key] for key in kept},
            "validation": gr.update(value=values["validation"], info=validation_note(preset_id)),
            "vlm_base_url": shown_judge_url(manager, values["vlm_base_url"]), **weight_boxes(values["weights"]),
            "name": "", "form_message": message}


def reflect_open(manager: SessionManager) -> dict[str, Any]:
    """The form filled with the open session's settings (nothing changes when none is open)."""
    if manager.session is None:
        return {}
    values = manager.reading.setup_values()
    return fill_form(manager, values, f"The form shows the settings of **{values['source']}** (the open session). "
                                      "*Start search* starts a new session with them; change what you want first.")


def clone_settings(manager: SessionManager, folder: str | None) -> dict[str, Any]:
    """The form filled with the picked past session's settings, to start a new session from them."""
    if not folder:
        return {"form_message": "⚠ Pick a past session from the list first, then press Clone settings."}
    try:
        values = manager.reading.setup_values(folder)
    except (BracketError, ValueError, TypeError, KeyError) as error:  # a damaged session says why
        return {"form_message": f"⚠ {error}"}
    return fill_form(manager, values, f"Cloned the settings of **{values['source']}**: name the new session "
                                      "(optional), change what you want, press *Start search*.")


