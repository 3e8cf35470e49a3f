"""Issue 43, item 3, at the form's logic: a real preset never shows (so never samples) the demo's
prompts, whatever the order of switches and whether a dataset was filled in, and the help under
the prompts box says where the lines in it came from. The app runs :func:`setup_tab.switch_preset`
on a preset switch and the listeners of ``ui.setup_fields`` on a field change; here a person's
sequence of switches and dataset entries is replayed through them, carrying the field boxes, the
prompts box and its origin from one event to the next as the browser does
(``tests/ui/test_preset_switch_text_browser.py`` does it in Chromium)."""

from __future__ import annotations

import pytest

from bracket.app.manager import SessionManager
from bracket.dataset.demo_data import DEMO_PROMPTS, make_demo_dataset
from bracket.registry import PRESETS
from tests.conftest import make_caption_folder
from tests.fakes.setup_slots import box_values, change, type_into
from ui import setup_tab

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("no_torch_probe")]
DEMO = "demo-cpu"
IMAGE_PRESETS = [p.id for p in PRESETS if p.id != DEMO and any(f.name == "dataset" for f in p.fields)]


class Form:
    """The Setup form's preset, fields, prompts box and its origin, as the browser holds them."""

    def __init__(self, manager: SessionManager) -> None:
        self.manager, self.preset, self.fields, self.prompts, self.origin, self.info = manager, "", {}, "", None, ""
        self.boxes: dict = {}

    def switch(self, preset_id: str) -> None:
        got = setup_tab.switch_preset(self.manager, preset_id, None)
        self.preset, self.fields, self.origin = preset_id, got["fields"], got["prompt_origin"]
        self.boxes = box_values(got, self.boxes)
        # the boxes' own change events after the switch set them change nothing
        allow = self.manager.allow_custom_executables
        assert change(preset_id, self.fields, self.boxes, self.prompts, self.origin, allow) == {}
        self._show(got["prompts"])

    def type_dataset(self, path: str) -> None:
        allow = self.manager.allow_custom_executables
        self.boxes = type_into(self.preset, self.boxes, "dataset", path, allow)
        got = change(self.preset, self.fields, self.boxes, self.prompts, self.origin, allow)
        self.fields, self.origin = got["fields"], got["prompt_origin"]
        self._show(got["prompts"])

    def _show(self, update: dict) -> None:
        if "value" in update:
            self.prompts = update["value"]
        self.info = update["info"]


def _demo_lines() -> set[str]:
    return {line.split(" --")[0] for line in DEMO_PROMPTS}


@pytest.mark.parametrize("preset_id", IMAGE_PRESETS)
def test_no_switch_order_brings_the_demos_prompts_to_a_real_preset(preset_id, runs_dir, tmp_path):
    demo_data = make_demo_dataset(tmp_path / "demo-data", count=6)  # its captions are the demo's shapes
    own = make_caption_folder(tmp_path / "own", count=3)  # "a red circle", "a green circle", …
    for path in own.glob("*.txt"):
        path.write_text(f"zqx photo {path.stem}", encoding="utf-8")
    form = Form(SessionManager(runs_dir))
    demo = _demo_lines()

    def shows_no_demo_prompt(step: str) -> None:
        shown = {line.split(" --")[0] for line in form.prompts.splitlines()}
        assert not shown & demo, (preset_id, step, form.prompts)
        assert "the demo's shapes" not in form.info and str(demo_data) not in form.info, (step, form.info)

    form.switch(DEMO)
    assert {line.split(" --")[0] for line in form.prompts.splitlines()} == demo
    form.type_dataset(str(demo_data.parent))  # the demo with its dataset filled in …
    form.switch(preset_id)  # … then the real preset
    shows_no_demo_prompt("demo with a dataset → preset")
    assert form.prompts == "" and "Nothing to propose them from yet" in form.info  # its own dataset is not set
    form.type_dataset(str(own))
    shows_no_demo_prompt("the preset's dataset typed")
    if form.prompts:  # a trainer that reads this folder proposes its captions, and says so
        assert form.prompts.startswith("zqx photo") and f"captions of {own}" in form.info, form.info
    form.switch(DEMO)
    form.switch(preset_id)  # back, without a dataset
    shows_no_demo_prompt("demo → preset again")
    form.switch(DEMO)
    form.type_dataset(str(demo_data.parent))
    form.switch(preset_id)
    form.type_dataset(str(own))
    shows_no_demo_prompt("demo with a dataset → preset with its own")
