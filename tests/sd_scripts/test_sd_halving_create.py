"""A halving search of an sd-scripts preset at creation: rungs that do not fit its runs are one
error before anything is made, and a trainer that restarts a promoted config says so in the notes
the CLI prints before the first run (``bracket.session.loop.rung_steps.rung_problem``, ``restart_note``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bracket.cli import main
from bracket.session.create import create_session
from bracket.session.search_settings import HalvingSettings, SearchSettings, SettingsError

SCRIPTS = ("sdxl_train.py", "sdxl_train_network.py", "tools/cache_latents.py", "tools/cache_text_encoder_outputs.py")


def _fields(field_values, image_folder, preset_id: str) -> dict[str, str]:
    fields = field_values(preset_id, dataset=str(image_folder))
    for script in SCRIPTS:  # a checkout with the preset's scripts (none is launched here)
        path = Path(fields["sd_scripts_dir"]) / script
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")
    return fields


def test_a_full_fine_tune_says_up_front_that_a_promoted_config_trains_again(field_values, image_folder, runs_dir):
    settings = SearchSettings(budget=4, steps=60, halving=HalvingSettings(), sample_prompts="a photo of sks")
    full = create_session("sdxl-full", _fields(field_values, image_folder, "sdxl-full"), settings, name="full")
    lora = create_session("sdxl-lora", _fields(field_values, image_folder, "sdxl-lora"), settings, name="lora")
    try:
        said = [n for n in full.notes if n.startswith("halving:")]
        assert len(said) == 1 and "sdxl_train.py cannot resume a paused run" in said[0], full.notes
        assert "trains again from step 0" in said[0]
        assert not any("cannot resume" in n for n in lora.notes)  # the LoRA trainer resumes its state
        # the plan pays for a promotion from step 0: 6 × 20 + 2 × 60 steps of 240, not 8 × 20 + 2 × 40
        assert full.facts.restarts and not lora.facts.restarts
        assert "restarts" not in full.settings.to_dict()  # a trainer fact, kept in the plan, not the settings
        assert full.settings.plan(facts=full.facts) == (
            "budget 4 full runs = 6 configs to 1/3 → 2 to full (restarts: a promoted config trains again from step 0)")
        assert lora.settings.plan(facts=lora.facts) == "budget 4 full runs = 8 configs to 1/3 → 2 to full"
    finally:
        full.store.close()
        lora.store.close()


@pytest.mark.parametrize("steps, every, words", [
    (1, None, "1/3 falls on step 1 of 1, the full length; raise --steps."),
    (60, 100, "1/3 falls on step 60 of 60, the full length; raise --steps or lower --sample-every."),
])
def test_rungs_that_do_not_fit_the_runs_are_refused_before_anything_is_made(field_values, image_folder, runs_dir,
                                                                              steps, every, words):
    settings = SearchSettings(budget=4, steps=steps, sample_every_n_steps=every, halving=HalvingSettings(),
                              sample_prompts="a photo of sks")
    with pytest.raises(SettingsError, match=words.replace(".", r"\.")):
        create_session("sdxl-lora", _fields(field_values, image_folder, "sdxl-lora"), settings, name="short")
    assert list(runs_dir.iterdir()) == []


def test_the_cli_says_so_in_one_error_line(field_values, image_folder, runs_dir, capsys):
    fields = _fields(field_values, image_folder, "sdxl-lora")
    argv = ["run", "--preset", "sdxl-lora", "--halving", "--budget", "4", "--steps", "3", "--smallest-rung", "1/9",
            "--prompts", "a photo of sks", "--quiet", *[a for k, v in fields.items() for a in ("--set", f"{k}={v}")]]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: runs of 3 steps are too short for the halving rungs 1/9 → 1/3 → full: rounded up to a "
                   "step where samples are saved (every 1), 1/3 falls on step 1, as 1/9 does; raise --steps."], err
    assert list(runs_dir.iterdir()) == []


def test_a_sample_interval_that_puts_a_rung_far_from_its_share_is_said_once(field_values, image_folder, runs_dir):
    fields = _fields(field_values, image_folder, "sdxl-lora")
    far = SearchSettings(budget=4, steps=60, sample_every_n_steps=50,
                         halving=HalvingSettings(),
                         sample_prompts="a photo of sks")
    near = SearchSettings(budget=4, steps=60, sample_every_n_steps=10,
                          halving=HalvingSettings(),
                          sample_prompts="a photo of sks")
    rounded, kept = create_session("sdxl-lora", fields, far, name="far"), create_session("sdxl-lora", fields, near,
                                                                                          name="near")
    try:
        said = [n for n in rounded.notes if "rounded up" in n]
        assert said == ["halving: the rungs are rounded up to a step where samples are saved (every 50): 1/3 falls "
                        "on step 50 of 60 (83%); the plan counts those steps, lower --sample-every to bring them "
                        "nearer"], rounded.notes
        assert not any("rounded up" in n for n in kept.notes)  # 1/3 at step 20 of 60
        # the plan pays for the steps the rungs train: 4 × 50 + 1 × 10 of 240
        assert rounded.settings.configs_planned(rounded.facts) == 4 and kept.settings.n_configs == 8
        assert rounded.store.get_session("far")["plan"]["rung_every"] == 50
    finally:
        rounded.store.close()
        kept.store.close()
