"""Every preset's commands against the trainers' flag inventory (bracket/trainer/inventory).

One test per preset in ``bracket.registry.PRESETS`` — presets added later are covered
automatically. For the baseline, every curated config and 50 configs sampled from the
search space (seeded Optuna RandomSampler), the LaunchSpec is built with fake inputs and
checked: the script is in the inventory, every flag exists for it, value-less flags carry no
value, choice values are allowed, required flags are present, the ``accelerate launch``
prefix is there, the per-run dataset TOML uses only allowed keys, and no absolute path
points outside the given inputs and run folder. An ai-toolkit preset's job file is checked against
the keys the pinned ai-toolkit reads (``bracket/trainer/inventory/ai-toolkit.json``). Presets whose
script is not in the inventory (the CPU demo, LLM trainers) get the checks that do not need the
inventory, then skip.

A preset with a ``device`` field is checked in both modes, ``gpu`` and ``cpu``; on the CPU
an sd-scripts command (pre-cache tools included) must also be fp32 throughout —
``--mixed_precision no`` for accelerate and the script — with no GPU-only memory flag.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import optuna
import pytest

from bracket.registry import PRESETS
from bracket.trainer.ai_toolkit.base import AiToolkitTrainer
from bracket.trainer.base import LaunchSpec, RunRequest, Trainer
from bracket.trainer.heldout import ValidationPlan
from bracket.trainer.inventory.ai_toolkit import job_problems
from bracket.trainer.prompts import SamplePrompt
from bracket.trainer.sd_scripts.base import GPU_ONLY_FLAGS
from tests.contract.fakes import built_trainer
from tests.contract.inventory import find_script, flag_problems, load_inventory, toml_problems

SAMPLED_CONFIGS = 50
PROMPTS = [SamplePrompt("a red fox in the snow", seed=11), SamplePrompt("a lighthouse at dusk", seed=12, width=768)]
FLAGS, KEYS = load_inventory()


def _configs(trainer) -> list[tuple[str, dict]]:
    space = trainer.declare_search_space()
    configs = [("baseline", trainer.baseline_config().knobs)]
    configs += [(f"curated:{c.name}", c.knobs) for c in trainer.curated_configs()]
    optuna.logging.set_verbosity(logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1234))
    for n in range(SAMPLED_CONFIGS):
        configs.append((f"sampled:{n}", space.suggest(study.ask())))
    return configs


def _absolute_words(spec: LaunchSpec) -> list[str]:
    words: list[str] = []
    for word in spec.cmd:
        for part in (word, word.split("=", 1)[-1]):
            if part.startswith(("/", "\\")) or (len(part) > 2 and part[1] == ":" and part[2] in "/\\"):
                words.append(part)
    return words


def _outside(words: list[str], roots: list[Path]) -> list[str]:
    resolved = [r.resolve() for r in roots]
    return [w for w in words if not any(Path(w).resolve().is_relative_to(r) for r in resolved)]


def _check_common(spec: LaunchSpec, run_dir: Path, inputs_root: Path) -> list[str]:
    problems = [f"absolute path outside inputs and run dir: {w}"
                for w in _outside(_absolute_words(spec), [inputs_root])]
    if not Path(spec.output_dir).resolve().is_relative_to(run_dir.resolve()):
        problems.append(f"output_dir {spec.output_dir} is not under the run dir")
    if spec.logging_dir is not None and not Path(spec.logging_dir).resolve().is_relative_to(run_dir.resolve()):
        problems.append(f"logging_dir {spec.logging_dir} is not under the run dir")
    if not spec.loss_tags:
        problems.append("no loss tags")
    return problems


def _check_inventory(spec: LaunchSpec, entry) -> list[str]:
    problems = flag_problems(spec.cmd[entry.index + 1:], entry.spec)
    prefix = spec.cmd[:entry.index]
    if "accelerate.commands.launch" not in prefix and not ("accelerate" in prefix and "launch" in prefix):
        problems.append("accelerate launch prefix missing")
    if "--dataset_config" in spec.cmd:
        toml = Path(spec.cmd[spec.cmd.index("--dataset_config") + 1])
        problems += [f"dataset TOML: {p}" for p in toml_problems(toml, entry.repo, KEYS)]
    return problems


def _check_cpu_mode(spec: LaunchSpec, entry) -> list[str]:
    """On the CPU: fp32 for accelerate and the script, no GPU-only memory flag."""
    prefix, args = spec.cmd[:entry.index], spec.cmd[entry.index + 1:]
    problems = [f"{where} --mixed_precision is {words[words.index('--mixed_precision') + 1]!r}, not 'no'"
                for where, words in (("accelerate", prefix), ("script", args))
                if "--mixed_precision" in words and words[words.index("--mixed_precision") + 1] != "no"]
    return problems + [f"GPU-only flag {flag} on the CPU" for flag in GPU_ONLY_FLAGS if flag in args]


def _cases() -> list:
    cases = []
    for preset in PRESETS:
        if any(field.name == "device" for field in preset.fields):
            cases += [pytest.param(preset, device, id=f"{preset.id}-{device}") for device in ("gpu", "cpu")]
        else:
            cases.append(pytest.param(preset, None, id=preset.id))
    return cases


def _pause_and_resume_problems(trainer, dataset: Path, root: Path) -> list[str]:
    """The commands of a run paused at a rung and of its resume (issue 38) against the inventory."""
    config = trainer.config_from_dict(trainer.baseline_config().knobs)
    trainer.validation = None
    problems: list[str] = []
    state = root / "runs" / "paused" / "output" / "state"
    cases = [("pause", {"stop_at_step": 30})]
    if trainer.resume_mode == "continue":  # a "restart" trainer is never resumed by the halving
        cases.append(("resume", {"resume_from": state, "resume_step": 30, "stop_at_step": 60}))
    for label, extra in cases:
        run_dir = root / "runs" / label
        spec = trainer.prepare_run(RunRequest(run_dir=run_dir, knobs=config, dataset=dataset, max_steps=100, seed=7,
                                              sample_prompts=PROMPTS, sample_every_n_steps=10, **extra))
        # in the trainer's own steps: the same share of its run (LLM trainers scale the length)
        expected = round(extra["stop_at_step"] * spec.max_steps / 100)
        pauses = type(trainer).paused_state is not Trainer.paused_state
        if pauses and spec.pause_step != expected:
            problems.append(f"{label}: LaunchSpec.pause_step is {spec.pause_step}, not {expected}")
        entry = find_script(spec.cmd, FLAGS)
        if entry is not None:
            problems += [f"{label}: {p}" for p in _check_common(spec, run_dir, root) + _check_inventory(spec, entry)]
    return problems


@pytest.mark.parametrize(("preset", "device"), _cases())
def test_command_contract(preset, device, tmp_path):
    trainer, _values, dataset, root = built_trainer(preset, tmp_path, device=device, probe=True)
    cpu_checks = device == "cpu"
    failures: list[str] = []
    inventory_script = None
    for n, (name, knobs) in enumerate(_configs(trainer)):
        run_dir = root / "runs" / f"r{n}"
        config = trainer.config_from_dict(knobs)
        # every other run with the session's held-out validation split, where the trainer has one
        trainer.validation = ValidationPlan(0.1, 7) if trainer.validation_tags and n % 2 else None
        spec = trainer.prepare_run(RunRequest(
            run_dir=run_dir, knobs=config, dataset=dataset, max_steps=100, seed=7,
            sample_prompts=PROMPTS, sample_every_n_steps=50, save_every_n_steps=50 if n % 2 else None,
        ))
        problems = _check_common(spec, run_dir, root)
        if trainer.validation is not None and "--validation_split" not in spec.cmd and not spec.eval_loss_tags:
            problems.append("validation is on but the command has no --validation_split")
        if isinstance(trainer, AiToolkitTrainer):  # a job file, checked against the keys the pin reads
            inventory_script = "run.py"
            problems += [f"job file: {p}" for p in job_problems(json.loads(Path(spec.cmd[-1]).read_text("utf-8")))]
        entry = find_script(spec.cmd, FLAGS)
        if entry is not None:
            inventory_script = entry.key
            problems += _check_inventory(spec, entry)
            if cpu_checks and entry.repo == "kohya-ss/sd-scripts":
                problems += _check_cpu_mode(spec, entry)
            if n == 0:
                for setup in trainer.session_setup_commands(dataset=dataset, run_dir=root / "runs" / "setup"):
                    setup_entry = find_script(setup.cmd, FLAGS)
                    if setup_entry is None:
                        problems.append(f"setup command script not in the inventory: {setup.cmd[:6]}")
                    else:
                        problems += [f"setup: {p}" for p in _check_inventory(setup, setup_entry)]
                        if cpu_checks and setup_entry.repo == "kohya-ss/sd-scripts":
                            problems += [f"setup: {p}" for p in _check_cpu_mode(setup, setup_entry)]
        failures += [f"{name}: {p}" for p in problems]
    failures += _pause_and_resume_problems(trainer, dataset, root)
    assert not failures, f"{preset.id}:\n" + "\n".join(failures[:40])
    if inventory_script is None:
        pytest.skip(
            f"{preset.id}: general checks passed; flag-inventory checks skipped because its script "
            f"({preset.trainer_script or 'unknown'}) is not in the inventory"
        )
