"""A musubi-tuner run pauses at a rung with the rung's weights saved; its promoted config restarts
(issue 38; ``resume_mode``). A schedule that decays over the run keeps its full ``--max_train_steps``
and the run is stopped only after the trainer logged past the rung; a constant one gets the rung as
its own ``--max_train_steps`` and ends there by itself, whatever its speed."""

from __future__ import annotations

import pytest

from bracket.trainer.base import RunRequest
from tests.fakes import install_inventory_scripts, make_fake_python, run_until_paused
from tests.musubi.helpers import build, flag_value, image_folder

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(("scheduler", "limit"), [("cosine", 24), ("constant", 6)])
def test_a_musubi_run_pauses_at_the_rung_with_its_weights(tmp_path, scheduler, limit):
    musubi = install_inventory_scripts(tmp_path / "musubi", "kohya-ss/musubi-tuner",
                                       ["src/musubi_tuner/zimage_train_network.py"])
    trainer = build("zimage-lora", tmp_path, image_folder(tmp_path), musubi_dir=str(musubi),
                    trainer_python=str(make_fake_python(tmp_path / "bin")))
    assert trainer.resume_mode == "restart"  # global_step starts at 0 on --resume at the pin
    config = trainer.config_from_dict({**trainer.baseline_config().knobs, "lr_scheduler": scheduler,
                                       "lr_warmup_steps": 0})
    spec = trainer.prepare_run(RunRequest(run_dir=tmp_path / "run", knobs=config, dataset=image_folder(tmp_path),
                                          max_steps=24, seed=2, save_every_n_steps=4, stop_at_step=6))
    assert flag_value(spec.cmd, "--max_train_steps") == str(limit)
    assert flag_value(spec.cmd, "--save_every_n_steps") == "2"
    assert "--save_state" not in spec.cmd and spec.pause_step == 6
    assert trainer.paused_state(spec.output_dir, 6) is None
    losses, stopped = run_until_paused(trainer, spec, tmp_path / "log", BRACKET_FAKE_STEP_SECONDS="0.03")
    if limit == 6:  # it ended itself at the rung (the helper's stop may land as it exits)
        assert max(losses) == 6
    else:
        assert stopped and 6 in losses and max(losses) < 24
    assert trainer.paused_state(spec.output_dir, 6) == spec.output_dir / "bracket-step00000006.safetensors"


@pytest.mark.parametrize(("bounds", "every"), [({"lr_scheduler": ["constant"]}, True), ({}, False)])
def test_a_musubi_space_of_constant_schedules_stops_itself_at_every_rung(tmp_path, bounds, every):
    """What halving charges a launch (``TrainerFacts``): its rung where the config stops itself, every
    config's rung where the space holds only constant schedules."""
    from bracket.session import HalvingSettings, SearchSettings
    from bracket.session.loop.rung_steps import trainer_facts
    from bracket.trainer.pause import KOHYA_SELF_STOP

    musubi = install_inventory_scripts(tmp_path / "musubi", "kohya-ss/musubi-tuner",
                                       ["src/musubi_tuner/zimage_train_network.py"])
    trainer = build("zimage-lora", tmp_path, image_folder(tmp_path), musubi_dir=str(musubi),
                    trainer_python=str(make_fake_python(tmp_path / "bin")))
    settings = SearchSettings(budget=4, steps=24, halving=HalvingSettings(launch_share=0), bounds=bounds)
    facts = trainer_facts(settings, trainer)
    assert facts.stops_at_rung is every and facts.stops_when == KOHYA_SELF_STOP
    # a cosine config (one the space cannot hold when every run stops itself) is charged in full otherwise
    assert facts.stops({"lr_scheduler": "constant"}) and facts.stops({"lr_scheduler": "cosine"}) is every
