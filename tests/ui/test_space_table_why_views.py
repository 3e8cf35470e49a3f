"""The UI handlers of issue 20's second part, without a browser: the search-space table and
the form filled from a session (Setup), why this suggestion (Search), the steps × prompts
stack and A/B flicker (Compare), +N runs, the space and Optuna's plots (Results)."""

from __future__ import annotations

import html as html_lib
import json
import re

import gradio as gr
import pytest

from bracket.app.manager import SessionManager
from bracket.judge.combine import DEFAULT_WEIGHTS, JUDGE_NAMES
from tests.ui.test_ui_handlers import start
from ui import compare_tab, results_tab, search_tab, setup_tab
from ui.blocks import build_app

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("no_torch_probe")]
SKIP = gr.skip()


def _edit(frame, knob: str, column: str, value: str) -> list[dict]:
    rows = frame.to_dict("records")
    next(r for r in rows if r["knob"] == knob)[column] = value
    return rows


def test_setup_space_table_is_edited_in_its_cells():
    frame, message = setup_tab.space_preview("demo-cpu", {}, 30, {})
    rows = frame.set_index("knob")
    assert rows.loc["learning_rate", "status"] == "searched" and rows.loc["batch_size", "status"] == "fixed"
    assert (rows.loc["learning_rate", "min"], rows.loc["learning_rate", "max"]) == ("1e-05", "0.03")  # not blank
    assert rows.loc["batch_size", "lock"] == "16" and message.startswith("4 knobs searched, 1 fixed")
    # narrow the learning rate in its max cell: the table is redrawn from the parsed bounds
    frame, bounds, message = setup_tab.space_edit("demo-cpu", {}, 30, _edit(frame, "learning_rate", "max", "1e-3"))
    assert bounds == {"learning_rate": (1e-5, 1e-3)} and frame.set_index("knob").loc["learning_rate", "status"] == (
        "narrowed")
    # lock a knob, then search batch sizes the preset fixes
    frame, bounds, _ = setup_tab.space_edit("demo-cpu", {}, 30, _edit(frame, "optimizer_type", "lock", "AdamW"))
    frame, bounds, message = setup_tab.space_edit("demo-cpu", {}, 30, _edit(frame, "batch_size", "choices", "8, 16"))
    rows = frame.set_index("knob")
    assert bounds == {"learning_rate": (1e-5, 1e-3), "batch_size": [8, 16], "optimizer_type": ["AdamW"]}
    assert rows.loc["optimizer_type", "status"] == "locked" and rows.loc["batch_size", "choices"] == "8, 16"
    assert message.startswith("4 knobs searched, 1 fixed or locked")  # batch sizes searched, optimizer locked
    # a new run length keeps the bounds (the state) and caps the warm-up again
    again, _ = setup_tab.space_preview("demo-cpu", {}, 100, bounds)
    assert again.set_index("knob").loc["optimizer_type", "lock"] == "AdamW"
    # a bad cell: one inline line with the CLI's message, table and bounds left as they were
    for knob, column, value, says in (("optimizer_type", "lock", "Lion", "Lion is not among"),
                                      ("learning_rate", "min", "0", "LR min must be a positive number"),
                                      ("batch_size", "choices", "a,b", "whole numbers separated by commas"),
                                      ("lr_scheduler", "min", "1", "not a min/max")):
        table, kept, message = setup_tab.space_edit("demo-cpu", {}, 30, _edit(frame, knob, column, value))
        assert (table, kept) == (SKIP, SKIP) and message.startswith("⚠") and says in message, message
        assert message.count("\n") == 0
    # several bad cells (a bad warm-up among them): the typed cells stay (the table is not
    # redrawn) and each bad cell has its own ⚠ line in the CLI's words; Start refuses the same
    # table naming each, and starts nothing
    bad = _edit(frame, "optimizer_type", "lock", "Lion")
    next(r for r in bad if r["knob"] == "lr_warmup_steps")["min"] = "-5"
    next(r for r in bad if r["knob"] == "learning_rate")["min"] = "0"
    table, kept, message = setup_tab.space_edit("demo-cpu", {}, 30, bad)
    lines = [line for line in message.split("\n") if line]
    assert (table, kept) == (SKIP, SKIP) and [line[:1] for line in lines] == ["⚠", "⚠", "⚠", "F"], message
    assert "LR min must be a positive number" in lines[0] and "lr_warmup_steps cannot be negative" in lines[1]
    assert "Lion is not among" in lines[2] and lines[3].startswith("Fix those 3 cells")
    manager = SessionManager(allow_custom_executables=True)
    said = start(manager, {}, space=bad)[0]
    assert said.count("⚠") == 1 and all(line[2:] in said for line in lines[:3]) and manager.session is None


def test_round2_handlers_on_a_finished_demo_session(runs_dir, demo_fields):
    build_app(SessionManager(runs_dir, allow_custom_executables=True))  # the Blocks build with the new parts
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    assert setup_tab.reflect_open(manager) == {}  # nothing open: the form stays as it is
    assert "Pick a past session" in setup_tab.clone_settings(manager, None)["form_message"]
    table, _ = setup_tab.space_preview("demo-cpu", demo_fields, 20, {})
    start(manager, demo_fields, budget=7, space=_edit(table, "learning_rate", "max", "0.01"))
    assert manager.session.wait(90)

    # Setup reflects the open session; clone fills it from a past one
    values = setup_tab.reflect_open(manager)
    assert sorted(values) == sorted(setup_tab.FILLED)  # every value the form shows, by name
    assert values["preset_id"] == "demo-cpu" and values["loaded"]["source"] == "ui-test"
    assert values["fields"]["train_script"] == demo_fields["train_script"]
    assert (values["budget"], values["seeds"], values["steps"]) == (7, 1, 20)
    assert {k: list(v) for k, v in values["bounds"].items()} == {"learning_rate": [1e-5, 0.01]}
    assert "open session" in values["form_message"] and values["name"] == ""
    assert values["space"].set_index("knob").loc["learning_rate", "max"] == "0.01"
    assert {n: values[f"weight_{n}"] for n in JUDGE_NAMES} == {n: DEFAULT_WEIGHTS.get(n, 0.0) for n in JUDGE_NAMES}
    other = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)  # a second app / reload
    cloned = setup_tab.clone_settings(other, str(runs_dir / "ui-test"))
    assert (cloned["budget"] == 7 and cloned["name"] == ""
            and "Cloned the settings of **ui-test**" in cloned["form_message"])
    notes, fields, _, budget, steps = setup_tab.on_preset("demo-cpu", cloned["loaded"])
    assert (budget, steps) == (7, 20) and fields["train_script"] == demo_fields["train_script"]
    assert setup_tab.on_preset("demo-cpu", {"preset_id": "other"})[3] == setup_tab.search_defaults("demo-cpu")["budget"]

    # Search: why this suggestion
    dropdown, text = search_tab.why(manager)
    assert dropdown.value == dropdown.choices[0][1] and "shape-7" in text and "shape draw** after 6 scored" in text
    assert "Closest finished configs" in text
    _, text = search_tab.why(manager, dropdown.choices[-1][1])
    assert "baseline" in text
    # the trial table's "why" column: one line per run's config, computed once and kept
    frame = search_tab._table(manager, 1)[1].set_index("config")
    assert frame.loc["shape-7", "why"].startswith("shape draw: the best step, another shape · vs ")
    assert frame.loc["baseline", "why"] == "baseline: the by-hand config"
    assert manager.reading.short_reasons() is manager.reading.short_reasons()  # kept, not rebuilt per poll
    _, text = search_tab.why(manager, next(v for label, v in dropdown.choices if label.startswith("lr-")))
    # which bracket rule made it depends on the demo's warm start (the best config at another
    # rate, or a family's lowest rate a decade lower); either way the reason names the phase
    assert ("**learning-rate bracket**: the best warm-start config at learning_rate" in text
            or "**learning-rate bracket**: the lowest-rate config of an optimizer whose every higher rate" in text)

    # Compare: every step of each grid cell (PageUp/PageDown in the lightbox), the steps × prompts
    # stack of the picked runs, A/B flicker
    ids = [r["id"] for r in manager.compare.scorable_runs()][:3]
    grid_markup, *_ = compare_tab.show_grid(manager, ids)
    steps = json.loads(html_lib.unescape(re.search(r'data-steps="([^"]*)"', grid_markup).group(1)))
    assert sorted(steps) == [f"{row},{col}" for row in range(2) for col in range(3)]
    assert [step for step, _ in steps["1,2"]] == [0, 10, 20] and all(str(runs_dir) in url for _, url in steps["1,2"])
    html, message = compare_tab.show_progression(manager, ids, [])
    assert message == "" and html.count('class="bk-layer"') == 3 and html.count('style="display:none"') == 2
    assert re.findall(r"<th title=\"[^\"]*\">#\d+ · (step \d+)</th>", html)[:3] == ["step 0", "step 10", "step 20"]
    assert "Pick runs" in compare_tab.show_progression(manager, [], [])[1]
    html, _ = compare_tab.show_flicker(manager, ids[0], ids[1], 0, [])  # no grid shown: the last common step
    assert html.count('class="bk-flicker"') == 2 and "at step 20" in html and 'class="bk-b"' in html
    html, _ = compare_tab.show_flicker(manager, ids[0], ids[1], 10, ids)  # a grid shown: the slider's step
    assert "at step 10" in html
    assert "two different runs" in compare_tab.show_flicker(manager, ids[0], ids[0], 0, [])[1]
    flicker_a, flicker_b = compare_tab.flicker_defaults(manager, ids)  # A/B start as the first two picked
    assert (flicker_a.value, flicker_b.value) == (ids[0], ids[1])
    assert compare_tab.flicker_defaults(manager, ids[:1]) == (SKIP, SKIP)
    refreshed = compare_tab.refresh_runs(manager)
    assert len(refreshed) == 5 and refreshed[2].choices == refreshed[0].choices
    assert not refreshed[4].visible  # no rungs: no "Samples at a rung"

    # Results: space, plots, +N runs
    space, parallel, slices = results_tab.refresh_more(manager)
    assert space.set_index("knob").loc["learning_rate", "range / choices"].endswith("(narrowed)")
    assert parallel is not None and slices is not None
    assert "whole number" in results_tab.extend(manager, "many")
    said = results_tab.extend(manager, 2)
    assert said.startswith("Added 2 runs: budget 9") and manager.session.wait(90)
    assert manager.snapshot().runs_spent == 9
    said = results_tab.extend(manager, 1)  # seen in review: "Added 1 runs"
    assert said.startswith("Added 1 run: budget 10") and manager.session.wait(90), said
    assert manager.snapshot().runs_spent == 10
    assert "is already running" not in results_tab.extend(manager, 0) and "at least 1" in results_tab.extend(manager, 0)


def test_first_sight_of_the_pair_box_and_the_trial_table_says_what_they_are(runs_dir):
    """Seen in review (a new user, a finished demo search of 7 runs): the blind-pair box said
    "No pair to compare yet" before Next pair was ever pressed, and the trial table showed the
    baseline at score 1.000 and the best config at 0.000 without saying lower is better."""
    demo = build_app(SessionManager(runs_dir, allow_custom_executables=True))
    blocks = {getattr(b, "elem_id", None): b for b in demo.blocks.values()}
    pair = blocks["bk-pair-box"].value
    assert "No pair" not in pair and "<b>Next pair</b>" in pair, pair
    assert "rank: the config's place on the Results leaderboard" in blocks["bk-trials"].label  # not a 1–10 rescale
    assert compare_tab.next_pair(SessionManager(runs_dir))[1] == compare_tab.NO_PAIR  # none open: none to give


def test_a_number_below_its_floor_reaches_the_apps_own_message_not_a_gradio_toast(runs_dir, demo_fields):
    """Seen in review: Budget 0 typed in Setup raised Gradio's own "Error (3): Value 0 is less than
    minimum value 1." toasts over the page (one per event that reads the box), the plan under it
    kept the old budget, and Start never ran its check. Every number box passes what was typed to
    the app, whose one inline line says what to do."""
    from bracket.app.forms import plan_text

    demo = build_app(SessionManager(runs_dir, allow_custom_executables=True))
    numbers = [b for b in demo.blocks.values() if isinstance(b, gr.Number)]
    assert {getattr(b, "elem_id", None) for b in numbers} >= {"bk-budget", "bk-seeds", "bk-steps", "bk-confirm",
                                                              "bk-job-steps", "bk-more-runs", "bk-trials-page"}
    for box in numbers:
        assert box.preprocess(-1) == -1, box.label  # no gr.Error before the handler
    assert plan_text(0, 1, None, "demo-cpu") == "Budget and seeds must be at least 1."  # the plan line
    manager = SessionManager(runs_dir, allow_custom_executables=True)
    message = start(manager, demo_fields, budget=0)[0]
    assert "budget must be at least 1, got 0" in message and manager.session is None, message
