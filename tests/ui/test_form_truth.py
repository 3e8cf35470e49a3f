"""Issue 34: what Start gets is what the form shows, after preset switches (handler level; the
browser walk is tests/ui/test_preset_switch_browser.py and the journey test)."""

from __future__ import annotations

import pytest

from bracket.app.manager import SessionManager
from bracket.registry import get_preset
from bracket.session import SearchSettings
from tests.fakes.setup_slots import box_values, change, type_into
from ui import setup_tab

pytestmark = pytest.mark.timeout(60)


def test_a_field_change_after_a_switch_never_carries_the_previous_presets_fields(tmp_path):
    """demo → SDXL LoRA: an edit of the new form gives exactly the SDXL form, and a change of a box
    dispatched while the form still held the demo's fields (cpu_threads, train_script, resolution 32)
    changes nothing."""
    manager = SessionManager(tmp_path / "runs", allow_custom_executables=True)
    demo = setup_tab.switch_preset(manager, "demo-cpu", None)
    assert demo["fields"]["resolution"] == "32" and "cpu_threads" in demo["fields"]
    demo_boxes = box_values(demo)
    sdxl = setup_tab.switch_preset(manager, "sdxl-lora", None)
    boxes = type_into("sdxl-lora", box_values(sdxl, demo_boxes), "dataset", str(tmp_path))
    got = change("sdxl-lora", sdxl["fields"], boxes)
    shown = {**{s.name: s.resolved_default() for s in get_preset("sdxl-lora").fields}, "dataset": str(tmp_path)}
    assert got["fields"] == shown and got["fields"]["resolution"] == "1024"
    assert "cpu_threads" not in got["preflight"] and "train_script" not in got["preflight"]
    # the demo's boxes changing once the list shows SDXL, before the switch's answer: nothing
    assert change("sdxl-lora", demo["fields"], type_into("demo-cpu", demo_boxes, "resolution", "48")) == {}


def test_the_confirmation_box_follows_a_typed_budget():
    """Seen in the journey walk: the box kept the default budget's 4 confirmation runs when a person
    typed budget 3, and the plan refused it; it now takes the automatic rung of the budget typed."""
    from ui.setup_preset import confirm_for_budget

    assert confirm_for_budget(16, 1) == 4 and confirm_for_budget(7, 1) == 0 and confirm_for_budget(3, 1) == 0
    assert confirm_for_budget(24, 2) == SearchSettings(budget=24, seeds=2).confirm_runs
    assert not isinstance(confirm_for_budget(None, 1), int)  # an empty box changes nothing
