"""Issue 43 item 4: the plan shown before Start is what Start runs. sd-scripts may train on past a rung
before Bracket's stop lands (a schedule that decays over the run keeps its full length; at 0 s a step
the fake trains to its end first), so a new config starts only while a full run of it still fits the
budget: Setup (the app's budget box) and ``run``'s plan line (``Session.plan_text``) state the range of
configs, from the count if every run trained to its end to the planned count, in one function
(``Budget.plan_text``); the search's real count lies in it, and the finished search's plan says what it
ran, with every phase done and nothing "next". On the real sdxl-lora preset with the inventory-parsing
fake sd-scripts."""

from __future__ import annotations

import re

import pytest

from bracket.app.forms import plan_text
from bracket.session import HalvingSettings, SearchSettings, Session
from bracket.session.loop.plan import progress_text
from tests.fakes import install_inventory_scripts, make_fake_python

pytestmark = pytest.mark.timeout(300)
BUDGET, STEPS = 4, 100


def test_setup_and_run_state_the_range_start_runs_and_a_finished_search_says_what_it_ran(
        field_values, image_folder, tmp_path, runs_dir):
    scripts = install_inventory_scripts(tmp_path / "sd-scripts", "kohya-ss/sd-scripts",
                                        ["sdxl_train_network.py", "tools/cache_latents.py",
                                         "tools/cache_text_encoder_outputs.py"])
    fields = field_values("sdxl-lora", dataset=str(image_folder), sd_scripts_dir=str(scripts),
                          trainer_python=str(make_fake_python(tmp_path / "bin")))
    setup = plan_text(BUDGET, 1, 0, "sdxl-lora", steps=STEPS, halving=True, fields=fields)
    found = re.search(r"(\d+) to (\d+) configs", setup)
    assert found, setup
    low, high = int(found[1]), int(found[2])
    assert (low, high) == (BUDGET, 7), setup  # 4 if each run trains to its end; 7 to 1/3 as planned
    assert f"{low} if all do" in setup

    settings = SearchSettings(budget=BUDGET, steps=STEPS, halving=HalvingSettings(launch_share=0.0), confirm=0,
                              sample_prompts="a photo of sks")
    session = Session.create("sdxl-lora", fields, settings, out_dir=runs_dir, name="range")
    printed = session.plan_text()  # what `bracket run` prints before it starts
    assert printed.split(" = ", 1)[1].startswith(f"{low} to {high} configs"), printed
    assert session.run() == "finished"
    ran = len(session.store.configs(session.name, stage="search"))
    assert low <= ran <= high, (ran, setup)

    snap = session.snapshot()
    assert snap.plan.startswith(f"budget {BUDGET} full runs: ran {ran} configs to 1/3"), snap.plan
    assert snap.runs_spent == snap.total_runs == session.total_runs() == ran, snap.spent_label
    shown = progress_text(snap.phases)
    assert "next" not in shown and all(row["done"] >= row["planned"] for row in snap.phases), shown
    assert session.plan_text() == snap.plan
    session.close()
