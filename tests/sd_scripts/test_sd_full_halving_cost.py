"""An sdxl-full halving search end to end on the inventory-parsing fake scripts
(``install_inventory_scripts``): its full fine-tune cannot resume, so every promotion trains
again from step 0 — and the plan, the budget and the compute spent count those steps, so the
search trains its budget and no more (the user walk of budget 4 bought 8 configs and trained
8 × 20 + 2 × 60 = 280 steps of 240: 4.67 full runs)."""

from __future__ import annotations

import pytest

from bracket.session import HalvingSettings, SearchSettings, Session
from bracket.session.loop.rung_scores import full_runs_spent
from bracket.standings.rungs import session_rung_table
from tests.fakes import install_inventory_scripts, make_fake_python

pytestmark = pytest.mark.timeout(300)
SCRIPTS = ["sdxl_train.py", "tools/cache_latents.py", "tools/cache_text_encoder_outputs.py"]
STEPS = 12


def test_an_sdxl_full_halving_search_trains_within_its_budget(field_values, image_folder, tmp_path, runs_dir,
                                                               monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_LOSS_TAG", "loss")  # as sdxl_train.py logs it
    scripts = install_inventory_scripts(tmp_path / "sd-scripts", "kohya-ss/sd-scripts", SCRIPTS)
    fields = field_values("sdxl-full", dataset=str(image_folder), sd_scripts_dir=str(scripts),
                          trainer_python=str(make_fake_python(tmp_path / "bin")))
    settings = SearchSettings(budget=4, steps=STEPS, halving=HalvingSettings(launch_share=0), confirm=0,
                              sample_prompts="a photo of sks")
    session = Session.create("sdxl-full", fields, settings, out_dir=runs_dir, name="full")
    assert session.settings.plan() == ("budget 4 full runs = 6 configs to 1/3 → 2 to full (restarts: a promoted "
                                       "config trains again from step 0)")
    assert session.run() == "finished"
    runs = [r for r in session.store.runs(session.name) if r["stage"] == "search"]
    # 6 configs to step 4; 2 trained again from step 0 to 12 in their own rows, the 4 steps thrown away kept
    assert sorted((r["status"], r["launches"], r["last_step"], r["restart_steps"]) for r in runs) == [
        ("done", 2, 12, 4)] * 2 + [("paused", 1, 4, None)] * 4
    assert full_runs_spent(runs, STEPS) == pytest.approx((6 * 4 + 2 * 12) / STEPS) == pytest.approx(4.0)
    _plan, rows = session_rung_table(session)
    paused = [row[-1] for row in rows if "paused at step" in row[-1]]
    assert len(paused) == 4 and all(text.endswith("paused at step 4 of 12, weights saved") for text in paused), rows
    session.close()
