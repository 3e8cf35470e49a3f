"""The demo adapter: its command, its knobs, and the pre-flight messages a person sees."""

from __future__ import annotations

import importlib.util
import stat
import sys
import tomllib
from pathlib import Path

import pytest

from bracket.dataset.demo_data import DEMO_PROMPTS, make_demo_dataset
from bracket.registry import get_preset
from bracket.trainer.base import RunRequest, make_accelerate_launch_prefix
from bracket.trainer.demo import adapter as demo
from bracket.trainer.prompts import parse_prompt_lines

_BLOCKING_PYTHON = """#!{python}
# A python whose import of {blocked} fails, as in a venv without them. Supports `-c CODE ARGS`.
import importlib.abc, sys
BLOCKED = {blocked!r}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Block())
if sys.argv[1:2] != ["-c"]:
    sys.exit("fake python: only -c is supported")
code, sys.argv = sys.argv[2], ["-c", *sys.argv[3:]]
exec(compile(code, "<string>", "exec"), {{"__name__": "__main__"}})
"""


def _load_train_script():
    spec = importlib.util.spec_from_file_location("demo_train_under_test", demo.DEMO_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_python(folder: Path, blocked: tuple[str, ...]) -> Path:
    path = folder / "python"
    path.write_text(_BLOCKING_PYTHON.format(python=sys.executable, blocked=blocked))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def dataset(tmp_path) -> Path:
    return make_demo_dataset(tmp_path / "demo-data", count=12)


def test_command_is_accelerate_launch_with_sd_scripts_flags(tmp_path, dataset):
    trainer = demo.DemoLoRA(
        {
            "dataset": str(dataset),
            "trainer_python": "/venv/bin/python",
            "train_script": str(demo.DEMO_SCRIPT),
            "resolution": "32",
            "cpu_threads": "2",
        }
    )
    config = trainer.config_from_dict(trainer.baseline_config().knobs)
    launch = trainer.prepare_run(RunRequest(
        run_dir=tmp_path / "run",
        knobs=config,
        dataset=dataset,
        max_steps=60,
        seed=7,
        sample_prompts=parse_prompt_lines(DEMO_PROMPTS),
        sample_every_n_steps=30,
        save_every_n_steps=30,
        save_state=True,
        resume_from=tmp_path / "state",
    ))
    prefix = make_accelerate_launch_prefix("/venv/bin/python", mixed_precision="no")
    assert launch.cmd[: len(prefix)] == prefix
    assert "--num_cpu_threads_per_process" in prefix and launch.cmd[len(prefix)] == str(demo.DEMO_SCRIPT)
    args = _load_train_script().parse_args(
        launch.cmd[len(prefix) + 1 :]
    )  # the script's own parser accepts it
    assert (args.optimizer_type, args.learning_rate, args.lr_scheduler) == ("AdamW", 1e-4, "cosine")
    assert (args.max_train_steps, args.seed, args.sample_every_n_steps, args.cpu_threads) == (60, 7, 30, 2)
    assert args.sample_at_first and args.save_state and args.resume == str(tmp_path / "state")
    assert args.output_dir == str(launch.output_dir) and launch.sample_dir == launch.output_dir / "sample"
    assert args.logging_dir == str(launch.logging_dir)
    run_toml = tomllib.loads(Path(args.dataset_config).read_text())
    assert run_toml["general"]["batch_size"] == 16 and run_toml["general"]["resolution"] == 32
    assert Path(args.sample_prompts).read_text().splitlines()[0] == "a red circle --d 1"
    assert launch.env["OMP_NUM_THREADS"] == "1"


def test_a_demo_folder_works_in_place_of_its_toml(tmp_path, dataset):
    trainer = demo.DemoLoRA({"dataset": str(dataset.parent), "trainer_python": "python"})
    config = trainer.config_from_dict(trainer.curated_configs()[0].knobs)
    launch = trainer.prepare_run(RunRequest(
        run_dir=tmp_path / "run", knobs=config, dataset=dataset.parent, max_steps=10, seed=1
    ))
    document = tomllib.loads((tmp_path / "run" / "dataset.toml").read_text())
    assert Path(document["datasets"][0]["subsets"][0]["image_dir"]) == (dataset.parent / "images").resolve()
    assert "--sample_prompts" not in launch.cmd and "--cpu_threads" not in launch.cmd


def test_warm_start_configs_fit_the_space_and_spread_the_learning_rate():
    trainer = demo.DemoLoRA({})
    space = trainer.declare_search_space()
    named = [trainer.baseline_config(), *trainer.curated_configs()]
    for config in named:
        space.validate(space.complete(config.knobs))
        assert config.source
    rates = [c.knobs["learning_rate"] for c in named]
    assert max(rates) / min(rates) >= 50  # visibly different runs in the first grid


def test_preflight_names_the_fix_for_a_python_without_torch(tmp_path, dataset):
    python = _fake_python(tmp_path, ("torch", "diffusers"))
    trainer = demo.DemoLoRA({"dataset": str(dataset), "trainer_python": str(python)})
    problems = trainer.preflight_problems()
    assert problems == [
        f"The trainer python {python} cannot import torch, diffusers: run ./install.sh "
        f"(or {python} -m pip install -r requirements.txt)."
    ]


def test_preflight_missing_python_and_missing_dataset(tmp_path):
    trainer = demo.DemoLoRA(
        {"dataset": str(tmp_path / "nowhere" / "dataset.toml"), "trainer_python": str(tmp_path / "no-python")}
    )
    problems = trainer.preflight_problems()
    assert len(problems) == 2
    assert "python -m bracket demo-data" in problems[0] and str(tmp_path / "nowhere") in problems[0]
    assert "does not exist" in problems[1] and "./install.sh" in problems[1]


def test_preflight_an_empty_demo_folder(tmp_path, dataset):
    for image in (dataset.parent / "images").iterdir():
        image.unlink()
    problems = demo.demo_dataset_problems(dataset)
    assert len(problems) == 1 and "python -m bracket demo-data" in problems[0]
    assert "holds no images" in problems[0]


def test_preflight_a_python_that_crashes(tmp_path):
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'Fatal Python error: init_fs_encoding' >&2\nexit 1\n")
    python.chmod(0o755)
    problems = demo.trainer_python_problems(str(python))
    assert problems == [
        f"The trainer python {python} does not run (Fatal Python error: init_fs_encoding); "
        f"run ./install.sh (or {python} -m pip install -r requirements.txt)."
    ]


@pytest.mark.slow  # imports torch, diffusers and accelerate in a subprocess
def test_preflight_passes_with_a_complete_python(tmp_path, dataset):
    trainer = demo.DemoLoRA({"dataset": str(dataset), "trainer_python": sys.executable})
    assert trainer.preflight_problems() == []


def test_the_preset_builds_this_trainer(tmp_path, dataset):
    preset = get_preset("demo-cpu")
    trainer = preset.build_trainer({"dataset": str(dataset), "trainer_python": sys.executable})
    assert isinstance(trainer, demo.DemoLoRA) and trainer.fields["cpu_threads"] == "0"
