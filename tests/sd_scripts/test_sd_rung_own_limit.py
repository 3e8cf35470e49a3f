"""A halving run of an sd-scripts LoRA stops at its rung by the trainer's own ``--max_train_steps``
where the config's schedule does not depend on the run's length, so a trainer of any speed pauses
exactly at the rung (it used to train its whole length before the session's stop reached it); a
schedule that decays over the run keeps its full length. The inventory-parsing fake sd-scripts
saves its state at every save step, the last one included, and at the end, as ``train_network.py``
does (``tests/fakes/fake_state.py``); it trains at 0 s a step."""

from __future__ import annotations

import importlib.util
import json
import shlex
from argparse import Namespace

import pytest

from bracket.session.loop.search_loop import SearchLoop, session_scheduler
from bracket.session.store.rows import RunRow
from bracket.trainer.base import RunRequest
from tests.fakes import FAKE_TRAINER
from tests.sd_scripts.test_sd_full_halving_cost import STEPS, halving_session

pytestmark = pytest.mark.timeout(180)
# STEPS (12, the shared halving session's length): rungs at 4 and 12


def _flag(argv, flag):
    return argv[argv.index(flag) + 1]


@pytest.mark.parametrize(("scheduler", "limit"), [
    ("constant", 4), ("constant_with_warmup", 4), ("cosine", STEPS), ("linear", STEPS)])
def test_a_rung_run_stops_itself_at_the_rung_only_where_its_schedule_does_not_depend_on_its_length(
        build, tmp_path, scheduler, limit):
    trainer = build("sdxl-lora")
    knobs = {**trainer.baseline_config().knobs, "lr_scheduler": scheduler, "lr_warmup_steps": 20}
    paused = RunRequest(knobs=knobs, run_dir=tmp_path / scheduler, dataset=tmp_path, max_steps=STEPS, seed=1,
                        stop_at_step=4)
    argv = trainer.prepare_run(paused).cmd
    assert int(_flag(argv, "--max_train_steps")) == limit
    assert int(_flag(argv, "--save_every_n_steps")) == 4 and "--save_state" in argv
    whole = trainer.prepare_run(RunRequest(knobs=knobs, run_dir=tmp_path / "whole", dataset=tmp_path,
                                           max_steps=STEPS, seed=1)).cmd
    assert int(_flag(whole, "--max_train_steps")) == STEPS


def _straight_losses(argv: list[str]) -> list[float]:
    """The losses of the same run trained straight to its end (the fake's own curve)."""
    spec = importlib.util.spec_from_file_location("fake_trainer_curve", FAKE_TRAINER)
    fake = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fake)
    args = Namespace(max_train_steps=STEPS, seed=int(_flag(argv, "--seed")),
                     learning_rate=float(_flag(argv, "--learning_rate")),
                     optimizer_type=_flag(argv, "--optimizer_type"),
                     lr_scheduler=_flag(argv, "--lr_scheduler"),
                     lr_warmup_steps=int(_flag(argv, "--lr_warmup_steps")) if "--lr_warmup_steps" in argv else 0)
    return fake.loss_curve(args, {"ok"})


def test_a_fast_trainer_pauses_exactly_at_its_rung_and_the_promoted_run_goes_on_from_there(
        field_values, image_folder, tmp_path, runs_dir, monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_HORIZON", str(STEPS))  # the fake's constant schedule: as long as the run
    session = halving_session("sdxl-lora", "sdxl_train_network.py", 3, "own-limit", field_values, image_folder,
                              tmp_path, runs_dir, bounds={})
    loop = SearchLoop(session, session_scheduler(session), wait_s=0.1)
    for _ in range(3):  # the first rung of three configs
        taken = loop.next_work()
        assert taken is not None and taken[0].stop_at == 4
        loop.train(*taken)
    runs = session.store.runs(session.name)
    assert [(r["status"], r["pause_step"], r["last_step"]) for r in runs] == [("paused", 4, 4)] * 3
    assert all(RunRow.of(r).overshoot() == 0 and RunRow.of(r).trained_steps() == 4 for r in runs)
    assert all(max(s for s, _ in r["loss"]) == 4 for r in runs)

    taken = loop.next_work()  # the best goes on to full length from its state at the rung
    assert taken is not None and taken[0].stop_at is None
    loop.train(*taken)
    done = session.store.get_run(taken[0].runs[0])
    commands = [json.loads(line) for line in (tmp_path / "sd-scripts" / "commands.jsonl").read_text().splitlines()]
    trains = [c["argv"] for c in commands if c["script"] == "sdxl_train_network.py"]
    resumed = trains[-1]
    assert _flag(resumed, "--resume").endswith("bracket-step00000004-state"), shlex.join(resumed)
    assert int(_flag(resumed, "--max_train_steps")) == STEPS and _flag(resumed, "--initial_step") == "4"
    assert done["status"] == "done" and done["launches"] == 2 and not done["restart_steps"]
    assert [s for s, _ in done["loss"]] == list(range(1, STEPS + 1))
    assert RunRow.of(done).trained_steps() == STEPS  # nothing trained twice, nothing past a rung
    # the state it paused with is the true state at the rung: the two launches train the run a
    # straight run of the same config trains
    assert [v for _, v in done["loss"]] == pytest.approx(_straight_losses(resumed))
    session.close()
