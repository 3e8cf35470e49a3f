"""Halving searches end to end on the inventory-parsing fake scripts (``install_inventory_scripts``),
which train at 0 s per step and so race past every rung before the pause's stop lands, as sd-scripts
goes on until it is stopped where a run keeps its full length (a schedule that decays over the run:
these searches are bounded to ``cosine``; a length-free schedule stops itself at the rung,
tests/sd_scripts/test_sd_rung_own_limit.py): every step trained is charged, and no session spends
more than its budget. The cost of a trainer that cannot resume is checked on the demo trainer
(tests/session/test_halving_restart_cost.py)."""

from __future__ import annotations

import pytest

from bracket.session import HalvingSettings, SearchSettings, Session
from bracket.session.loop.rung_scores import full_runs_spent
from bracket.session.store.rows import RunRow
from tests.fakes import install_inventory_scripts, make_fake_python, write_fake_plan

pytestmark = pytest.mark.timeout(300)
CACHES = ["tools/cache_latents.py", "tools/cache_text_encoder_outputs.py"]
STEPS = 12
#: a schedule that decays over the run: the run keeps its full length and the session's stop pauses it
DECAYING = {"lr_scheduler": ["cosine"]}


def halving_session(preset: str, script: str, budget: int, name: str, field_values, image_folder, tmp_path,
                    runs_dir, bounds: dict = DECAYING) -> Session:
    """A halving search of ``preset`` on the fake ``script`` (and its caching tools), ``budget`` full
    runs of :data:`STEPS` steps, no start-up share and no confirmation round, its space ``bounds``
    (default: the schedule :data:`DECAYING`; ``{}``: the preset's own space)."""
    scripts = install_inventory_scripts(tmp_path / "sd-scripts", "kohya-ss/sd-scripts", [script, *CACHES])
    fields = field_values(preset, dataset=str(image_folder), sd_scripts_dir=str(scripts),
                          trainer_python=str(make_fake_python(tmp_path / "bin")))
    settings = SearchSettings(budget=budget, steps=STEPS, halving=HalvingSettings(launch_share=0), confirm=0,
                              sample_prompts="a photo of sks", bounds=dict(bounds))
    return Session.create(preset, fields, settings, out_dir=runs_dir, name=name)


def trained_by_launches(runs) -> float:
    """Every step any launch of ``runs`` trained, in full runs, read from the rows whatever their status
    (an interrupted run's too): the GPU time used, counted apart from the budget's own count."""
    return sum(RunRow.of(r).trained_steps() for r in runs) / STEPS


def test_an_sdxl_full_halving_search_whose_runs_race_past_their_rungs_is_charged_every_step(
        field_values, image_folder, tmp_path, runs_dir, monkeypatch):
    """Issue 46: a trainer the stop reaches only at its end (0 s per step) trains every run to full
    length. A run that exited 0 at its end is done, a full-length run of its config — neither paused at
    the rung nor interrupted (the pause's stop landing as it exited made it interrupted and uncharged,
    and its slot trained again: 5 full runs of a 4 budget) — each is charged what it trained, the plan is
    redone, and the GPU time used stays within the budget."""
    monkeypatch.setenv("BRACKET_FAKE_LOSS_TAG", "loss")
    # every launch ignores the pause's SIGTERM and exits 0 at its end: the race is won by the trainer
    # however loaded the machine (at 0 s per step alone, a slow machine let the stop land first)
    monkeypatch.setenv("BRACKET_FAKE_PLAN", str(write_fake_plan(tmp_path / "plan.json", ["stubborn"] * 16)))
    session = halving_session("sdxl-full", "sdxl_train.py", 4, "race", field_values, image_folder, tmp_path,
                              runs_dir)
    settings = session.settings
    assert session.run() == "finished"
    runs = [r for r in session.store.runs(session.name) if r["stage"] == "search"]
    assert runs and all(r["last_step"] == STEPS for r in runs)  # every run trained to its end, and says so
    assert {r["status"] for r in runs} <= {"done", "paused"}, [(r["id"], r["status"], r["failure_reason"])
                                                              for r in runs]
    assert full_runs_spent(runs, STEPS) == pytest.approx(len(runs))  # charged what they trained: full runs
    assert trained_by_launches(runs) == pytest.approx(len(runs)) and len(runs) <= settings.budget
    notes = session.store.get_session(session.name)["notes"]
    assert any("the plan is redone" in note for note in notes), notes
    session.close()


def test_a_lora_search_whose_last_config_races_to_its_end_never_spends_past_its_budget(
        field_values, image_folder, tmp_path, runs_dir, monkeypatch):
    """Issue 46: the first config races to its end (0 s per step, the pause's SIGTERM ignored: it exits 0
    there, a full run), the second trains at
    0.2 s per step and is stopped a step or two past its rung. Budget 2 of 12-step runs, rung at 4:
    14 or so steps are spent and a third config's first rung (4) would still fit — but a trainer may
    race to its end before the stop lands, so a launch is made only while the budget pays for it to
    train to full length. Before, the third config was launched, raced to 12 and the session spent
    2.4 of its 2 full runs."""
    monkeypatch.setenv("BRACKET_FAKE_LOSS_TAG", "loss")
    monkeypatch.setenv("BRACKET_FAKE_PLAN", str(write_fake_plan(tmp_path / "plan.json",
                                                                 ["stubborn", "slow", "ok", "ok", "ok", "ok"])))
    session = halving_session("sdxl-lora", "sdxl_train_network.py", 2, "lastrace", field_values, image_folder,
                              tmp_path, runs_dir)
    settings = session.settings
    assert session.run() == "finished"
    runs = [r for r in session.store.runs(session.name) if r["stage"] == "search"]
    shown = [(r["id"], r["status"], r["pause_step"], r["last_step"], r["restart_steps"]) for r in runs]
    assert [r["status"] for r in runs][:2] == ["done", "paused"], shown
    assert trained_by_launches(runs) <= settings.budget + 1e-9, shown  # the GPU time used
    assert session.budget.spent(session.view()) == pytest.approx(trained_by_launches(runs)), shown
    session.close()
