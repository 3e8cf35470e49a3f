#!/usr/bin/env python3
"""A fake sd-scripts LoRA trainer: real tfevents and real PNG samples, no model, no GPU.

It accepts sd-scripts-style flags (unknown flags are ignored) and, in well under a second,
"trains" ``--max_train_steps`` steps, writing what the real trainer writes:

* ``<output_dir>/trainer.pid`` (its pid) and ``<output_dir>/fake_args.json`` (parsed flags
  and the ignored ones), so a test can check the command it got;
* tfevents under ``<logging_dir>/<log_prefix><YYYYmmddHHMMSS>/<log_tracker_name or
  network_train>/`` with ``loss/current`` and ``loss/average`` (mean of the last 10) at
  steps 1..N, written with tensorboard's own ``EventFileWriter`` and flushed every step
  (``BRACKET_FAKE_LOSS_TAG=loss``: the loss under ``loss``, as the full fine-tunes log it);
* PNG samples in ``<output_dir>/sample/`` named like sd-scripts
  (``[<output_name>_]<NNNNNN|e000000>_<ii>_<YYYYmmddHHMMSS>[_<seed>].png``) for every line of
  ``--sample_prompts`` (``--d`` seed, ``--w``/``--h`` size capped at 64): ``e000000`` with
  ``--sample_at_first``, every ``--sample_every_n_steps`` steps, and at the last step. With
  ``BRACKET_FAKE_SAMPLE_STYLE=musubi`` the names get musubi's ``_000`` frame suffix; with
  ``BRACKET_FAKE_PLANTED=1`` each shows a subject that fades in with progress and, for a prompt
  with a held-out context word, a context that over-fitting erases (``fake_outputs.planted``);
* with ``--validation_split`` > 0 and ``--validate_every_n_steps``, ``loss/validation/step_average``
  at those steps (and the last): the mean of the last 10 losses, rising by 0.05 per 10 % of the
  run after step ``BRACKET_FAKE_OVERFIT_STEP`` (over-fitting; never when unset);
* ``<output_dir>/<output_name or last>.safetensors`` at the end (a placeholder), and
  ``-step<8 digits>`` files with ``--save_every_n_steps``; with ``--save_state`` also
  ``-step<8 digits>-state`` folders (before that step is logged) and ``<output_name>-state``
  at the end. ``--resume`` (with ``--skip_until_initial_step``, ``--initial_step``) resumes
  as sd-scripts' ``train_network.py`` at the pin: ``tests/fakes/fake_state.py``.
  A ``--dataset_config`` that does not exist is an error (exit 1), as in the real trainer.

The loss landscape (so that a search has something to find; ``s`` is the model's update
count, which a resume restores). With
``x = log10(lr) - log10(optimum(optimizer))``:

* final loss ``= (0.10 + 0.30 * x**2) * sched``, capped at 0.95; ``sched`` is 0.97 for
  cosine, 0.98 linear, 0.99 constant_with_warmup/polynomial, 1.0 otherwise;
* loss at step s ``= final + (1 - final) * exp(-5 * speed * max(0, s - warmup/2) / N)`` with
  ``speed = 10 ** (0.5 * min(x, 0))`` (too low a rate converges slowly); ``N`` is
  ``--max_train_steps``, except for a schedule that does not depend on the run's length
  (constant, constant_with_warmup) where ``BRACKET_FAKE_HORIZON`` sets it: then a run stopped by
  its own ``--max_train_steps`` at a rung trains the same steps as a longer run does there;
* plus Gaussian noise, sd ``0.01 * (1 + 2 * max(x, 0))``, from ``random.Random(seed)``;
* optimum learning rate: 3e-4 AdamW/Adam/AdamW8bit/RAdam and other Adam kinds, 3e-5 Lion,
  3e-3 SGD/SGDNesterov, 1e-2 Adagrad, 1e-3 Adafactor, 1.0 Prodigy/DAdapt*
  (``BRACKET_FAKE_OPTIMUM_LR`` overrides it for every optimizer).
* It diverges (loss ``= 1 + 0.15 * s``, rising) in mode ``diverge`` or when the learning
  rate exceeds ``BRACKET_FAKE_DIVERGE_LR`` (default 0.05; times 100 for Prodigy/DAdapt,
  whose lr is a multiplier near 1).

Modes: ``BRACKET_FAKE_MODE`` (comma list) plus, when ``BRACKET_FAKE_PLAN`` names a JSON
list, its first entry (a comma list), removed from the file under a lock, so each run takes
the next entry (an empty or missing list means ``ok``):

  ok             train normally, exit 0
  exit1          train half the steps, print a trainer traceback and accelerate's, exit 1
  segv           train half the steps, then SIGSEGV itself (exit code -11)
  hang           after the pid files: no output, sleep forever
  hang_printing  after the pid files: print a line every 0.05 s forever
  noevents       write no tfevents
  nan            the loss is NaN from half the steps on
  diverge        the loss rises steadily
  nosamples      write no samples
  spam           first write ``BRACKET_FAKE_SPAM_MB`` (default 50) MB of tqdm-style
                 ``\\r`` progress to stdout, then train
  binary         print a line with NUL bytes and invalid UTF-8 first
  stubborn       ignore SIGTERM (only a kill ends it; combine with ``hang``)
  grandchild     start ``sleep 600`` (not waited for), write its pid to
                 ``<output_dir>/grandchild.pid``, then go on (combine with ``hang``)
  slow           sleep ``BRACKET_FAKE_STEP_SECONDS`` per step (0.2 when unset)
  escapee        fork a child that calls ``setsid`` and forks again, then exits: the
                 grandchild (new session, new group, parent gone) sleeps 600 s and writes
                 its pid to ``<output_dir>/escapee.pid``; then go on
  bareescapee    the same, but the grandchild then runs ``sleep 600`` with an empty
                 environment (``env -i``: no run marker)
  printenv       print each environment variable as ``NAME=VALUE`` first
  short          train half of ``--max_train_steps``, then exit 0 as if done (a trainer that
                 counted another length, or resumed a state at its end)

``BRACKET_FAKE_STEP_SECONDS`` (default 0) is the time per step in every mode.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its modules, also when loaded by path
from fake_outputs import SampleWriter, ScalarWriter  # noqa: E402
from fake_state import TrainingState  # noqa: E402

KNOWN_MODES = {
    "ok", "exit1", "segv", "hang", "hang_printing", "noevents", "nan", "diverge",
    "nosamples", "spam", "grandchild", "slow", "escapee", "binary", "stubborn", "bareescapee", "printenv", "short",
}
ADAPTIVE = ("prodigy", "dadapt")
#: schedules whose rate at a step does not depend on the run's length (``BRACKET_FAKE_HORIZON``)
LENGTH_FREE = ("constant", "constant_with_warmup")
SCHEDULE_FACTOR = {
    "cosine": 0.97, "cosine_with_restarts": 0.97, "linear": 0.98,
    "constant_with_warmup": 0.99, "polynomial": 0.99,
}


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(description="fake sd-scripts trainer")
    add = parser.add_argument
    add("--output_dir", required=True)
    add("--output_name", default=None)
    add("--logging_dir", default=None)
    add("--log_prefix", default="")
    add("--log_tracker_name", default=None)
    add("--learning_rate", type=float, default=1e-4)
    add("--optimizer_type", default="AdamW")
    add("--lr_scheduler", default="constant")
    add("--lr_warmup_steps", type=float, default=0)
    add("--max_train_steps", type=int, default=20)
    add("--seed", type=int, default=0)
    add("--sample_prompts", default=None)
    add("--sample_every_n_steps", type=int, default=None)
    add("--sample_at_first", action="store_true")
    add("--network_dim", type=int, default=None)
    add("--dataset_config", default=None)
    add("--save_every_n_steps", type=int, default=None)
    add("--save_state", action="store_true")
    add("--resume", default=None)
    add("--skip_until_initial_step", action="store_true")
    add("--initial_step", type=int, default=None)
    add("--validation_split", type=float, default=0.0)
    add("--validate_every_n_steps", type=int, default=None)
    return parser.parse_known_args(argv)


def take_plan_entry(plan_path: str) -> list[str]:
    """Pop the first entry of the JSON plan file, under an exclusive lock."""
    path = Path(plan_path)
    with open(path.with_name(path.name + ".lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            entries = json.loads(path.read_text(encoding="utf-8") or "[]") if path.exists() else []
        except json.JSONDecodeError:
            entries = []
        if not entries:
            return []
        first, rest = entries[0], entries[1:]
        temporary = path.with_name(path.name + f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(rest), encoding="utf-8")
        os.replace(temporary, path)
    return first if isinstance(first, list) else [m for m in str(first).split(",")]


def read_modes() -> set[str]:
    modes = [m for m in os.environ.get("BRACKET_FAKE_MODE", "").split(",")]
    plan = os.environ.get("BRACKET_FAKE_PLAN")
    if plan:
        modes += take_plan_entry(plan)
    modes = {m.strip() for m in modes if m.strip()}
    unknown = modes - KNOWN_MODES
    if unknown:
        sys.exit(f"fake trainer: unknown BRACKET_FAKE_MODE {sorted(unknown)}; known: {sorted(KNOWN_MODES)}")
    return modes or {"ok"}


def optimum_lr(optimizer: str) -> float:
    override = os.environ.get("BRACKET_FAKE_OPTIMUM_LR")
    if override:
        return float(override)
    name = optimizer.lower()
    if name.startswith(ADAPTIVE):
        return 1.0
    if "lion" in name:
        return 3e-5
    if name.startswith("sgd"):
        return 3e-3
    if name.startswith("adagrad"):
        return 1e-2
    if name.startswith("adafactor"):
        return 1e-3
    return 3e-4


def loss_function(args: argparse.Namespace, modes: set[str]):
    """The loss of the model's ``trained``-th update, noise from ``rng`` (see the module docstring)."""
    steps = max(1, args.max_train_steps)
    horizon = os.environ.get("BRACKET_FAKE_HORIZON")
    if horizon and args.lr_scheduler.lower() in LENGTH_FREE:
        steps = max(1, int(horizon))
    lr = max(args.learning_rate, 1e-12)
    threshold = float(os.environ.get("BRACKET_FAKE_DIVERGE_LR", "0.05"))
    if args.optimizer_type.lower().startswith(ADAPTIVE):
        threshold *= 100
    diverging = "diverge" in modes or lr > threshold
    x = math.log10(lr) - math.log10(optimum_lr(args.optimizer_type))
    final = min(0.95, (0.10 + 0.30 * x * x) * SCHEDULE_FACTOR.get(args.lr_scheduler.lower(), 1.0))
    speed = 10 ** (0.5 * min(x, 0.0))
    noise = 0.01 * (1 + 2 * max(x, 0.0))

    def loss(trained: int, rng: random.Random) -> float:
        if diverging:
            value = 1.0 + 0.15 * trained
        else:
            progress = max(0.0, trained - args.lr_warmup_steps / 2) / steps
            value = final + (1.0 - final) * math.exp(-5.0 * speed * progress)
        value = max(0.001, value + rng.gauss(0.0, noise))
        return float("nan") if "nan" in modes and trained > steps // 2 else value

    return loss


def loss_curve(args: argparse.Namespace, modes: set[str]) -> list[float]:
    """The loss of steps 1..N of a run that is never paused."""
    loss, rng = loss_function(args, modes), random.Random(args.seed)
    return [loss(step, rng) for step in range(1, max(1, args.max_train_steps) + 1)]


def read_prompts(path: str | None) -> list[dict]:
    """The --d/--w/--h and the text of every prompt line of a text prompt file."""
    if not path:
        return []
    prompts = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        options: dict = {k: int(v) for k, v in re.findall(r"--([dwh])\s+(\d+)", line)}
        prompts.append({**options, "text": re.split(r"\s--[a-z]", line)[0]})
    return prompts


def sleep_forever(printing: bool = False) -> None:
    count = 0
    while True:
        if printing:
            count += 1
            print(f"still working... {count}", flush=True)
            time.sleep(0.05)
        else:
            time.sleep(3600)


def spam(megabytes: float) -> None:
    total = int(megabytes * 1024 * 1024)
    written = 0
    chunk = "".join(f"\rsteps: {i % 100:3d}%|{'#' * (i % 40):<40}| {i}/1000000 [00:01<00:00, 999.9it/s]"
                    for i in range(200))
    data = chunk.encode()
    out = sys.stdout.buffer
    while written < total:
        out.write(data)
        written += len(data)
    out.write(b"\n")
    out.flush()


def escape(pid_file: Path, bare: bool = False) -> None:
    """Leave a process that left our session, our group and our tree (setsid + double fork)."""
    child = os.fork()
    if child == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                partial = pid_file.with_suffix(".tmp")
                partial.write_text(str(os.getpid()), encoding="utf-8")
                partial.rename(pid_file)
                if bare:
                    os.execve("/bin/sleep", ["sleep", "600"], {})
                time.sleep(600)
        finally:
            os._exit(0)
    os.waitpid(child, 0)


def fail(scalars, modes: set[str]) -> int:
    if scalars:
        scalars.close()
    if "segv" in modes:
        os.kill(os.getpid(), signal.SIGSEGV)
    # the trainer's own traceback, then the launcher's (as `accelerate launch` prints them)
    print("Traceback (most recent call last):\n  File \"train.py\", line 1, in <module>\n"
          "RuntimeError: fake trainer failure (exit1)\n"
          "Traceback (most recent call last):\n  File \"launch.py\", line 9, in launch_command\n"
          "    raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)\n"
          "subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit status 1.",
          file=sys.stderr, flush=True)
    return 1


def main(argv: list[str]) -> int:
    args, unknown = parse_args(argv)
    modes = read_modes()
    if "stubborn" in modes:  # before the pid file: a test that sees the pid sees it ignoring SIGTERM
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    output_dir = Path(args.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / "trainer.pid").write_text(str(os.getpid()), encoding="utf-8")
    (output_dir / "fake_args.json").write_text(
        json.dumps({"args": vars(args), "unknown": unknown, "modes": sorted(modes)}, indent=1), encoding="utf-8"
    )
    print(f"fake trainer: pid {os.getpid()} modes {','.join(sorted(modes))}", flush=True)
    if args.dataset_config and not Path(args.dataset_config).exists():
        print(f"FileNotFoundError: dataset config not found: {args.dataset_config}", file=sys.stderr)
        return 1
    if "grandchild" in modes:
        child = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL)
        (output_dir / "grandchild.pid").write_text(str(child.pid), encoding="utf-8")
    if "escapee" in modes or "bareescapee" in modes:
        escape(output_dir / "escapee.pid", bare="bareescapee" in modes)
    if "printenv" in modes:
        print("".join(f"{name}={value}\n" for name, value in sorted(os.environ.items())), end="", flush=True)
    if "hang" in modes:
        sleep_forever()
    if "hang_printing" in modes:
        sleep_forever(printing=True)
    if "binary" in modes:  # a NUL byte, invalid UTF-8 and a control character, as a crashing trainer may print
        sys.stdout.buffer.write(b"garbage \x00 NUL \xff\xfe bad utf-8 \x1b[31m escape\x00\n")
        sys.stdout.flush()
    if "spam" in modes:
        spam(float(os.environ.get("BRACKET_FAKE_SPAM_MB", "50")))

    step_seconds = float(os.environ.get("BRACKET_FAKE_STEP_SECONDS", "0.2" if "slow" in modes else "0"))
    if "short" in modes:
        args.max_train_steps = max(1, args.max_train_steps // 2)
    state = TrainingState(args)
    if args.resume:  # model, optimizer, scheduler, RNG and the saved step (train_state.json)
        state.load(Path(args.resume))
    epoch_to_start, skip, step = state.start()
    loss_of = loss_function(args, modes)
    steps = max(1, args.max_train_steps)
    scalars = ScalarWriter(args) if args.logging_dir and "noevents" not in modes else None
    prompts = read_prompts(args.sample_prompts) if "nosamples" not in modes else []
    samples = SampleWriter(args, prompts) if prompts else None
    if samples:
        samples.x = math.log10(max(args.learning_rate, 1e-12)) - math.log10(optimum_lr(args.optimizer_type))
    stem = args.output_name or "last"
    if samples and args.sample_at_first:  # before the skip: a resumed run samples as step 0 too
        samples.write("e000000", 1.0, 0.0)
    window: list[float] = []
    last_sampled = None
    loss = 1.0
    for epoch in range(epoch_to_start, state.epochs()):
        state.new_epoch()
        for batch in range(skip, state.epoch_length):
            if step_seconds:
                time.sleep(step_seconds)
            loss = state.update(batch, loss_of)
            step += 1
            window = (window + [loss])[-10:]
            if samples and args.sample_every_n_steps and step % args.sample_every_n_steps == 0:
                samples.write(f"{step:06d}", loss, step / steps)
                last_sampled = step
            if args.save_every_n_steps and step % args.save_every_n_steps == 0:  # the last step too
                (output_dir / f"{stem}-step{step:08d}.safetensors").write_bytes(b"fake")
                if args.save_state:  # before the step is logged, as train_network.py
                    state.save(output_dir / f"{stem}-step{step:08d}-state", epoch + 1, step)
            if scalars:
                scalars.write(step, {os.environ.get("BRACKET_FAKE_LOSS_TAG") or "loss/current": loss,
                                     "loss/average": sum(window) / len(window)})
                every = args.validate_every_n_steps
                if args.validation_split > 0 and every and (step % every == 0 or step == steps):
                    overfit = int(os.environ.get("BRACKET_FAKE_OVERFIT_STEP", "0") or 0)
                    rise = 0.5 * max(0, step - overfit) / steps if overfit else 0.0
                    scalars.write(step, {"loss/validation/step_average": sum(window) / len(window) + rise})
            print(f"steps: {step}/{steps} loss={loss:.4f}", flush=True)
            if step == max(1, steps // 2) and ("exit1" in modes or "segv" in modes):
                return fail(scalars, modes)
            if step >= steps:
                break
        skip = 0
    if args.save_state:  # save_state_on_train_end: <output_name>-state
        state.save(output_dir / f"{stem}-state", state.epochs(), step)
    if samples and last_sampled != step:
        samples.write(f"{step:06d}", loss, step / steps)
    if scalars:
        scalars.close()
    (output_dir / f"{stem}.safetensors").write_bytes(b"fake")
    print("fake trainer: done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
