"""Issue 43, item 6: the Setup form's preset fields are fixed slots a switch fills in (``ui.setup_fields``)."""

from __future__ import annotations

import pytest

from bracket.app.manager import SessionManager
from bracket.registry import PRESETS
from tests.fakes.setup_slots import box_values, change, type_into
from ui import setup_tab
from ui.blocks import build_app
from ui.setup_fields import BOX_NAMES, on_edit

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("no_torch_probe")]


def test_the_field_boxes_are_heard_only_on_a_person_s_events_and_a_switch_s_own_values_change_nothing(runs_dir):
    """Issue 43, item 6: the preset's field boxes are fixed slots a switch fills in (no gr.render), and
    one listener hears them only on the events a person makes (a text box's blur and submit, a list's
    input): never on ``change``, which fires for each box a switch changed (each a server event
    carrying a half-switched form). The values a switch set are no edit, for every preset, whatever
    came before it; a value typed after the switch is an edit of that preset's fields."""
    for allow in (False, True):
        demo = build_app(SessionManager(runs_dir, allow_custom_executables=allow))
        preset = next(c for c in demo.blocks.values() if getattr(c, "elem_id", None) == "bk-preset")
        on_preset = [f for f in demo.fns.values() if (preset._id, "change") in f.targets]
        assert not any(getattr(f.fn, "__name__", "") == "apply" for f in on_preset)  # no gr.render of the fields
        edits = [f for f in demo.fns.values() if getattr(getattr(f.fn, "__wrapped__", None), "func", None) is on_edit]
        assert len(edits) == 1
        boxes = {i for i, _ in edits[0].targets}
        assert len(boxes) == len(BOX_NAMES)
        kinds = {(type(demo.blocks[i]).__name__, event) for i, event in edits[0].targets}
        assert kinds == {("Textbox", "blur"), ("Textbox", "submit"), ("Dropdown", "input")}, kinds
        assert not [f.name for f in demo.fns.values() for i, event in f.targets if i in boxes and event == "change"]
        manager = SessionManager(runs_dir, allow_custom_executables=allow)
        shown: dict = {}
        for preset in [p.id for p in PRESETS] + ["demo-cpu", "sdxl-lora", "demo-cpu"]:
            got = setup_tab.switch_preset(manager, preset, None)
            shown = box_values(got, shown)
            assert change(preset, got["fields"], shown, allow_custom=allow) == {}, preset
        typed = change("demo-cpu", got["fields"], type_into("demo-cpu", shown, "resolution", "48", allow),
                       allow_custom=allow)
        assert typed["fields"]["resolution"] == "48" and typed["plan"]


def test_a_program_typed_into_its_list_is_never_taken(runs_dir):
    """Without ``--allow-custom-executables`` a program's list takes only the configured program: a
    path typed into it (the lists accept any value on the server, whose own check knew only the
    choices a slot was built with) leaves the fields as they were and puts the list back."""
    from ui.setup_fields import slot_name

    manager = SessionManager(runs_dir)
    got = setup_tab.switch_preset(manager, "sdxl-lora", None)
    boxes = type_into("sdxl-lora", box_values(got), "trainer_python", "/tmp/evil-python", allow_custom=False)
    shown = change("sdxl-lora", got["fields"], boxes, allow_custom=False)
    index = next(i for i, n in enumerate(got["fields"]) if n == "trainer_python")
    assert list(shown) == [slot_name(index, "choice")]  # nothing else changes: the fields are the configured ones
    assert shown[slot_name(index, "choice")]["value"] == got["fields"]["trainer_python"] != "/tmp/evil-python"


def test_an_edit_heard_twice_shows_once_and_an_edit_of_another_preset_s_form_nothing(runs_dir):
    """A list's pick is heard twice (its ``input`` on the pick and again on the blur that follows, run
    after the first): once the first has set the fields the second shows nothing (a second run showed
    its timer on the pre-flight). An edit whose boxes belong to the previous preset while the list
    already shows the next (a blur sent before the switch's answer) shows nothing either."""
    manager = SessionManager(runs_dir, allow_custom_executables=False)
    got = setup_tab.switch_preset(manager, "sdxl-lora", None)
    boxes = type_into("sdxl-lora", box_values(got), "vram_gb", "12", allow_custom=False)
    first = change("sdxl-lora", got["fields"], boxes, allow_custom=False)
    assert first["fields"]["vram_gb"] == "12" and first["plan"]
    assert change("sdxl-lora", first["fields"], boxes, allow_custom=False) == {}
    assert change("demo-cpu", first["fields"], boxes, allow_custom=False) == {}
