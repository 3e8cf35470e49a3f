"""Issue 34: what Start gets is what the form shows, after preset switches (handler level; the
browser walk is tests/ui/test_preset_switch_browser.py and the journey test)."""

from __future__ import annotations

import gradio as gr
import pytest

from bracket.registry import get_preset
from bracket.session import SearchSettings
from ui import setup_tab

SKIP = gr.skip()
pytestmark = pytest.mark.timeout(60)


def test_a_field_change_after_a_switch_never_carries_the_previous_presets_fields(tmp_path):
    """demo → SDXL LoRA: a change event of the new form dispatched while the state still held
    the demo's fields (cpu_threads, train_script, resolution 32) gives exactly the SDXL form."""
    _, demo, *_ = setup_tab.on_preset("demo-cpu")
    assert demo["resolution"] == "32" and "cpu_threads" in demo
    sdxl = get_preset("sdxl-lora")
    shown = {s.name: s.resolved_default() for s in sdxl.fields}
    shown["dataset"] = str(tmp_path)
    boxes = [shown[s.name] for s in sdxl.fields]
    message, fields, preflight, _prompts, _origin = setup_tab.on_form("sdxl-lora", "dataset", "sdxl-lora", "", None,
                                                                      *boxes)
    assert fields == shown and fields["resolution"] == "1024"
    assert "cpu_threads" not in preflight and "train_script" not in preflight
    # a change of the demo's form that arrives once the list shows SDXL changes nothing
    demo_boxes = [demo[s.name] for s in get_preset("demo-cpu").fields]
    assert setup_tab.on_form("demo-cpu", "resolution", "sdxl-lora", "", None, *demo_boxes) == (SKIP,) * 5


def test_the_confirmation_box_follows_a_typed_budget():
    """Seen in the journey walk: the box kept the default budget's 4 confirmation runs when a person
    typed budget 3, and the plan refused it; it now takes the automatic rung of the budget typed."""
    from ui.setup_preset import confirm_for_budget

    assert confirm_for_budget(16, 1) == 4 and confirm_for_budget(7, 1) == 0 and confirm_for_budget(3, 1) == 0
    assert confirm_for_budget(24, 2) == SearchSettings(budget=24, seeds=2).confirm_runs
    assert not isinstance(confirm_for_budget(None, 1), int)  # an empty box changes nothing
