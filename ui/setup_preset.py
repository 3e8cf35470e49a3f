"""The preset part of the Setup tab: the preset list, a preset's notes, fields and their
checks, the dataset pre-flight line and the budget and steps the form starts from.

Plain functions of a preset id and the form's field values (no Blocks of their own):
``ui.setup_tab`` wires them to the form. ``loaded`` is the session the form was filled from (``fill_form``):
its values win over the preset's defaults when it is of the same preset.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from bracket.app.forms import default_budget
from bracket.app.prompt_field import prompt_help, prompt_label, proposal_source, proposed_prompts, sample_kind
from bracket.dataset.preflight import preflight_for_trainer
from bracket.errors import BracketError
from bracket.fields import merge_with_defaults
from bracket.registry import get_preset, presets_by_family
from bracket.session.search_settings import SearchSettings

DEFAULTS = SearchSettings()


def preset_choices() -> list[tuple[str, str]]:
    """(label, id) grouped by family: ``Family › Display name (LoRA)``."""
    return [(f"{family} › {p.display_name} ({p.training_type})", p.id)
            for family, presets in presets_by_family().items() for p in presets]


def field_defaults(preset_id: str) -> dict[str, str]:
    return {s.name: s.resolved_default() for s in get_preset(preset_id).fields} if preset_id else {}


def preset_notes(preset_id: str) -> str:
    if not preset_id:
        return ""
    preset = get_preset(preset_id)
    pre_cache = " · pre-caches latents once per search" if preset.needs_pre_cache else ""
    script = f" · trainer `{preset.trainer_script}`" if preset.trainer_script else ""
    return (f"**{preset.display_name}** — {preset.model_family}, {preset.training_type}{pre_cache}{script}"
            f"\n\n{preset.notes}")


def field_lines(preset_id: str, fields: dict[str, str]) -> dict[str, str]:
    """The line under each of ``preset_id``'s fields for the form's ``fields`` (:func:`field_message`)."""
    preset = get_preset(preset_id)
    return {spec.name: field_message(preset, spec, fields.get(spec.name, ""), fields) for spec in preset.fields}


def preflight_text(preset_id: str, fields: dict[str, str]) -> str:
    """The dataset pre-flight of the form's dataset field, in one line."""
    if not preset_id:
        return ""
    preset = get_preset(preset_id)
    dataset = (fields or {}).get("dataset", "").strip()
    if "dataset" not in {s.name for s in preset.fields}:
        return "This preset takes no image dataset folder."
    if not dataset:
        return "Dataset: not set yet."
    if preset.made_on_start_note(fields or {}):
        return ""  # the dataset field's own line says it is made when the search starts (ℹ), once
    try:
        trainer = preset.trainer_factory(merge_with_defaults(preset.fields, fields))
    except (BracketError, ValueError, TypeError) as error:
        return f"Dataset pre-flight not possible yet: {error}"
    report = preflight_for_trainer(trainer, fields)
    if report is None:
        return "This trainer reads its dataset itself; it is checked when the search starts."
    return ("✓ " if report.ok else "✗ ") + "Dataset pre-flight: " + report.summary()


def field_message(preset: Any, spec: Any, value: str, fields: dict[str, str]) -> str:
    """The line under a form field: ✓, ⚠ and what is wrong, or ℹ what Start will make of a
    missing value (the demo's default dataset on a fresh clone is a normal state, not an error)."""
    problem = preset.field_problem(spec, value, fields)
    if problem:
        made = preset.made_on_start_note({**fields, spec.name: value})
        about_this = made and made != preset.made_on_start_note({**fields, spec.name: ""})
        return f"ℹ {made[0].upper()}{made[1:]}." if about_this else f"⚠ {problem}"
    return "✓"


def search_defaults(preset_id: str) -> dict[str, int]:
    """Budget and steps the form starts from for ``preset_id``: its steps (the preset's own, else
    the engine's) and the smallest budget whose plan reaches TPE (``bracket.app.forms.default_budget``,
    as ``bracket run`` without ``--budget``)."""
    values = {"budget": DEFAULTS.budget, "steps": DEFAULTS.steps}
    if preset_id:
        values.update(dict(get_preset(preset_id).search_defaults))
        values["budget"] = default_budget(preset_id, steps=values["steps"])
    return values


def confirm_default(preset_id: str, loaded: dict[str, Any] | None = None) -> int:
    """The confirmation runs the form starts from: the automatic confirmation round of the budget it starts from
    (``bracket run``'s without ``--confirm``), written out, since a blank number box reads 0 (off)
    in the browser; a loaded session's own when it is of this preset."""
    values = loaded_values(loaded, preset_id)
    if values.get("confirm") is not None:
        return int(values["confirm"])
    budget = values.get("budget", search_defaults(preset_id)["budget"])
    return SearchSettings(budget=int(budget), seeds=int(values.get("seeds", DEFAULTS.seeds))).confirm_runs


def confirm_for_budget(budget: Any, seeds: Any) -> Any:
    """The automatic confirmation runs for a budget and seeds a person typed (the box follows the
    budget as it is typed, so a smaller budget never keeps a larger one's rung); unchanged while
    either box holds no usable number."""
    try:
        return SearchSettings(budget=int(budget), seeds=int(seeds)).confirm_runs
    except (TypeError, ValueError):
        return gr.skip()


def loaded_values(loaded: dict[str, Any] | None, preset_id: str) -> dict[str, Any]:
    """The session values the form was filled from, when they are of ``preset_id`` (else {})."""
    return loaded if loaded and loaded.get("preset_id") == preset_id else {}


def on_preset(preset_id: str, loaded: dict[str, Any] | None = None) -> tuple[str, dict[str, str], str, int, int]:
    """Notes, fields, pre-flight, budget and steps of ``preset_id``: its defaults, or the values
    of the session the form was filled from (``loaded``) when it is of this preset."""
    values = loaded_values(loaded, preset_id)
    fields = {**field_defaults(preset_id), **values.get("fields", {})}
    start = search_defaults(preset_id)
    budget, steps = values.get("budget", start["budget"]), values.get("steps", start["steps"])
    return preset_notes(preset_id), fields, preflight_text(preset_id, fields), budget, steps


def fields_fit(preset_id: str | None, fields: dict[str, str] | None) -> bool:
    """Whether ``fields`` can be ``preset_id``'s form (no field of another preset): a listener that
    reads the preset and the fields is skipped while they belong to two presets."""
    return bool(preset_id) and set(fields or {}) <= {s.name for s in get_preset(preset_id).fields}


#: the prompts box's origin (``gr.State``): the text the form last put in the box, the sentence
#: saying where it came from, and whether a changed dataset may replace it (a proposal) or not
#: (a loaded session's prompts)
NO_ORIGIN: dict[str, Any] = {"text": "", "source": "", "replace": True}


def prompts_for(preset_id: str, fields: dict[str, str] | None, current: str = "",
                loaded: dict[str, Any] | None = None, *, switched: bool = True,
                origin: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
    """(the prompt field's update, its new origin) for ``preset_id`` and these field values.

    The label and help follow what the preset's samples are (images, video frames, text answers)
    and the help says where the lines in the box came from. On a preset switch (``switched``) the
    box gets the prompts of the session the form was filled from when it is of this preset, else
    the proposal from this preset's own fields (``bracket.app.prompt_field``) — never what the
    previous preset put there. When a field changes, the box follows the new proposal while it
    holds what the form put there (``origin``) and that was a proposal, or is empty; the person's
    own lines and a loaded session's are kept."""
    kind = sample_kind(preset_id, fields)
    proposal = proposed_prompts(preset_id, fields)
    origin = {**NO_ORIGIN, **(origin or {})}
    session = loaded_values(loaded, preset_id)
    current = current or ""
    update: dict[str, Any] = {"label": prompt_label(kind)}
    if switched and session.get("prompts"):
        source = f"The prompts of the session **{session.get('source') or 'loaded'}**, as it ran; edit them freely."
        origin = {"text": session["prompts"], "source": source, "replace": False}
        update["value"] = session["prompts"]
    elif switched or not current.strip() or (current == origin["text"] and origin["replace"]):
        value = proposal.text if proposal is not None else ""
        origin = {"text": value, "source": proposal_source(proposal), "replace": True}
        update["value"] = value
    elif current == origin["text"]:  # a loaded session's prompts, as they were put in
        pass
    else:  # the person's own lines
        origin = {"text": current, "source": "Your own lines (kept when a field changes; empty the box for the "
                                             "ones proposed from the dataset).", "replace": False}
    update["info"] = prompt_help(kind, proposal, origin["source"])
    return gr.update(**update), origin


def on_form(preset_id: str, before: dict[str, str], fields: dict[str, str], prompts: str,
            origin: dict[str, Any] | None) -> dict[str, Any]:
    """What the form shows once ``preset_id``'s boxes hold ``fields`` (``before``: the fields the form
    last set), by name: nothing when no field changed (the values a switch or a fill put in the boxes);
    else every field's line (``messages``, by field: one field's check may read another), the fields —
    exactly what the boxes show, never merged into an earlier state —, the pre-flight when the dataset
    changed, and the prompt field with its origin as :func:`prompts_for` says (in this one event: no
    second event reads the fields later)."""
    changed = {name for name, value in fields.items() if value != (before or {}).get(name)}
    if not changed:
        return {}
    messages = field_lines(preset_id, fields)
    prompt_update, origin = prompts_for(preset_id, fields, prompts, switched=False, origin=origin)
    shown = {"messages": messages, "fields": fields, "prompts": prompt_update, "prompt_origin": origin}
    return {**shown, "preflight": preflight_text(preset_id, fields)} if "dataset" in changed else shown
