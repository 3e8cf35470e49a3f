"""A musubi-tuner run pauses at a rung with the rung's weights saved and is stopped only after
the trainer logged past it; its promoted config restarts (issue 38; ``resume_mode``)."""

from __future__ import annotations

import pytest

from bracket.trainer.base import RunRequest
from tests.fakes import install_inventory_scripts, make_fake_python, run_until_paused
from tests.musubi.helpers import build, flag_value, image_folder

pytestmark = pytest.mark.timeout(60)


def test_a_musubi_run_pauses_at_the_rung_with_its_weights(tmp_path):
    musubi = install_inventory_scripts(tmp_path / "musubi", "kohya-ss/musubi-tuner",
                                       ["src/musubi_tuner/zimage_train_network.py"])
    trainer = build("zimage-lora", tmp_path, image_folder(tmp_path), musubi_dir=str(musubi),
                    trainer_python=str(make_fake_python(tmp_path / "bin")))
    assert trainer.resume_mode == "restart"  # global_step starts at 0 on --resume at the pin
    config = trainer.config_from_dict(trainer.baseline_config().knobs)
    spec = trainer.prepare_run(RunRequest(run_dir=tmp_path / "run", knobs=config, dataset=image_folder(tmp_path),
                                          max_steps=24, seed=2, save_every_n_steps=4, stop_at_step=6))
    assert flag_value(spec.cmd, "--max_train_steps") == "24" and flag_value(spec.cmd, "--save_every_n_steps") == "2"
    assert "--save_state" not in spec.cmd and spec.pause_step == 6
    assert trainer.paused_state(spec.output_dir, 6) is None
    losses, stopped = run_until_paused(trainer, spec, tmp_path / "log", BRACKET_FAKE_STEP_SECONDS="0.03")
    assert stopped and 6 in losses and max(losses) < 24
    assert trainer.paused_state(spec.output_dir, 6) == spec.output_dir / "bracket-step00000006.safetensors"
