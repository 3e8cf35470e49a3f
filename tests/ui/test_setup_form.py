"""The Setup form is wired by name (issue 36, item 6): Start gets every value as the keyword of
its name, and Open, Resume, Clone and a page load fill the form from values by name; nothing
depends on the order of the form's components."""

from __future__ import annotations

import inspect

import gradio as gr
import pytest

from bracket.app.manager import SessionManager
from bracket.judge.combine import JUDGE_NAMES
from ui import setup_tab
from ui.blocks import build_app
from ui.setup_fields import BOX_NAMES
from ui.setup_form import SetupForm

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("no_torch_probe")]


def _listener(demo, function):
    found = [f for f in demo.fns.values() if getattr(getattr(f.fn, "__wrapped__", f.fn), "func", None) is function
             or getattr(f.fn, "func", None) is function]
    assert found, function
    return found


def test_start_gets_every_value_of_the_form_by_name(runs_dir):
    demo = build_app(SessionManager(runs_dir, allow_custom_executables=True))
    (start,) = _listener(demo, setup_tab.start_search)
    sent = dict(zip(start.input_keyword_names, start.inputs))
    assert tuple(sent) == setup_tab.START_INPUTS and len(start.inputs) == len(sent)  # nothing by position
    keywords = [p.name for p in inspect.signature(setup_tab.start_search).parameters.values()
                if p.kind is inspect.Parameter.KEYWORD_ONLY]
    # the field boxes too: Start reads the fields as the boxes show them (an edit made before the
    # page's load answered never reached the fields state)
    assert set(sent) == set(keywords) | {f"weight_{n}" for n in JUDGE_NAMES} | set(BOX_NAMES)
    shown = {name: getattr(sent[name], "elem_id", None) for name in (
        "budget", "seeds", "steps", "space", "confirm", "lr_bracket", "warm_start_from", "validation", "prompts")}
    assert shown == {"budget": "bk-budget", "seeds": "bk-seeds", "steps": "bk-steps", "space": "bk-space-setup",
                     "confirm": "bk-confirm", "lr_bracket": "bk-lr-bracket", "warm_start_from": "bk-warm-from",
                     "validation": "bk-validation", "prompts": "bk-prompts"}
    assert sent["validation"].value is True and sent["lr_bracket"].value is True
    assert [sent[f"weight_{n}"].label for n in JUDGE_NAMES] == [f"weight: {n}" for n in JUDGE_NAMES]


def test_open_resume_and_clone_fill_the_form_by_name(runs_dir):
    demo = build_app(SessionManager(runs_dir, allow_custom_executables=True))
    reflects, (clone,) = _listener(demo, setup_tab.reflect_open), _listener(demo, setup_tab.clone_settings)
    (on_load,) = _listener(demo, setup_tab.reflect_on_load)
    assert len(reflects) == 2  # after Open, after Resume
    for fill in (*reflects, on_load, clone):
        assert len(fill.outputs) == len(setup_tab.FILLED) == len(set(setup_tab.FILLED))
        assert {id(c) for c in fill.outputs} == {id(c) for c in clone.outputs}
    assert reflects[0].fn() == gr.skip()  # nothing open: every box stays as it is
    assert on_load.fn("demo-cpu") == gr.skip() and on_load.js == setup_tab.UNLESS_PICKED_JS
    said = clone.fn(None)  # as Gradio gets it: {component: value}, only the message line
    ((box, text),) = said.items()
    assert box.elem_id == "bk-form-source" and box in clone.outputs and text.startswith("⚠ Pick a past session")


def test_a_value_by_name_reaches_its_own_component_only():
    budget, seeds, message = gr.Number(), gr.Number(), gr.Markdown()
    form = SetupForm(budget=budget, seeds=seeds, form_message=message)
    assert form.kwargs(["seeds", "budget"]) == {"seeds": seeds, "budget": budget}
    assert form.outputs(["budget", "form_message"]) == [budget, message]
    assert form.updates({"form_message": "⚠ x"}) == {message: "⚠ x"}  # the others stay as they are
    assert form.updates({}) == gr.skip()
    with pytest.raises(KeyError, match="no steps"):
        form.updates({"steps": 3})
    fill = form.filler(lambda: {"seeds": 2})
    assert fill() == {seeds: 2}


def test_start_refuses_a_value_it_has_no_name_for():
    with pytest.raises(TypeError, match="weight_nonsense"):
        setup_tab.start_search(SessionManager(allow_custom_executables=True), preset_id="demo-cpu", fields={},
                               budget=2, steps=3, seeds=1, weight_nonsense=1.0)


def test_everything_that_fills_the_form_is_answered_in_the_order_sent(runs_dir):
    """The page's load chain, a preset switch, the form filled after Open and Resume, and Clone share one
    queue of one (``FORM_ORDER``): a switch sent while the load is on its way is answered after it, so a
    late load never lands over a preset picked meanwhile (the browser test: test_late_load_browser.py)."""
    manager = SessionManager(runs_dir, allow_custom_executables=True)
    demo = build_app(manager)
    fillers = [setup_tab.on_load, setup_tab.reflect_on_load, setup_tab.reflect_open, setup_tab.switch_preset,
               setup_tab.clone_settings, setup_tab.load_lists]
    found = [f for function in fillers for f in _listener(demo, function)]
    found += [f for f in demo.fns.values() if f.fn is setup_tab.space_preview and f in _load_chain(demo)]
    assert len(found) == 8  # the load chain's four steps, the switch, the fill after Open and after Resume, Clone
    assert {(f.concurrency_id, f.concurrency_limit) for f in found} == {("setup-form", 1)}
    picked = [f for f in demo.fns.values() if f.fn is None and f.js == setup_tab.PICKED_JS]
    assert [t[1] for f in picked for t in f.targets] == ["input"]  # a person's pick only, not a value the app sets


def _load_chain(demo):
    """The listeners of the page's load and the steps chained after it."""
    first = next(f for f in demo.fns.values() if any(t[1] == "load" for t in f.targets))
    chain, ids = [first], {first._id}
    for f in demo.fns.values():
        if f.trigger_after in ids:
            chain.append(f)
            ids.add(f._id)
    return chain
