"""The Setup form's preset fields: a fixed set of slots that a preset switch fills in.

There are as many slots as the preset with the most fields has; each is a row with a text box,
a list (a field with choices, or a configured program the browser may not type) and the line
under the field (✓, ⚠, ℹ). A switch, Open, Clone and a page load set every slot in their own one
event (:func:`slot_updates`: label, help, value, which box shows, ``bk-field-<name>``), so no box is
drawn anew: a box drawn by ``gr.render`` fired its ``.change`` as it appeared (ten server events
after each switch to SDXL LoRA, seconds under load: issue 43 item 6).

One listener serves every box's ``.change`` (:func:`box_changed`): it compares what the boxes hold
with the fields the form last set (the ``fields`` state) and writes nothing but a state, so the
values a switch or a fill set change nothing and show nothing (Gradio shows a timer on a listener's
outputs while it runs, whatever its ``show_progress``); a person's edit becomes a new ``field_edit``
state, whose change runs :func:`on_edit`: the fields' lines, the pre-flight, the prompts and the plan
in one event. The boxes are not on ``.input``: Gradio 6's text box dispatches ``input`` with the
value before the last keystroke, and not at all for a value filled in at once (seen in Chromium).
"""

from __future__ import annotations

import time
from typing import Any

import gradio as gr

from bracket.app.field_slots import SLOTS, choices_of, field_help, preset_fields, shown_fields, shown_value
from bracket.app.forms import plan_text
from ui.setup_preset import field_lines, on_form

PARTS = ("row", "text", "choice", "message")


def slot_name(index: int, part: str) -> str:
    """The form's name of slot ``index``'s ``part`` (one of :data:`PARTS`)."""
    return f"field{index}_{part}"


#: every slot component's name, and the boxes'
SLOT_NAMES = tuple(slot_name(i, part) for i in range(SLOTS) for part in PARTS)
BOX_NAMES = tuple(slot_name(i, part) for i in range(SLOTS) for part in ("text", "choice"))
#: what :func:`box_changed` and :func:`on_edit` read, by name, and what :func:`on_edit` may show
BOX_INPUTS = ("preset_id", "fields", "field_edit", "form_token", *BOX_NAMES)
EDIT_INPUTS = ("preset_id", "fields", "field_edit", "prompts", "prompt_origin", "budget", "seeds", "confirm",
               "lr_bracket", "algorithm", "bounds", "steps", "warm_start_from", "halving", "sample_every")
EDIT_OUTPUTS = ("fields", "preflight", "prompts", "prompt_origin", "plan",
                *(slot_name(i, part) for i in range(SLOTS) for part in ("message", "choice")))


def slot_updates(preset_id: str, fields: dict[str, str], allow_custom: bool) -> dict[str, Any]:
    """Every slot's update for ``preset_id``'s form showing ``fields`` (as :func:`shown_fields` gives
    them), by name: each field of the preset in its slot, the slots after them hidden (their boxes
    keep their values: a hidden box is never read)."""
    specs = preset_fields(preset_id)
    lines = field_lines(preset_id, fields) if preset_id else {}
    updates: dict[str, Any] = {}
    for index in range(SLOTS):
        if index >= len(specs):
            updates.update({slot_name(index, "row"): gr.update(visible=False),
                            slot_name(index, "text"): gr.update(visible=False),
                            slot_name(index, "choice"): gr.update(visible=False), slot_name(index, "message"): ""})
            continue
        spec = specs[index]
        listed, value = choices_of(spec, allow_custom), fields.get(spec.name, "")
        common = {"label": spec.label, "info": field_help(spec, allow_custom), "elem_id": f"bk-field-{spec.name}"}
        updates[slot_name(index, "row")] = gr.update(visible=True)
        if listed is None:
            updates[slot_name(index, "text")] = gr.update(visible=True, value=value, **common)
            updates[slot_name(index, "choice")] = gr.update(visible=False)
        else:
            updates[slot_name(index, "text")] = gr.update(visible=False)
            updates[slot_name(index, "choice")] = gr.update(visible=True, choices=listed, value=value or None,
                                                            **common)
        updates[slot_name(index, "message")] = lines[spec.name]
    return updates


def read_slots(preset_id: str, boxes: dict[str, Any], allow_custom: bool) -> tuple[dict[str, str], dict[str, str]]:
    """(the fields of ``preset_id``'s form as its slots' boxes hold them, the lists that hold what they may
    not: by box name, what they show instead). A list takes only one of its entries — a program the
    browser may not type is the configured one, whatever is typed into its list (``shown_value``)."""
    fields, snap = {}, {}
    for index, spec in enumerate(preset_fields(preset_id)):
        part = "text" if choices_of(spec, allow_custom) is None else "choice"
        raw = boxes.get(slot_name(index, part))
        raw = "" if raw is None else str(raw)
        fields[spec.name] = raw if part == "text" else shown_value(spec, raw, allow_custom)
        if fields[spec.name] != raw:
            snap[slot_name(index, part)] = fields[spec.name]
    return fields, snap


def box_changed(allow_custom: bool, *, preset_id: str, fields: dict[str, str] | None,
                field_edit: dict[str, Any] | None = None, form_token: Any = None, **boxes: Any) -> dict[str, Any]:
    """After a box changed: nothing when the boxes hold what the form last set (``fields``: a switch's
    or a fill's own values), or the edit already on its way (``field_edit`` of this filling of the form,
    ``form_token``: a change event run again after the one that made it), or belong to another preset
    than the list shows (a switch on its way); else the fields as the boxes hold them, as a new
    ``field_edit`` (whose change runs :func:`on_edit`)."""
    if not preset_id or list(fields or {}) != _names(preset_id):
        return {}
    now, snap = read_slots(preset_id, boxes, allow_custom)
    made = {"fields": now, "snap": snap, "token": form_token}
    if (now == fields and not snap) or {k: (field_edit or {}).get(k) for k in made} == made:
        return {}
    return {"field_edit": {**made, "at": time.monotonic_ns()}}


def on_edit(*, preset_id: str, fields: dict[str, str] | None, field_edit: dict[str, Any] | None, prompts: str,
            prompt_origin: dict[str, Any] | None, budget: Any, seeds: Any, confirm: Any, lr_bracket: Any,
            algorithm: str, bounds: dict[str, Any] | None, steps: Any, warm_start_from: Any, halving: Any,
            sample_every: Any) -> dict[str, Any]:
    """What a person's edit of the fields (``field_edit``, from :func:`box_changed`) shows: every field's
    line, the fields, the pre-flight, the prompts (``ui.setup_preset.on_form``) and the plan, and a list
    that holds what it may not back to what it may; nothing for an edit of another preset's form or one
    already shown."""
    now = dict((field_edit or {}).get("fields") or {})
    if not preset_id or list(now) != _names(preset_id) or list(fields or {}) != _names(preset_id):
        return {}
    snaps = {name: gr.update(value=value or None) for name, value in ((field_edit or {}).get("snap") or {}).items()}
    changed = on_form(preset_id, fields or {}, now, prompts, prompt_origin)
    if not changed:
        return snaps
    index = {name: i for i, name in enumerate(_names(preset_id))}
    messages = {slot_name(index[name], "message"): text for name, text in changed.pop("messages").items()}
    plan = plan_text(budget, seeds, confirm, preset_id, lr_bracket, algorithm, bounds, now, steps, warm_start_from,
                     halving, sample_every)
    return {**changed, **messages, **snaps, "plan": plan}


def _names(preset_id: str) -> list[str]:
    return [spec.name for spec in preset_fields(preset_id)]


def build_slots(preset_id: str, allow_custom: bool) -> dict[str, Any]:
    """The slots' components by name (call inside a layout), showing ``preset_id``'s form."""
    first = slot_updates(preset_id, shown_fields(preset_id, {}, allow_custom), allow_custom) if preset_id else {}

    def props(name: str, **start: Any) -> dict[str, Any]:
        return {**start, **{k: v for k, v in dict(first.get(name) or {}).items() if k != "__type__"}}

    components: dict[str, Any] = {}
    for index in range(SLOTS):
        names = {part: slot_name(index, part) for part in PARTS}
        with gr.Row(equal_height=True, **props(names["row"], visible=False)) as row:
            text = gr.Textbox(scale=4, interactive=True, **props(names["text"], visible=False))
            # any value reaches the server (its own check is of the choices the slot was built with, not
            # those a switch gave it); read_slots takes only what the field's list offers
            choice = gr.Dropdown(scale=4, interactive=True, allow_custom_value=True,
                                 **props(names["choice"], visible=False, choices=[]))
            message = gr.Markdown(first.get(names["message"], ""), elem_classes=["bk-field-msg"])
        components.update({names["row"]: row, names["text"]: text, names["choice"]: choice,
                           names["message"]: message})
    return components
