"""An SDXL LoRA run of a halving search without ``--sample-every`` and without a validation loss
renders samples at its rung step before it pauses, so the paused run can be rated and judged
there (``bracket.session.loop.rung_steps.launch_sample_every``: the launch's interval is the rungs').
The stand-in parses the command with the inventory's flags and samples as sd-scripts does: only
at multiples of ``--sample_every_n_steps``, never at a step where it is stopped."""

from __future__ import annotations

import pytest

from bracket.session.loop.rung_steps import launch_sample_every, session_rungs
from bracket.session.scoring.samples import parse_sample_name
from bracket.session.search_settings import HalvingSettings, SearchSettings
from bracket.trainer.base import RunRequest
from tests.fakes import install_inventory_scripts, make_fake_python, run_until_paused
from tests.sd_scripts.helpers import value_of

pytestmark = pytest.mark.timeout(120)
FULL = 30


@pytest.fixture
def sdxl(build, tmp_path):
    scripts = install_inventory_scripts(tmp_path / "sd-scripts", "kohya-ss/sd-scripts", ["sdxl_train_network.py"])
    return build("sdxl-lora", sd_scripts_dir=str(scripts), trainer_python=str(make_fake_python(tmp_path / "bin")))


def test_a_run_paused_at_a_rung_has_samples_of_that_step(sdxl, image_folder, tmp_path):
    settings = SearchSettings(budget=2, steps=FULL, halving=HalvingSettings(), sample_prompts="a photo of sks --d 1")
    assert sdxl.validation is None
    rungs = session_rungs(settings, sdxl)
    assert rungs.steps == (10, FULL)
    every = launch_sample_every(settings, sdxl, FULL)
    assert every == 10
    config = sdxl.config_from_dict(sdxl.baseline_config().knobs)
    spec = sdxl.prepare_run(RunRequest(run_dir=tmp_path / "run", knobs=config, dataset=image_folder, max_steps=FULL,
                                       seed=3, sample_prompts=settings.prompts(), sample_every_n_steps=every,
                                       stop_at_step=rungs.steps[0]))
    assert value_of(spec.cmd, "--sample_every_n_steps") == "10" and spec.pause_step == 10
    _, stopped = run_until_paused(sdxl, spec, tmp_path / "launch.log", BRACKET_FAKE_STEP_SECONDS="0.03",
                                  BRACKET_FAKE_SAVE_SECONDS="0.05")
    assert stopped
    steps = {parsed.step for path in spec.sample_dir.iterdir() if (parsed := parse_sample_name(path.name))}
    assert 10 in steps, sorted(steps, key=str)


def test_the_interval_is_the_users_or_the_validations_and_a_full_run_keeps_its_default(sdxl):
    halving = SearchSettings(budget=2, steps=FULL, halving=HalvingSettings(smallest_rung=1 / 9))
    assert launch_sample_every(halving, sdxl, FULL) == 4  # 1/9 of 30 rounds up to step 4: rungs 4, 12, 30
    assert session_rungs(halving, sdxl).steps == (4, 12, FULL)
    assert launch_sample_every(halving, sdxl, 4 * FULL) is None  # a final of another length: the trainer's own
    given = SearchSettings(budget=2, steps=FULL, halving=HalvingSettings(), sample_every_n_steps=5)
    assert launch_sample_every(given, sdxl, FULL) == 5 and session_rungs(given, sdxl).steps == (10, FULL)
    assert launch_sample_every(SearchSettings(budget=2, steps=FULL), sdxl, FULL) is None
