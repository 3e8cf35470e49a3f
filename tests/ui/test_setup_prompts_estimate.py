"""The Setup form's prompt field and wall-time estimate for real presets (issue 34, items 1 and 4),
called without a browser."""

from __future__ import annotations

import json

import pytest

from bracket.app.manager import SessionManager
from bracket.app.prompt_field import validation_note
from tests.ui.test_ui_handlers import start
from ui import setup_tab
from ui.setup_preset import prompts_for

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("no_torch_probe")]


def test_the_prompt_field_follows_the_preset_and_proposes_from_its_dataset(tmp_path):
    sdxl, origin = prompts_for("sdxl-lora", {})
    assert sdxl["value"] == "" and "circle" not in json.dumps(sdxl)  # nothing of the demo's
    assert "images" in sdxl["label"] and "Start refuses an empty list" in sdxl["info"]
    data = tmp_path / "cats"
    data.mkdir()
    for i in range(3):
        (data / f"{i}.png").write_bytes(b"\x89PNG")
        (data / f"{i}.txt").write_text(f"sks cat, sitting {i}", encoding="utf-8")
    # the dataset set while the field is empty: its captions fill it, with where they came from
    filled, origin = prompts_for("sdxl-lora", {"dataset": str(data)}, "", switched=False, origin=origin)
    assert filled["value"].splitlines()[0] == "sks cat, sitting 0 --d 1" and str(data) in filled["info"]
    # the person's own lines are kept when a field changes, and the help says whose they are
    own, own_origin = prompts_for("sdxl-lora", {"dataset": str(data)}, "my own prompt", switched=False, origin=origin)
    assert "value" not in own and own["info"].startswith("Your own lines") and str(data) not in own["info"]
    video, _ = prompts_for("wan21-lora", {})
    assert "video frames" in video["label"] and "--f frames" in video["info"]
    text, _ = prompts_for("axolotl-lora", {})
    assert "instructions" in text["label"] and "eval/loss" in text["info"]
    # the validation-loss note says what each kind holds out, or that the trainer has none
    assert "images" in validation_note("sdxl-lora") and "eval split" in validation_note("axolotl-lora")
    assert "no validation loss" in validation_note("wan21-lora") and "no eval loss" in validation_note("torchtune-lora")
    demo, _ = prompts_for("demo-cpu", {})
    assert demo["value"].startswith("a red circle --d 1") and "the demo's shapes" in demo["info"]
    # a session loaded into the form brings its prompts on the switch its fill causes, and says so
    loaded = {"preset_id": "sdxl-lora", "prompts": "kept --d 5", "source": "cats-1"}
    kept, kept_origin = prompts_for("sdxl-lora", {}, "", loaded)
    assert kept["value"] == "kept --d 5" and kept["info"].startswith("The prompts of the session **cats-1**")
    # … and keeps them when the dataset changes afterwards
    again, _ = prompts_for("sdxl-lora", {"dataset": str(data)}, "kept --d 5", loaded, switched=False,
                           origin=kept_origin)
    assert "value" not in again and again["info"].startswith("The prompts of the session **cats-1**")


def test_the_estimate_comes_only_from_runs_of_the_same_preset_steps_and_resolution(runs_dir, demo_fields):
    manager = SessionManager(runs_dir, allow_custom_executables=True)
    assert "unknown until the first run" in setup_tab.estimate_text(manager, 10, "demo-cpu", 20, demo_fields)
    start(manager, demo_fields)  # 2 runs of 20 steps
    assert manager.session.wait(60)
    same = setup_tab.estimate_text(manager, 10, "demo-cpu", 20, demo_fields)
    assert same.startswith("Estimated wall time") and "median of 2 finished runs" in same
    for other in (("sdxl-lora", 20, {}), ("flux1-lora", 100, {}), ("demo-cpu", 50, demo_fields),
                  ("demo-cpu", 20, {**demo_fields, "resolution": "128"})):
        assert "unknown until the first run" in setup_tab.estimate_text(manager, 10, *other), other
    # an earlier session's runs count for a later form (a fresh app over the same runs folder)
    later = SessionManager(runs_dir, allow_custom_executables=True)
    assert "median of 2 finished runs" in setup_tab.estimate_text(later, 4, "demo-cpu", 20, demo_fields)


def test_the_app_starts_the_demo_with_the_clis_plan():
    from bracket.app.forms import default_budget, plan_text
    from bracket.session import SearchSettings
    from ui.setup_preset import confirm_default, search_defaults

    form = search_defaults("demo-cpu")
    cli = SearchSettings(budget=default_budget("demo-cpu", steps=50), steps=50)  # `run --preset demo-cpu`
    # a blank confirmation box reads 0 (off) in the browser: the form writes the automatic rung out
    assert confirm_default("demo-cpu") == cli.confirm_runs == 4 and form["budget"] == cli.budget
    shown = plan_text(form["budget"], 1, confirm_default("demo-cpu"), "demo-cpu", steps=form["steps"])
    assert shown == (f"= {cli.plan().split(' = ', 1)[1]} — plan: baseline, 3 curated, 2 LR bracket, "
                     "4 shape draws, 2 TPE, 4 confirm")
    loaded = {"preset_id": "demo-cpu", "budget": 30, "seeds": 1, "confirm": None}
    assert confirm_default("demo-cpu", loaded) == SearchSettings(budget=30).confirm_runs
