"""Setup tab: pick a preset, fill in its fields, set the search, start it — or resume one.

The preset's form is its ``FieldSpec`` list in fixed field slots a preset switch fills in
(``ui.setup_fields``); each field is
checked as it changes (``ModelPreset.field_problem``: the field's own check, and a trainer folder
must hold the scripts the preset runs) with the message beside
it, and the dataset field runs the dataset pre-flight (the preset's functions:
``ui.setup_preset``). The search settings become a ``SearchSettings`` through
``bracket.app.forms``; the budget box shows the plan (``= N configs × K seeds``).
Everything is checked by the engine before anything starts.

The search-space table shows every knob of the preset — searched or fixed, its range or
choices — before Start, and is where the search's bounds are set: its min/max, choices and
lock cells go through the one bounds parser of the CLI (``ui.setup_space``,
``bracket.app.space_editor``). The form reflects the open session (after
a reload, in a second browser tab, after Open or Resume: ``bracket.app.form_values``),
and "Clone settings" fills it from the picked past session, so Start makes a new session
with the same search.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import gradio as gr

from bracket.app.field_slots import shown_fields
from bracket.app.form_values import IMAGE_MODEL_BOXES, WEIGHT_BOXES, form_weights
from bracket.app.forms import plan_text, settings_from_form
from bracket.app.manager import SessionManager
from bracket.app.programs import configured_judge_url
from bracket.app.prompt_field import validation_note
from bracket.app.space_editor import table_bounds
from bracket.errors import BracketError
from bracket.registry import get_preset
from ui.common import PRIVATE, QUIET, inline_errors
from ui.search_tab import left_text, resumed_text, spent_text
from ui.setup_fields import (
    BOX_NAMES,
    EDIT_INPUTS,
    EDIT_OUTPUTS,
    SLOT_NAMES,
    build_slots,
    edit_triggers,
    on_edit,
    read_slots,
    slot_updates,
)
from ui.setup_fill import (
    clone_settings,
    estimate_text,
    past_choices,
    reflect_open,
    switch_preset,
)
from ui.setup_form import SetupForm
from ui.setup_judges import image_model_boxes
from ui.setup_preset import (
    DEFAULTS,
    confirm_default,
    confirm_for_budget,
    field_defaults,
    fields_fit,
    on_preset,
    preset_choices,
    prompts_for,
    search_defaults,
)
from ui.setup_space import build_table, space_edit, space_preview, table_records


def session_choices(manager: SessionManager) -> list[tuple[str, str]]:
    return [(info.label, str(info.folder)) for info in manager.list_sessions()]


def refresh_sessions(manager: SessionManager) -> Any:
    choices = session_choices(manager)
    return gr.Dropdown(choices=choices, value=choices[0][1] if choices else None)


#: what the halving switch says (docs/SEARCH.md, docs/BENCHMARKS.md)
HALVING_INFO = ("each config trains to 1/3 of the steps and pauses; the top third resume to full length. "
                "Saves GPU time where the trainer logs a validation loss; off: a full run per config")
def budget_label(halving: Any) -> Any:
    """The budget box's label: training runs, or full runs with successive halving."""
    return "Budget (full runs: halving)" if halving else "Budget (training runs)"


#: the form's values Start reads, by name: :func:`start_search`'s keyword arguments
START_INPUTS = ("preset_id", "fields", "budget", "steps", "seeds", "prompts", "sample_every", "algorithm", "space",
                *WEIGHT_BOXES, "vlm_base_url", "vlm_model", "vlm_api_key", *IMAGE_MODEL_BOXES, "name",
                "lr_bracket", "warm_start_from", "confirm", "validation", "halving", *BOX_NAMES)
#: what Open, Resume, Clone and a page load fill in, by name: the keys :func:`fill_form` returns
FILLED = (*SLOT_NAMES, "preset_id", "loaded", "fields", "notes", "preflight", "budget", "seeds", "steps",
          "sample_every", "algorithm", "lr_bracket", "confirm", "validation", "halving", "prompts", "prompt_origin",
          "space", "bounds", "space_message", "plan", "estimate", "vlm_base_url", "vlm_model", *WEIGHT_BOXES,
          *IMAGE_MODEL_BOXES,
          "warm_start_from", "name", "form_message")
#: what a preset switch fills in (:func:`switch_preset`): everything of the form that depends on the preset
SWITCHED = (*SLOT_NAMES, "fields", "notes", "preflight", "budget", "steps", "confirm", "validation",
            "prompts", "prompt_origin", "space", "bounds", "space_message", "plan", "estimate", "warm_start_from")
#: what the browser blanks the moment the preset changes, before the server's answer (no other
#: preset's text is shown meanwhile): the outputs of :data:`BLANK_JS`, in order, then Start's last
#: answer (a refusal in the previous preset's words)
BLANKED = ("notes", "preflight", "prompts", "plan", "estimate", "space_message")
BLANK_JS = ("() => { document.body.classList.add('bk-switching'); return "
            + json.dumps([""] * (len(BLANKED) + 1)) + "; }")
# the field slots and the prompts' help (it named the previous preset's source) stay out of sight
# (CSS ``body.bk-switching``) until the switch has filled them in: hidden, not emptied, since a help
# the switch leaves as it was (FLUX.1 LoRA → SDXL LoRA) is not sent again
SHOW_FIELDS_JS = "() => { document.body.classList.remove('bk-switching'); }"
#: one ordered path for everything that fills the form from a preset or a session: the page's load
#: chain, a preset switch, Open, Resume and Clone share one queue of one, so the server answers them
#: in the order the page sent them — a load sent before a person's switch is answered before the
#: switch, never after it (two queues answered a slow load last: the default preset's notes and
#: fields over the SDXL LoRA the person had picked meanwhile)
FORM_ORDER: dict[str, Any] = {"concurrency_id": "setup-form", "concurrency_limit": 1}
#: a person's pick in the preset list (its ``input``: never a value the app sets) marks the page,
#: and the load chain's step that shows the open session then leaves the form to that pick
#: (:func:`reflect_on_load` gets no preset)
PICKED_JS = "() => { window.bkPicked = true; }"
UNLESS_PICKED_JS = "(preset) => window.bkPicked ? null : preset"



def judge_url_box(manager: SessionManager) -> Any:
    """The judge server URL: typed only with ``--allow-custom-executables``; otherwise none or
    the ``BRACKET_VLM_BASE_URL`` of ``.env`` (the engine refuses any other, whatever is sent)."""
    label, info = "Judge model server URL (OpenAI-compatible, optional)", \
        "VLM judge of image/video samples; LLM-as-judge of LLM answers"
    if manager.allow_custom_executables:
        return gr.Textbox("", label=label, info=info)
    configured = configured_judge_url()
    return gr.Dropdown(["", configured] if configured else [""], value="", label=label,
                       info=f"{info}; set BRACKET_VLM_BASE_URL in .env (`--allow-custom-executables` lets the "
                            "form type another)", elem_id="bk-judge-url")


@inline_errors(4)
def start_search(manager: SessionManager, *, preset_id: str, fields: dict[str, str], budget: Any, steps: Any,
                 seeds: Any, prompts: str = "", sample_every: Any = None, algorithm: str = "tpe", space: Any = None,
                 vlm_base_url: str = "", vlm_model: str = "", vlm_api_key: str = "", name: str = "",
                 lr_bracket: Any = True, warm_start_from: Any = None, confirm: Any = None, validation: Any = True,
                 halving: Any = False, judge_text_image: str = "", judge_likeness: str = "",
                 judge_preference: str = "", **weights: Any) -> tuple[str, Any, Any, str]:
    """Validate the form, create the session and start it; then show the Search tab (the
    message goes to Setup's line and to the Search tab's).

    Every value comes by name (:data:`START_INPUTS`; ``weights``: ``weight_<judge>``, each judge's
    box, the default weight for one not given). ``space`` is the search-space table as the person
    left it: its cells become the bounds through the one bounds parser, so a bad cell refuses
    the start with the CLI's message. The fields are what the field boxes show (the slots, when
    given): an edit made while the page was still filling the form never reached ``fields``."""
    boxes = {name: weights.pop(name) for name in list(weights) if name in BOX_NAMES}
    if preset_id and boxes:
        fields = read_slots(preset_id, boxes, manager.allow_custom_executables)[0]
    weights = form_weights(weights)  # judge → weight; a name of no weight box is refused (TypeError)
    if not preset_id:
        raise BracketError("Pick a preset first.")
    try:
        whole = int(steps)
    except (TypeError, ValueError):
        whole = None  # settings_from_form says what is wrong with the steps
    bounds = table_bounds(preset_id, fields, table_records(space), steps=whole,
                          warmup_share=DEFAULTS.warmup_share)
    settings = settings_from_form(
        budget=budget, steps=steps, seeds=seeds, prompts=prompts, sample_every=sample_every, algorithm=algorithm,
        bounds=bounds, weights=weights, vlm_base_url=vlm_base_url, vlm_model=vlm_model, vlm_api_key=vlm_api_key,
        lr_bracket=bool(lr_bracket), warm_start_from=list(warm_start_from or []), confirm=confirm,
        validation=bool(validation), halving=bool(halving), judge_text_image=judge_text_image or "",
        judge_likeness=judge_likeness or "", judge_preference=judge_preference or "")
    known = {s.name for s in get_preset(preset_id).fields}
    session = manager.start_new(preset_id, {k: v for k, v in (fields or {}).items() if k in known}, settings,
                                name=(name or "").strip() or None)
    message = f"Started **{session.name}**: {session.plan_text()}."  # as created: what its trainer costs
    return message, gr.Tabs(selected="search"), refresh_sessions(manager), message


@inline_errors(3)
def open_session(manager: SessionManager, folder: str | None) -> tuple[str, Any, str]:
    if not folder:
        raise BracketError("Pick a past session from the list first.")
    session = manager.open(folder)
    if session.budget_spent():  # a finished search has nothing to resume
        message = (f"Opened **{session.name}**: its whole budget is trained ({spent_text(manager)}). "
                   "Compare and Results show it; **+N runs** (Results tab) or finals give it more.")
    else:  # what is left, in the Search tab's words
        message = f"Opened **{session.name}** (not running). Resume it to continue: {left_text(session)}."
    return message, gr.Tabs(selected="search"), message


@inline_errors(3)
def resume_session(manager: SessionManager, folder: str | None) -> tuple[str, Any, str]:
    if not folder:
        raise BracketError("Pick a past session from the list first.")
    session = manager.resume(folder)
    message = resumed_text(session, spent_text(manager))
    return message, gr.Tabs(selected="search"), message


def plan_if_fit(plan: Any, *values: Any) -> Any:
    """``plan(*values)`` (the plan line, from :data:`plan_inputs` in ``build``), unchanged while the
    fields are not the preset's (a stale event between two presets' states)."""
    preset_id, fields = values[3], values[7]
    return plan(*values) if not preset_id or fields_fit(preset_id, fields) else gr.skip()


def build(manager: SessionManager, tabs: gr.Tabs, control_md: gr.Markdown) -> dict[str, Any]:
    """The Setup tab's components and listeners (call inside ``gr.Tab``)."""
    choices = preset_choices()
    allow_custom = manager.allow_custom_executables
    fields_state = gr.State(shown_fields(choices[0][1], {}, manager.allow_custom_executables) if choices else {})
    with gr.Row():
        with gr.Column(scale=3):
            preset_dd = gr.Dropdown(choices=choices, value=choices[0][1] if choices else None, label="Preset",
                                    info="Model family › preset (training type)", elem_id="bk-preset")
            notes_md = gr.Markdown(elem_id="bk-notes")
        with gr.Column(scale=2):
            sessions_dd = gr.Dropdown(choices=[], label="Past sessions", value=None, elem_id="bk-sessions")
            with gr.Row():
                refresh_btn = gr.Button("Refresh list", size="sm")
                open_btn = gr.Button("Open", size="sm")
                resume_btn = gr.Button("Resume", size="sm", variant="secondary")
                clone_btn = gr.Button("Clone settings", size="sm", elem_id="bk-clone")
    form_md = gr.Markdown(elem_id="bk-form-source")
    loaded_state = gr.State({})
    gr.Markdown("### Preset fields")
    preflight_md = gr.Markdown(elem_id="bk-preflight", render=False)

    with gr.Column(elem_id="bk-fields"):
        slots = build_slots(preset_dd.value, manager.allow_custom_executables)
    preflight_md.render()
    gr.Markdown("### Search")
    with gr.Row():
        first = search_defaults(preset_dd.value)
        budget = gr.Number(first["budget"], label=budget_label(False), precision=0,
                           elem_id="bk-budget")
        seeds = gr.Number(DEFAULTS.seeds, label="Seeds per config", precision=0, elem_id="bk-seeds")
        steps = gr.Number(first["steps"], label="Steps per trial", precision=0, elem_id="bk-steps")
        sample_every = gr.Number(0, label="Sample every N steps (0: every steps/5, video the last step; "
                                          "with halving, each rung)", precision=0)
        algorithm = gr.Radio(["tpe", "random"], value=DEFAULTS.algorithm, label="Search algorithm")
        lr_bracket = gr.Checkbox(DEFAULTS.lr_bracket, label="Learning-rate bracket",
                                 info="after the warm start, its best config at ÷3.2 and ×3.2 the learning rate",
                                 elem_id="bk-lr-bracket")
    with gr.Row():
        confirm = gr.Number(confirm_default(preset_dd.value),
                            label="Confirmation runs (blank: a quarter of the budget from 8 configs on; 0: off)",
                            precision=0, elem_id="bk-confirm",
                            info="the top configs re-run with fresh seeds, inside the budget")
        validation = gr.Checkbox(True, label="Validation loss where the trainer has it",
                                 info=validation_note(preset_dd.value), elem_id="bk-validation")
        halving = gr.Checkbox(DEFAULTS.halving is not None, label="Successive halving (budget in full runs)",
                              info=HALVING_INFO, elem_id="bk-halving")
    plan_md = gr.Markdown(plan_text(first["budget"], DEFAULTS.seeds, None, preset_dd.value), elem_id="bk-plan")
    estimate_md = gr.Markdown(elem_id="bk-estimate")
    first_prompts, first_origin = prompts_for(preset_dd.value, field_defaults(preset_dd.value))
    prompts = gr.Textbox(lines=4, elem_id="bk-prompts",
                         **{k: v for k, v in first_prompts.items() if k in ("value", "label", "info")})
    prompt_origin = gr.State(first_origin)
    with gr.Accordion("Search space: what the search varies (edit the cells to narrow or lock a knob)", open=True):
        space_md, space_df, bounds_state = build_table()
    with gr.Accordion("Score weights and judges", open=False):
        with gr.Row():
            weights = {name: gr.Number(default, label=f"weight: {judge}")
                       for name, (judge, default) in WEIGHT_BOXES.items()}
        with gr.Row():
            vlm_url = judge_url_box(manager)
            vlm_model = gr.Textbox("", label="Judge model")
            vlm_key = gr.Textbox("", label="Judge API key (not stored)", type="password")
        image_models = image_model_boxes()
    warm_from = gr.Dropdown([], value=None, multiselect=True, label="Warm start from past sessions (optional)",
                            info="their two best configs each join the warm start after the baseline",
                            elem_id="bk-warm-from")
    with gr.Row():
        name = gr.Textbox("", label="Session name (optional)", scale=3)
        start_btn = gr.Button("Start search", variant="primary", scale=1, elem_id="bk-start")
    start_md = gr.Markdown(elem_id="bk-start-status")

    form = SetupForm(preset_id=preset_dd, loaded=loaded_state, fields=fields_state, notes=notes_md,
                     preflight=preflight_md, budget=budget, seeds=seeds, steps=steps, sample_every=sample_every,
                     algorithm=algorithm, lr_bracket=lr_bracket, confirm=confirm, validation=validation,
                     halving=halving, prompts=prompts, prompt_origin=prompt_origin, space=space_df, bounds=bounds_state,
                     space_message=space_md, plan=plan_md, estimate=estimate_md,
                     vlm_base_url=vlm_url, vlm_model=vlm_model, vlm_api_key=vlm_key,
                     **weights, **image_models,
                     warm_start_from=warm_from, name=name, form_message=form_md, **slots)
    # a preset switch: the browser blanks the previous preset's text at once, then one event fills in
    # everything that depends on the preset (its field slots among it): no chain of events, each
    # reading what the one before left in the form (issue 43: 19–48 s under load, the demo's prompts
    # proposed for SDXL)
    preset_dd.change(None, None, [*form.outputs(BLANKED), start_md], js=BLANK_JS, **QUIET)
    preset_dd.input(None, None, None, js=PICKED_JS, **QUIET)
    preset_dd.change(form.filler(functools.partial(switch_preset, manager)),
                     [preset_dd, loaded_state, seeds, lr_bracket, algorithm, halving], form.outputs(SWITCHED),
                     **QUIET, **FORM_ORDER).then(None, None, None, js=SHOW_FIELDS_JS, **QUIET)
    # a person's edit of a field box, in one event: on the events only a person makes (a switch or a
    # fill sets the boxes without one: ui.setup_fields)
    gr.on(edit_triggers(slots), form.filler(functools.partial(on_edit, allow_custom)),
          inputs_kwargs=form.kwargs(EDIT_INPUTS), outputs=form.outputs(EDIT_OUTPUTS), trigger_mode="always_last",
          **QUIET)
    plan_inputs = [budget, seeds, confirm, preset_dd, lr_bracket, algorithm, bounds_state, fields_state, steps,
                   warm_from, halving, sample_every]
    plan = functools.partial(plan_if_fit, plan_text)
    space_inputs = [preset_dd, fields_state, steps, bounds_state]
    steps.input(space_preview, space_inputs, [space_df, space_md], **QUIET)
    space_df.input(space_edit, [preset_dd, fields_state, steps, space_df], [space_df, bounds_state, space_md],
                   **QUIET).then(plan, plan_inputs, plan_md, **QUIET)
    # the plan: phases and their counts, the warm start (past sessions picked included) fitted to the
    # table's bounds as Start will fit it; after what the person changes (a field: after on_form, a
    # cell: after space_edit), never on a state's change (it fired before the switch's other boxes
    # had their values: the plan flickered to the previous preset's budget); a switch and a fill
    # compute it themselves
    gr.on([confirm.input, lr_bracket.input, algorithm.input, halving.input, steps.input, warm_from.input,
           sample_every.input],
          plan, plan_inputs, plan_md, **QUIET)
    for box in (budget, seeds):  # typed by the person (not a session's values loaded by Open or Clone)
        box.input(confirm_for_budget, [budget, seeds], confirm, **QUIET).then(plan, plan_inputs, plan_md, **QUIET)
    halving.change(lambda on: gr.update(label=budget_label(on)), halving, budget, **QUIET)
    gr.on([budget.input, steps.input], functools.partial(estimate_text, manager),
          [budget, preset_dd, steps, fields_state], estimate_md, **QUIET)
    start_btn.click(functools.partial(start_search, manager), inputs_kwargs=form.kwargs(START_INPUTS),
                    outputs=[start_md, tabs, sessions_dd, control_md], concurrency_id="session-control", **QUIET)
    refresh_btn.click(functools.partial(refresh_sessions, manager), None, sessions_dd, **PRIVATE)
    refresh_btn.click(functools.partial(past_choices, manager), [preset_dd, loaded_state], warm_from, **PRIVATE)
    form_outputs = form.outputs(FILLED)
    reflect = form.filler(functools.partial(reflect_open, manager))
    open_btn.click(functools.partial(open_session, manager), sessions_dd, [start_md, tabs, control_md],
                   concurrency_id="session-control", **PRIVATE).then(reflect, None, form_outputs, **PRIVATE,
                                                                     **FORM_ORDER)
    resume_btn.click(functools.partial(resume_session, manager), sessions_dd, [start_md, tabs, control_md],
                     concurrency_id="session-control", **PRIVATE).then(reflect, None, form_outputs, **PRIVATE,
                                                                       **FORM_ORDER)
    clone_btn.click(form.filler(functools.partial(clone_settings, manager)), sessions_dd, form_outputs, **PRIVATE,
                    **FORM_ORDER)
    return {"preset": preset_dd, "load": form.filler(functools.partial(on_load, manager)),
            "reflect_on_load": form.filler(functools.partial(reflect_on_load, manager)),
            "load_outputs": form.outputs(LOADED), "fields_state": fields_state, "notes": notes_md,
            "preflight": preflight_md,
            "sessions": sessions_dd, "estimate": estimate_md, "budget": budget, "warm_from": warm_from,
            "loaded": loaded_state, "reflect": reflect, "form_outputs": form_outputs, "form": form,
            "space_preview": space_preview, "space_inputs": space_inputs, "space_outputs": [space_df, space_md]}


#: what a new page fills in first (:func:`on_load`)
LOADED = ("notes", "fields", "preflight", "estimate", *SLOT_NAMES)


def on_load(manager: SessionManager, preset_id: str, budget: Any) -> dict[str, Any]:
    """What a new page shows first, by name (:data:`LOADED`): the preset's notes, fields (in their
    slots) and pre-flight, and the wall-time estimate. The lists of past sessions come last in the
    page's load chain (:func:`load_lists`). The boxes keep their values: the page was built showing
    the same defaults (``build_slots``), and sending them again would overwrite what a person typed
    before the load's answer arrived."""
    notes, fields, preflight, *_ = on_preset(preset_id)
    fields = shown_fields(preset_id, fields, manager.allow_custom_executables) if preset_id else {}
    slots = {name: {k: v for k, v in update.items() if k != "value"} if name in BOX_NAMES else update
             for name, update in slot_updates(preset_id, fields, manager.allow_custom_executables).items()}
    return {"notes": notes, "fields": fields, "preflight": preflight, "estimate": estimate_text(manager, budget),
            **slots}


def reflect_on_load(manager: SessionManager, preset_id: str | None) -> dict[str, Any]:
    """The page load's step that shows the open session in the form (:func:`ui.setup_fill.reflect_open`);
    nothing when the page sends no preset: a person picked one before this step was sent
    (:data:`UNLESS_PICKED_JS`), and the form stays theirs rather than jumping to the open session's."""
    return reflect_open(manager) if preset_id else {}


def load_lists(manager: SessionManager, preset_id: str, loaded: dict[str, Any] | None) -> tuple[Any, Any]:
    """The past sessions and the warm-start choices (picked: those of the session the form was
    filled from), after the rest of the form on page load: both open every session in the runs
    folder, and the warm-start list ranks each one of this preset (~0.05 s a session on 2 cores)."""
    return refresh_sessions(manager), past_choices(manager, preset_id, loaded)
