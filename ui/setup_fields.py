"""The Setup form's preset fields: a fixed set of slots that a preset switch fills in.

There are as many slots as the preset with the most fields has; each is a row with a text box,
a list (a field with choices, or a configured program the browser may not type) and the line
under the field (✓, ⚠, ℹ). A switch, Open, Clone and a page load set every slot in their own one
event (:func:`slot_updates`: label, help, value, which box shows, ``bk-field-<name>``), so no box is
drawn anew: a box drawn by ``gr.render`` fired its ``.change`` as it appeared (ten server events
after each switch to SDXL LoRA, seconds under load: issue 43 item 6).

A person's edit is heard on the events only a person makes (:data:`EDIT_EVENTS`): a text box's
``blur`` and ``submit``, a list's ``input`` (Gradio 6.31 dispatches it once the list holds the picked
or typed value). Never on ``change``: the browser applies a switch's updates box by box and fires a
``change`` for each box whose value the switch changed, each carrying a half-switched form (twelve
server events after demo → SDXL LoRA, seconds of timers on the plan and pre-flight: issue 43
item 6); nor on a text box's ``input``, which Gradio 6.31 dispatches on ``keypress`` only (none for a
paste, a deletion or a value filled in at once). One listener serves them all
(:func:`on_edit`): nothing when the boxes hold what the form last checked (the ``fields`` state: a
``blur`` without an edit) or belong to another preset than the list shows; else the fields'
lines, the fields, the pre-flight, the prompts and the plan, in that one event.
"""

from __future__ import annotations

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
#: the events only a person makes, by box kind, on which :func:`on_edit` runs (``change`` fires for a
#: switch's own values too)
EDIT_EVENTS = {"text": ("blur", "submit"), "choice": ("input",)}
#: what :func:`on_edit` reads, by name, and what it may show
EDIT_INPUTS = ("preset_id", "fields", "prompts", "prompt_origin", "budget", "seeds", "confirm", "lr_bracket",
               "algorithm", "bounds", "steps", "warm_start_from", "halving", "sample_every", *BOX_NAMES)
EDIT_OUTPUTS = ("fields", "preflight", "prompts", "prompt_origin", "plan",
                *(slot_name(i, part) for i in range(SLOTS) for part in ("message", "choice")))


def edit_triggers(components: dict[str, Any]) -> list[Any]:
    """The person-only events (:data:`EDIT_EVENTS`) of every slot's boxes, for ``gr.on``."""
    return [getattr(components[slot_name(i, part)], event) for i in range(SLOTS)
            for part, events in EDIT_EVENTS.items() for event in events]


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


def on_edit(allow_custom: bool, *, preset_id: str, fields: dict[str, str] | None, prompts: str,
            prompt_origin: dict[str, Any] | None, budget: Any, seeds: Any, confirm: Any, lr_bracket: Any,
            algorithm: str, bounds: dict[str, Any] | None, steps: Any, warm_start_from: Any, halving: Any,
            sample_every: Any, **boxes: Any) -> dict[str, Any]:
    """What a person's edit of the field boxes shows: every field's line, the fields as the boxes hold
    them, the pre-flight (the dataset changed), the prompts (``ui.setup_preset.on_form``) and the plan,
    and a list that holds what it may not back to what it may; nothing when the boxes hold what the form
    last checked (``fields``) or the list shows another preset than ``fields`` are of (a switch on its way)."""
    if not preset_id or list(fields or {}) != _names(preset_id):
        return {}
    now, snap = read_slots(preset_id, boxes, allow_custom)
    snaps = {name: gr.update(value=value or None) for name, value in snap.items()}
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
