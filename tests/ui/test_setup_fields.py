"""Issue 43, item 6: the Setup form's preset fields are fixed slots a switch fills in (``ui.setup_fields``)."""

from __future__ import annotations

import gradio as gr
import pytest

from bracket.app.manager import SessionManager
from bracket.registry import PRESETS
from tests.fakes.setup_slots import box_values, change, type_into
from ui import setup_tab
from ui.blocks import build_app
from ui.setup_fields import BOX_NAMES

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("no_torch_probe")]


def test_a_field_box_change_writes_only_a_state_and_a_switch_s_own_values_change_nothing(runs_dir):
    """Issue 43, item 6: the preset's field boxes are fixed slots a switch fills in (no gr.render);
    their change listener writes only a state (Gradio shows a timer on a listener's outputs while
    it runs) and, for the values a switch set, nothing at all — for every preset, whatever came
    before it — while a value typed after the switch becomes an edit of that preset's fields."""
    for allow in (False, True):
        demo = build_app(SessionManager(runs_dir, allow_custom_executables=allow))
        preset = next(c for c in demo.blocks.values() if getattr(c, "elem_id", None) == "bk-preset")
        on_preset = [f for f in demo.fns.values() if (preset._id, "change") in f.targets]
        assert not any(getattr(f.fn, "__name__", "") == "apply" for f in on_preset)  # no gr.render of the fields
        on_boxes = [f for f in demo.fns.values() if len(f.targets) == len(BOX_NAMES)]
        assert len(on_boxes) == 1 and {event for _, event in on_boxes[0].targets} == {"change"}
        assert all(isinstance(o, gr.State) for o in on_boxes[0].outputs)
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


def test_a_change_event_run_again_makes_no_second_edit_but_a_new_filling_takes_the_same_edit(runs_dir):
    """Gradio runs a box's change listener once more after the one in flight (the edit it made not yet
    shown): that run makes no second edit (a second ``on_edit`` showed its timer on the pre-flight);
    the same values typed again after a switch are a new edit of the form the switch filled."""
    from ui.setup_fields import box_changed

    manager = SessionManager(runs_dir, allow_custom_executables=True)
    got = setup_tab.switch_preset(manager, "demo-cpu", None)
    boxes = type_into("demo-cpu", box_values(got), "resolution", "48")
    made = box_changed(True, preset_id="demo-cpu", fields=got["fields"], form_token=got["form_token"], **boxes)
    assert made["field_edit"]["fields"]["resolution"] == "48"
    again = box_changed(True, preset_id="demo-cpu", fields=got["fields"], field_edit=made["field_edit"],
                        form_token=got["form_token"], **boxes)
    assert again == {}
    back = setup_tab.switch_preset(manager, "demo-cpu", None)  # the form filled again: the same values are new
    assert back["form_token"] != got["form_token"]
    assert box_changed(True, preset_id="demo-cpu", fields=back["fields"], field_edit=made["field_edit"],
                       form_token=back["form_token"], **boxes)["field_edit"]["fields"]["resolution"] == "48"
