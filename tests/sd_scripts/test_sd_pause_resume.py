"""An SDXL LoRA run pauses at a rung and resumes with its step counter and its loss continuing
(issue 38), against the fake trainer that resumes as sd-scripts' ``train_network.py`` does at
the pin (``tests/fakes/fake_state.py``) behind a stand-in that parses the command with the
inventory's flags (``install_inventory_scripts``). A schedule that decays over the run keeps the
run's full ``--max_train_steps`` and the session stops it at the rung; a constant one gets the rung as
its own ``--max_train_steps`` and stops itself there (``bracket.trainer.sd_scripts.resume``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from bracket.trainer.base import RunRequest
from bracket.trainer.pause import STEP_STATE_NAME
from tests.fakes import install_inventory_scripts, logged_losses, make_fake_python, run_until_paused
from tests.sd_scripts.helpers import value_of

pytestmark = pytest.mark.timeout(120)
FULL, RUNGS = 30, (10, 20)
#: the loss of an image differs by up to this much (the data order shows in the curve)
SPREAD = 0.02


@pytest.fixture
def sdxl(build, tmp_path):
    scripts = install_inventory_scripts(tmp_path / "sd-scripts", "kohya-ss/sd-scripts", ["sdxl_train_network.py"])
    return build("sdxl-lora", sd_scripts_dir=str(scripts), trainer_python=str(make_fake_python(tmp_path / "bin")))


def _launch(trainer, run_dir: Path, image_folder: Path, scheduler: str = "cosine",
            **kwargs) -> tuple[dict[int, float], object, bool]:
    """One launch of the baseline config at ``scheduler``, run to its end or to its pause; its losses,
    spec and whether it was stopped at the pause."""
    knobs = {**trainer.baseline_config().knobs, "lr_scheduler": scheduler, "lr_warmup_steps": 0}
    config = trainer.config_from_dict(knobs)
    spec = trainer.prepare_run(_request(run_dir, config, image_folder, **kwargs))
    losses, stopped = run_until_paused(trainer, spec, run_dir / "launch.log", BRACKET_FAKE_STEP_SECONDS="0.03",
                                       BRACKET_FAKE_SAVE_SECONDS="0.05", BRACKET_FAKE_DATA_SPREAD=str(SPREAD),
                                       BRACKET_FAKE_HORIZON=str(FULL))
    return losses, spec, stopped


def _request(run_dir: Path, config, image_folder: Path, **kwargs) -> RunRequest:
    return RunRequest(run_dir=run_dir, knobs=config, dataset=image_folder, max_steps=FULL, seed=3, **kwargs)


@pytest.mark.parametrize("scheduler", ["cosine", "constant"])
def test_a_paused_run_resumes_with_its_steps_and_loss_continuing(sdxl, image_folder, tmp_path, scheduler):
    """``cosine``: the session stops the run once the trainer logged past the rung; ``constant``: the
    trainer stops itself at the rung, and the state it leaves there is the same run's."""
    whole, _, _ = _launch(sdxl, tmp_path / "whole", image_folder, scheduler)
    assert sorted(whole) == list(range(1, FULL + 1))

    run_dir = tmp_path / "halved"
    first, spec, stopped = _launch(sdxl, run_dir, image_folder, scheduler, stop_at_step=RUNGS[0])
    own = scheduler == "constant"
    assert (own or stopped) and spec.pause_step == RUNGS[0]  # it ends itself, or the stop ends it
    # the schedule of the whole run, or the rung as the trainer's own limit where the schedule is the same
    assert value_of(spec.cmd, "--max_train_steps") == str(RUNGS[0] if own else FULL)
    state = sdxl.paused_state(spec.output_dir, RUNGS[0])
    assert state == spec.output_dir / STEP_STATE_NAME.format("bracket", RUNGS[0])
    # one epoch holds the whole run, so the saved step is inside the first epoch
    assert json.loads((state / "train_state.json").read_text()) == {"current_epoch": 1, "current_step": RUNGS[0]}
    # stopped only after the trainer logged past the rung, or it ended there itself
    assert max(first) == RUNGS[0] if own else max(first) > RUNGS[0]

    second, spec, stopped = _launch(sdxl, run_dir, image_folder, scheduler, stop_at_step=RUNGS[1],
                                    resume_from=state, resume_step=RUNGS[0])
    assert (own or stopped) and "--sample_at_first" not in spec.cmd
    assert min(second) == RUNGS[0] + 1  # true steps, not 1, 2, ...
    state = sdxl.paused_state(spec.output_dir, RUNGS[1])
    assert json.loads((state / "train_state.json").read_text())["current_step"] == RUNGS[1]

    third, spec, stopped = _launch(sdxl, run_dir, image_folder, scheduler, resume_from=state, resume_step=RUNGS[1])
    assert not stopped and sorted(third) == list(range(RUNGS[1] + 1, FULL + 1))  # and no step past the end

    joined = {**{s: v for s, v in first.items() if s <= RUNGS[0]},
              **{s: v for s, v in second.items() if s <= RUNGS[1]}, **third}
    assert sorted(joined) == sorted(whole)
    # measured: the same noise (the RNG comes back with the state); only which image a step
    # sees differs (one epoch of k copies against k epochs), by at most the data spread
    gaps = [abs(joined[s] - whole[s]) for s in whole]
    assert max(gaps) <= SPREAD + 1e-6, gaps
    assert abs(sum(third.values()) / len(third) - sum(whole[s] for s in third) / len(third)) < SPREAD / 2


def test_resume_alone_restarts_the_step_counter_in_the_fake_as_at_the_pin(sdxl, image_folder, tmp_path):
    """What the fake copies from train_network.py: ``--resume`` alone logs steps from 1 again,
    from the first batch of the saved step's epoch to the last epoch (or ``--max_train_steps``
    more); past the first epoch the skip counts from ``S mod L``."""
    run_dir = tmp_path / "run"
    _, spec, _ = _launch(sdxl, run_dir, image_folder, stop_at_step=RUNGS[0])
    state = sdxl.paused_state(spec.output_dir, RUNGS[0])
    python = make_fake_python(tmp_path / "plain")
    from tests.fakes import FAKE_TRAINER

    def plain(tag: str, *flags: str) -> list[int]:
        logs = tmp_path / tag
        subprocess.run([str(python), str(FAKE_TRAINER), "--output_dir", str(tmp_path / f"{tag}-out"),
                        "--logging_dir", str(logs), "--max_train_steps", str(FULL), *flags],
                       check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, BRACKET_FAKE_EPOCH_BATCHES="3"))
        return sorted(logged_losses(logs))

    epochs_left = FULL // 3 - RUNGS[0] // 3  # 3 batches an epoch here
    assert plain("alone", "--resume", str(state)) == list(range(1, 3 * epochs_left + 1))
    assert plain("skip", "--resume", str(state), "--skip_until_initial_step")[0] == RUNGS[0] % 3 + 1


def test_pause_and_resume_flags(sdxl, image_folder, tmp_path):
    config = sdxl.config_from_dict({**sdxl.baseline_config().knobs, "lr_scheduler": "linear", "lr_warmup_steps": 0})
    paused = sdxl.prepare_run(RunRequest(run_dir=tmp_path / "a", knobs=config, dataset=image_folder,
                                         max_steps=90, seed=1, save_every_n_steps=20, stop_at_step=30))
    assert value_of(paused.cmd, "--save_every_n_steps") == "10" and "--save_state" in paused.cmd
    assert value_of(paused.cmd, "--max_train_steps") == "90" and paused.pause_step == 30
    resumed = sdxl.prepare_run(RunRequest(run_dir=tmp_path / "a", knobs=config, dataset=image_folder,
                                          max_steps=90, seed=1, resume_from=tmp_path / "s", resume_step=30))
    assert value_of(resumed.cmd, "--resume") == str(tmp_path / "s") and "--skip_until_initial_step" in resumed.cmd
    assert value_of(resumed.cmd, "--initial_step") == "30" and resumed.pause_step is None
    plain = sdxl.prepare_run(RunRequest(run_dir=tmp_path / "b", knobs=config, dataset=image_folder,
                                        max_steps=90, seed=1))
    assert "--save_state" not in plain.cmd and "--skip_until_initial_step" not in plain.cmd


def test_full_fine_tune_restarts_and_pauses_with_weights_only(build, image_folder, tmp_path):
    trainer = build("sdxl-full")
    assert trainer.resume_mode == "restart"
    config = trainer.config_from_dict(trainer.baseline_config().knobs)
    spec = trainer.prepare_run(RunRequest(run_dir=tmp_path / "r", knobs=config, dataset=image_folder,
                                          max_steps=90, seed=1, stop_at_step=30))
    assert value_of(spec.cmd, "--save_every_n_steps") == "30" and "--save_state" not in spec.cmd


def test_the_true_step_wins_over_a_run_local_one_and_the_state_is_read_without_it(sdxl, image_folder, tmp_path):
    """A promotion that passes no resume step goes on from the state's ``train_state.json``; a
    state saved after an old ``--resume`` alone records the run-local step, and the true step
    (``resume_step``) overrides it through ``--initial_step``."""
    import shutil

    _, spec, _ = _launch(sdxl, tmp_path / "a", image_folder, stop_at_step=RUNGS[0])
    state = sdxl.paused_state(spec.output_dir, RUNGS[0])
    unknown, _, _ = _launch(sdxl, tmp_path / "b", image_folder, resume_from=state)
    assert sorted(unknown) == list(range(RUNGS[0] + 1, FULL + 1))
    local = tmp_path / "local-state"
    shutil.copytree(state, local)
    (local / "train_state.json").write_text(json.dumps({"current_epoch": 1, "current_step": 3}))
    told, _, _ = _launch(sdxl, tmp_path / "c", image_folder, resume_from=local, resume_step=RUNGS[0])
    assert sorted(told) == list(range(RUNGS[0] + 1, FULL + 1))
