"""Issue 34, items 6 and 10 (handler level): Compare is current during a search without a click,
a prompt can be rated, fixed knobs are not offered as sort keys, Open of a finished session does
not say "Resume it to continue", and the app names its own --share."""

from __future__ import annotations

import gradio as gr
import pytest

from bracket.app.manager import SessionManager
from tests.ui.test_ui_handlers import start
from ui import compare_tab, setup_tab
from ui.blocks import build_app
from ui.compare_order import JUDGE_PREFIX

SKIP = gr.skip()
pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("no_torch_probe")]


def test_the_runs_list_polls_new_runs_and_new_ratings_without_a_click(runs_dir, demo_fields):
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    start(manager, demo_fields, budget=2)
    assert manager.session.wait(60)
    runs, sort, a, b, rung, sent = compare_tab.poll_runs(manager, None)  # a tab that has nothing yet
    ids = [value for _, value in runs.choices]
    assert len(ids) == 2 and a.choices == runs.choices and b.choices == runs.choices
    assert compare_tab.poll_runs(manager, sent) == (SKIP,) * 6  # nothing new: nothing redrawn
    label = dict((v, k) for k, v in runs.choices)[ids[0]]
    assert "unrated" in label
    compare_tab.rate(manager, ids[0], "8", compare_tab.WHOLE_RUN)
    runs, *_, again = compare_tab.poll_runs(manager, sent)  # the chip of the rated run says so
    assert again != sent and "unrated" not in dict((v, k) for k, v in runs.choices)[ids[0]]
    # sort keys: only knobs whose values differ between the runs (a fixed knob orders nothing), then
    # the judges that scored a run (ui.compare_order)
    params = [r["params"] for r in manager.compare.scorable_runs()]
    keys = [k for _, k in sort.choices if k and not k.startswith(JUDGE_PREFIX)]
    assert [k for _, k in sort.choices if k.startswith(JUDGE_PREFIX)] == [JUDGE_PREFIX + "loss"]
    assert keys and all(len({repr(p.get(k)) for p in params}) > 1 for k in keys)
    fixed = [k for k in params[0] if len({repr(p.get(k)) for p in params}) == 1]
    assert fixed and not set(fixed) & set(keys)


def test_a_prompt_can_be_rated_and_its_rating_is_shown_apart_from_the_runs(runs_dir, demo_fields):
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    start(manager, demo_fields, budget=2)
    assert manager.session.wait(60)
    run = manager.compare.scorable_runs()[0]["id"]
    assert "prompt 1" in compare_tab.rate(manager, run, "3", 1)
    assert compare_tab.run_ratings(manager, 1) == {run: 3.0} and compare_tab.run_ratings(manager) == {}
    demo = build_app(manager)
    scope = next(c for c in demo.blocks.values() if getattr(c, "elem_id", None) == "bk-scope")
    assert scope.interactive is True  # seen: the scope list was greyed out, so no prompt could be picked
    finished = setup_tab.open_session(SessionManager(runs_dir), str(manager.session.folder))[0]
    assert "Resume it to continue" not in finished and "its whole budget is trained (2/2 runs)" in finished


def test_the_app_names_its_own_share_option():
    import app

    said = app.served_text("http://127.0.0.1:7860/", None)
    assert "--share" in said and "share=True" not in said and "http://127.0.0.1:7860/" in said
    assert "https://x.gradio.live" in app.served_text("http://127.0.0.1:7860/", "https://x.gradio.live")


def test_a_step_typed_in_the_sliders_box_redraws_the_grid_at_once(runs_dir):
    """Seen: only ``release`` (a drag's end) redrew the grid, so a typed step waited for the box to
    lose focus; the typed number is an ``input`` event of the slider."""
    demo = build_app(SessionManager(runs_dir))
    step = next(c for c in demo.blocks.values() if getattr(c, "elem_id", None) == "bk-step")
    events = {event for fn in demo.fns.values() for block, event in fn.targets if block == step._id}
    assert {"release", "input"} <= events
