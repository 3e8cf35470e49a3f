#!/usr/bin/env python3
"""A fake trainer that pauses and resumes as the demo does, in a fraction of a second.

Flags of ``demo_train.py`` (unknown ones ignored). Loss at step s: ``q + (1 - q) / s`` plus
nothing random, with ``q = 0.1 + 0.2 * |log10(lr) + 2.5|`` — a config's order is the same at
every step, so a test knows which config the rule must keep. ``--stop_at_step N`` writes
``<output_dir>/demo-step<N:08d>-state/`` (``train_state.json``, then ``COMPLETE``) and exits;
``--resume DIR`` goes on from that state's step, logging true steps (or, with
``BRACKET_FAKE_PAUSE_RECOUNT=1``, from 1 again, as sd-scripts does without
``--skip_until_initial_step``). ``BRACKET_FAKE_PAUSE_HANG=1``: after a pause state is
complete, keep running (a trainer that cannot stop itself). ``--save_every_n_steps N`` with
``--save_state`` writes ``demo-step<N:08d>-state/`` every N steps; ``BRACKET_FAKE_PAUSE_FAIL_AT=K``
exits 1 after step K (a long run dying half way). ``BRACKET_FAKE_PAUSE_STEP_SECONDS``: the time
per step (default 0); ``BRACKET_FAKE_PAUSE_LAUNCH_LOG=FILE``: each launch appends a JSON line to
FILE as it starts and as it ends (output folder, pid, first step, last step, time), so a test of
several workers sees which launches of one run overlapped. ``BRACKET_FAKE_PAUSE_OVERRUN=N``: train
(and sample) N steps past the pause step before stopping, as sd-scripts goes on until it is stopped.
``BRACKET_FAKE_PAUSE_NO_STATE=1``: its state at the pause step never completes, so it never pauses and
trains to its full length (as sd-scripts does when the pause is never judged complete).

With ``--sample_prompts`` and ``--sample_every_n_steps`` it writes one sample image per prompt
(``<output_dir>/sample/demo_<step:06d>_<ii>_<stamp>_<seed>.png``, as the demo names them) at
every sample step, the pause step and the last: a flat colour whose red grows with the rate's
distance to 3e-3 (``red``: ``255 * min(1, |log10(lr) + 2.5| / 2)``) — the config the loss ranks
last looks reddest, so a judge that reads colour can disagree with the loss.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    for flag in ("--output_dir", "--logging_dir", "--resume", "--sample_prompts"):
        parser.add_argument(flag, default=None)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--max_train_steps", type=int, default=10)
    parser.add_argument("--stop_at_step", type=int, default=None)
    parser.add_argument("--sample_every_n_steps", type=int, default=None)
    parser.add_argument("--save_every_n_steps", type=int, default=None)
    parser.add_argument("--save_state", action="store_true")
    args, _ = parser.parse_known_args()
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    output = Path(args.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    prompts = ([line for line in Path(args.sample_prompts).read_text().splitlines() if line.strip()]
               if args.sample_prompts and args.sample_every_n_steps else [])
    red = round(255 * min(1.0, abs(math.log10(args.learning_rate) + 2.5) / 2))
    start = 0
    if args.resume:
        start = json.loads((Path(args.resume) / "train_state.json").read_text())["current_step"]
    restart_count = os.environ.get("BRACKET_FAKE_PAUSE_RECOUNT") == "1"
    folder = Path(args.logging_dir) / time.strftime("%Y%m%d%H%M%S") / "network_train"
    writer = EventFileWriter(str(folder))
    quality = 0.1 + 0.2 * abs(math.log10(args.learning_rate) + 2.5)
    step_seconds = float(os.environ.get("BRACKET_FAKE_PAUSE_STEP_SECONDS") or 0)
    launch_log = os.environ.get("BRACKET_FAKE_PAUSE_LAUNCH_LOG")

    def note(event: str, step: int) -> None:
        if launch_log:
            with open(launch_log, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"event": event, "output": str(output.resolve()), "pid": os.getpid(),
                                         "step": step, "time": time.time()}) + "\n")

    note("start", start)
    stop = args.stop_at_step if args.stop_at_step and start < args.stop_at_step < args.max_train_steps else None
    if os.environ.get("BRACKET_FAKE_PAUSE_NO_STATE") == "1":
        stop = None
    step = start
    while step < args.max_train_steps:
        step += 1
        time.sleep(step_seconds)
        loss = quality + (1 - quality) / step
        logged = step - start if restart_count else step
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="loss/current", simple_value=loss)])
        writer.add_event(event_pb2.Event(wall_time=time.time(), step=logged, summary=summary))
        writer.flush()
        if args.save_state and args.save_every_n_steps and step % args.save_every_n_steps == 0 or step == stop:
            state = output / f"demo-step{step:08d}-state"
            state.mkdir(exist_ok=True)
            (state / "train_state.json").write_text(json.dumps({"current_step": step}))
            (state / "COMPLETE").write_text(str(step))
        if prompts and (step % args.sample_every_n_steps == 0 or step in (stop, args.max_train_steps)):
            sample(output / "sample", step, len(prompts), red)
        if step == int(os.environ.get("BRACKET_FAKE_PAUSE_FAIL_AT") or 0):
            raise SystemExit(1)
        if stop and step == stop + int(os.environ.get("BRACKET_FAKE_PAUSE_OVERRUN") or 0):
            writer.close()
            note("end", step)
            while os.environ.get("BRACKET_FAKE_PAUSE_HANG") == "1":
                time.sleep(0.1)
            return
    writer.close()
    (output / "demo.safetensors").write_bytes(b"")
    note("end", step)


def sample(folder: Path, step: int, count: int, red: int) -> None:
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        Image.new("RGB", (8, 8), (red, 40, 40)).save(
            folder / f"demo_{step:06d}_{index:02d}_{time.strftime('%Y%m%d%H%M%S')}_{index + 1}.png")


if __name__ == "__main__":
    main()
