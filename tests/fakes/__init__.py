"""Test doubles for real trainers: a fake ``python`` and a fake sd-scripts-style trainer.

Adapters build commands like ``<trainer python> -m accelerate.commands.launch [accelerate
options] <script> <args>``. Tests point the trainer-python field at :func:`make_fake_python`
(an executable that drops the accelerate part and runs the script with this interpreter,
replacing itself so no extra process remains) and the script at :data:`FAKE_TRAINER`, a real
executable that writes tfevents and PNG samples the way sd-scripts does (see its docstring
for the loss landscape and the failure modes chosen by ``BRACKET_FAKE_MODE`` /
``BRACKET_FAKE_PLAN``).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

FAKES_DIR = Path(__file__).resolve().parent
FAKE_TRAINER = FAKES_DIR / "fake_trainer.py"
#: the modules the fake trainer imports from its own folder
FAKE_TRAINER_MODULES = ("fake_state.py", "fake_outputs.py")


def copy_fake_trainer(dest: Path) -> Path:
    """The fake trainer copied to ``dest`` (a checkout-shaped name, an odd folder), with the
    modules it imports beside it; returns ``dest``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(FAKE_TRAINER, dest)
    for module in FAKE_TRAINER_MODULES:
        shutil.copy2(FAKES_DIR / module, dest.parent / module)
    return dest

#: environment variable: when set, the fake python appends each argv it gets (JSON) to this file
FAKE_PYTHON_LOG_ENV = "BRACKET_FAKE_PYTHON_LOG"

_FAKE_PYTHON = '''#!{python}
"""A stand-in for a trainer venv's python (written by tests/fakes.make_fake_python).

``-m accelerate.commands.launch [accelerate options] SCRIPT ARGS...`` runs
``{python} SCRIPT ARGS...`` (``-m``/``--module`` after the launcher runs a module);
anything else is passed to the real interpreter unchanged. It replaces itself (os.execv).
"""
import json
import os
import sys

PYTHON = {python!r}
# accelerate launch options that take no value
FLAGS = {{
    "--cpu", "--multi_gpu", "--tpu", "--ipex", "--use_deepspeed", "--use_fsdp",
    "--use_megatron_lm", "--use_xpu", "--quiet", "-q", "--debug", "--no_python",
    "--same_network", "--enable_cpu_affinity",
}}

args = sys.argv[1:]
log = os.environ.get({log_env!r})
if log:
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(args) + "\\n")
if len(args) >= 2 and args[0] == "-m" and args[1] in ("accelerate.commands.launch", "accelerate"):
    rest = args[2:]
    if args[1] == "accelerate" and rest[:1] == ["launch"]:
        rest = rest[1:]
    as_module = False
    i = 0
    while i < len(rest) and rest[i].startswith("-"):
        option = rest[i]
        if option in ("-m", "--module"):
            as_module = True
            i += 1
        elif option in FLAGS or "=" in option:
            i += 1
        else:
            i += 2
    target = rest[i:]
    if not target:
        sys.stderr.write("fake accelerate: no training script given\\n")
        sys.exit(2)
    argv = [PYTHON] + (["-m"] if as_module else []) + target
else:
    argv = [PYTHON] + args
os.execv(PYTHON, argv)
'''


def make_fake_python(directory: Path, name: str = "python") -> Path:
    """Write an executable fake python into ``directory`` and return its path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(_FAKE_PYTHON.format(python=sys.executable, log_env=FAKE_PYTHON_LOG_ENV), encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def write_fake_plan(path: Path, runs: Sequence[str | Sequence[str]]) -> Path:
    """Write a BRACKET_FAKE_PLAN file: one entry (a comma list of modes) per run, in order."""
    entries = [r if isinstance(r, str) else ",".join(r) for r in runs]
    Path(path).write_text(json.dumps(entries), encoding="utf-8")
    return Path(path)


def fake_env(mode: str = "ok", **extra: str) -> dict[str, str]:
    """A subprocess environment for the fake trainer: ours plus BRACKET_FAKE_MODE."""
    env = dict(os.environ)
    env["BRACKET_FAKE_MODE"] = mode
    env["PYTHONUNBUFFERED"] = "1"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def fake_trainer_spec(
    run_dir: Path,
    *trainer_args: str,
    mode: str = "ok",
    max_steps: int = 10,
    python: Path | None = None,
    **env_extra: str,
):
    """A LaunchSpec that runs the fake trainer through the fake python's accelerate path.

    Outputs go to ``run_dir/output`` (samples in ``output/sample``) and tfevents under
    ``run_dir/logs``; ``trainer_args`` are appended to the fake trainer's flags.
    """
    from bracket.trainer.base import LaunchSpec, make_accelerate_launch_prefix

    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    python = python or make_fake_python(run_dir / "bin")
    output_dir, logging_dir = run_dir / "output", run_dir / "logs"
    cmd = make_accelerate_launch_prefix(python) + [
        str(FAKE_TRAINER),
        "--output_dir", str(output_dir),
        "--output_name", "fake",
        "--logging_dir", str(logging_dir),
        "--max_train_steps", str(max_steps),
        *trainer_args,
    ]
    return LaunchSpec(
        cmd=cmd, cwd=run_dir, env=fake_env(mode, **env_extra), output_dir=output_dir,
        logging_dir=logging_dir, sample_dir=output_dir / "sample", max_steps=max_steps,
    )


INVENTORY_TRAINER = FAKES_DIR / "inventory_trainer.py"


def flag_table_from_spec(spec: dict, *, drop: tuple[str, ...] = ()) -> dict[str, object]:
    """One inventory entry's flags as {flag: store_true | * | [choices] | value} (``-h`` and ``drop`` left out)."""
    table: dict[str, object] = {}
    for flag in spec["flags"]:
        if flag in ("-h", "--help") or flag in drop:
            continue
        if flag in spec.get("no_value", []):
            table[flag] = "store_true"
        elif flag in spec.get("nargs", {}):
            table[flag] = "*"
        elif flag in spec.get("choices", {}):
            table[flag] = [str(c) for c in spec["choices"][flag]]
        else:
            table[flag] = "value"
    return table


def install_inventory_scripts(root: Path, repo: str, scripts: Sequence[str]) -> Path:
    """Put an inventory-parsing stand-in (``inventory_trainer.py``) at each of ``scripts`` (inventory
    keys such as ``sdxl_train_network.py``, ``tools/cache_latents.py``) under ``root``, with that
    script's flags from Bracket's inventory of ``repo``; returns ``root``. Each command they get is
    appended to ``<script folder>/commands.jsonl``.

    musubi-tuner's scripts also keep its cache contract: a cache script writes one file per
    image or video of each dataset of its ``--dataset_config`` into that dataset's
    ``cache_directory`` (latents or text-encoder outputs), and — when cache scripts are installed
    with it — a training script ends with exit 1, as the real one finds no training items, unless
    both files of every item are there."""
    import shutil

    from bracket.trainer.inventory import flags_by_repo

    known = flags_by_repo()[repo]["scripts"]
    musubi = repo == "kohya-ss/musubi-tuner"
    with_caches = musubi and any("cache" in Path(script).name for script in scripts)
    for script in scripts:
        spec = known[script]
        table = flag_table_from_spec(spec)
        target = Path(root) / script
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(INVENTORY_TRAINER, target)
        target.chmod(0o755)
        trains = "cache" not in Path(script).name
        caches = None if trains or not musubi else ("text" if "text_encoder" in Path(script).name else "latent")
        target.with_name(target.stem + ".flags.json").write_text(json.dumps(
            {"script": script, "flags": table, "trains": trains, "fake_trainer": str(FAKE_TRAINER),
             "musubi_cache": caches, "needs_cache": trains and with_caches}), encoding="utf-8")
    return Path(root)


def logged_losses(logging_dir: Path, skip: set[Path] = frozenset(), tag: str = "loss/current") -> dict[int, float]:
    """``{step: loss}`` of the event files under ``logging_dir`` (less those in ``skip``)."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    series: dict[int, float] = {}
    for path in sorted(Path(logging_dir).glob("**/events.out.tfevents.*")):
        if path not in skip:
            for event in EventFileLoader(str(path)).Load():
                for value in event.summary.value:
                    if value.tag == tag:
                        series[event.step] = value.simple_value
    return series


def group_alive(group: int) -> bool:
    """Whether a process of process group ``group`` is still there."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def run_until_paused(trainer, spec, log: Path, tag: str = "loss/current",
                     **env_extra: str) -> tuple[dict[int, float], bool]:
    """Run ``spec`` to its end or, with a ``pause_step``, until ``trainer.paused_state`` names its
    state and then stop it as the session does (SIGTERM to its process group: ``accelerate launch``
    runs the trainer as a child); the launch's losses and whether it was stopped. The trainer's
    output goes to ``log``."""
    import signal
    import subprocess

    from tests.fakes.waiting import wait_until

    events = Path(spec.logging_dir)
    before = set(events.glob("**/events.out.tfevents.*")) if events.is_dir() else set()
    stopped = False
    with open(log, "ab") as out:
        process = subprocess.Popen(spec.cmd, cwd=spec.cwd, env={**spec.env, **env_extra}, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        def paused() -> bool:
            return bool(spec.pause_step) and trainer.paused_state(spec.output_dir, spec.pause_step) is not None

        if wait_until(lambda: "paused" if paused() else process.poll() is not None, 600, "the run's end or pause") \
                == "paused":
            os.killpg(process.pid, signal.SIGTERM)
            stopped = True
        process.wait(timeout=30)
        if stopped:  # the rest of the group (the trainer under the launcher) has gone too
            wait_until(lambda: not group_alive(process.pid), 30, "the stopped trainer's process group gone")
    assert stopped or process.returncode == 0, Path(log).read_text(errors="replace")[-2000:]
    return logged_losses(events, before, tag), stopped
