"""The fake trainer and fake python that every engine test relies on behave as documented."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from argparse import Namespace

import pytest
from PIL import Image

from bracket.session.process import Runner
from bracket.session.scoring import ScalarReader, collect_samples, read_scalars
from tests.fakes import FAKE_PYTHON_LOG_ENV, FAKE_TRAINER, fake_trainer_spec, make_fake_python, write_fake_plan

pytestmark = pytest.mark.timeout(60)


def _load_fake_module():
    spec = importlib.util.spec_from_file_location("fake_trainer", FAKE_TRAINER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fake = _load_fake_module()


def _final_loss(lr: float, optimizer: str = "AdamW", seed: int = 1, scheduler: str = "constant") -> float:
    args = Namespace(max_train_steps=100, seed=seed, learning_rate=lr, optimizer_type=optimizer,
                     lr_scheduler=scheduler, lr_warmup_steps=0)
    return sum(fake.loss_curve(args, {"ok"})[-10:]) / 10


def _run(tmp_path, *args, mode="ok", max_steps=10, **env):
    spec = fake_trainer_spec(tmp_path, *args, mode=mode, max_steps=max_steps, **env)
    return spec, Runner(spec, tmp_path / "run.log").run(poll_interval=0.1)


def test_writes_tfevents_pngs_and_a_model(tmp_path):
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("a red circle --d 42 --w 48 --h 40\n# comment\n\na blue square --d 7\n")
    spec, result = _run(tmp_path, "--sample_prompts", str(prompts), "--sample_every_n_steps", "4",
                        "--sample_at_first", "--learning_rate", "3e-4", "--unknown_flag", "1")
    assert result.exit_code == 0
    events = list(spec.logging_dir.glob("*/network_train/events.out.tfevents.*"))
    assert len(events) == 1
    series = read_scalars(spec.logging_dir)
    assert [s for s, _ in series["loss/current"]] == list(range(1, 11))
    assert len(series["loss/average"]) == 10
    samples = collect_samples(spec.sample_dir)
    assert sorted({s.step for s in samples}) == [0, 4, 8, 10]  # at first, every 4, at the end
    assert {(s.prompt_index, s.seed) for s in samples} == {(0, 42), (1, 7)}
    assert all(s.output_name == "fake" for s in samples)
    with Image.open(next(s.path for s in samples if s.prompt_index == 0)) as image:
        assert image.format == "PNG" and image.size == (48, 40)
    assert (spec.output_dir / "fake.safetensors").exists()
    recorded = json.loads((spec.output_dir / "fake_args.json").read_text())
    assert recorded["args"]["learning_rate"] == 3e-4
    assert recorded["unknown"] == ["--unknown_flag", "1"]


def test_loss_landscape_is_a_bowl_around_an_optimizer_dependent_optimum():
    adam = {lr: _final_loss(lr) for lr in (3e-6, 3e-5, 3e-4, 3e-3, 3e-2)}
    assert min(adam, key=adam.get) == 3e-4
    assert adam[3e-5] < adam[3e-6] and adam[3e-3] < adam[3e-2]
    sgd = {lr: _final_loss(lr, "SGD") for lr in (3e-4, 3e-3, 3e-2)}
    assert min(sgd, key=sgd.get) == 3e-3
    assert _final_loss(3e-5, "Lion") < _final_loss(3e-4, "Lion")
    assert _final_loss(1.0, "Prodigy") < 0.2  # lr is a multiplier there, no divergence at 1.0
    assert _final_loss(3e-4, seed=1) != _final_loss(3e-4, seed=2)  # seed noise
    assert _final_loss(3e-4, scheduler="cosine") < _final_loss(3e-4, scheduler="constant")


def test_divergence_above_threshold_and_nan_mode(tmp_path):
    args = Namespace(max_train_steps=20, seed=0, learning_rate=0.1, optimizer_type="AdamW",
                     lr_scheduler="constant", lr_warmup_steps=0)
    rising = fake.loss_curve(args, {"ok"})
    assert rising[-1] > rising[0] + 1.0
    args.learning_rate = 3e-4
    assert fake.loss_curve(args, {"diverge"})[-1] > 2.0
    nan = fake.loss_curve(args, {"nan"})
    assert math.isfinite(nan[9]) and all(math.isnan(v) for v in nan[10:])


def test_modes_nosamples_noevents_exit1(tmp_path):
    prompts = tmp_path / "p.txt"
    prompts.write_text("x --d 1\n")
    spec, result = _run(tmp_path / "a", "--sample_prompts", str(prompts), mode="nosamples,noevents")
    assert result.exit_code == 0
    assert collect_samples(spec.sample_dir) == [] and read_scalars(spec.logging_dir) == {}
    spec, result = _run(tmp_path / "b", mode="exit1")
    assert result.exit_code == 1
    assert [s for s, _ in read_scalars(spec.logging_dir)["loss/current"]] == [1, 2, 3, 4, 5]


def test_musubi_sample_style(tmp_path):
    prompts = tmp_path / "p.txt"
    prompts.write_text("x --d 3\n")
    spec, result = _run(tmp_path, "--sample_prompts", str(prompts), BRACKET_FAKE_SAMPLE_STYLE="musubi")
    samples = collect_samples(spec.sample_dir, frames=True)
    assert [(s.step, s.seed, s.frame) for s in samples] == [(10, 3, 0)]


def test_plan_gives_each_run_its_own_mode(tmp_path):
    plan = write_fake_plan(tmp_path / "plan.json", ["ok", "exit1,nosamples"])
    codes = [_run(tmp_path / f"run{i}", BRACKET_FAKE_PLAN=str(plan))[1].exit_code for i in range(3)]
    assert codes == [0, 1, 0]  # the third run finds the plan empty: ok
    assert json.loads(plan.read_text()) == []


def test_unknown_mode_and_missing_dataset_config_fail(tmp_path):
    _, result = _run(tmp_path / "a", mode="explode")
    assert result.exit_code != 0 and "unknown BRACKET_FAKE_MODE" in "\n".join(result.log_tail)
    _, result = _run(tmp_path / "b", "--dataset_config", str(tmp_path / "none.toml"))
    assert result.exit_code == 1 and "dataset config not found" in result.log_tail[-1]


def test_fake_python_strips_accelerate_and_replaces_itself(tmp_path):
    python = make_fake_python(tmp_path / "venv" / "bin")
    assert os.access(python, os.X_OK)
    calls = tmp_path / "calls.jsonl"
    env = dict(os.environ, **{FAKE_PYTHON_LOG_ENV: str(calls)})
    script = tmp_path / "show.py"
    script.write_text("import os, sys, json; print(json.dumps([os.getpid(), sys.argv[1:]]))")
    out = tmp_path / "out.txt"
    with open(out, "w") as handle:
        process = subprocess.Popen(
            [str(python), "-m", "accelerate.commands.launch", "--num_cpu_threads_per_process", "1",
             "--multi_gpu", "--mixed_precision=bf16", str(script), "--a", "b"],
            stdout=handle, env=env,
        )
        assert process.wait(timeout=30) == 0
    pid, argv = json.loads(out.read_text())
    assert pid == process.pid  # execv: no extra process in between
    assert argv == ["--a", "b"]
    with open(out, "w") as handle:
        subprocess.run([str(python), "-c", "import sys; print(sys.executable)"], stdout=handle, env=env, check=True)
    assert out.read_text().strip() == sys.executable
    assert len(calls.read_text().splitlines()) == 2


def test_slow_and_hang_printing(tmp_path):
    spec = fake_trainer_spec(tmp_path / "slow", mode="slow", max_steps=4, BRACKET_FAKE_STEP_SECONDS="0.1")
    seen: list[int] = []
    reader = ScalarReader(spec.logging_dir)
    result = Runner(spec, tmp_path / "slow.log").run(on_poll=lambda: seen.append(reader.poll()), poll_interval=0.05)
    assert result.exit_code == 0 and result.duration_s >= 0.4
    reader.poll()
    assert len(reader.loss_series()) == 4 and len([n for n in seen if n]) >= 2  # read while it ran
    spec = fake_trainer_spec(tmp_path / "printing", mode="hang_printing")
    result = Runner(spec, tmp_path / "printing.log", timeout_s=0.6).run()
    assert result.timed_out and result.log_tail[-1].startswith("still working")
