"""When a paused run's state counts as complete, and the save cadence and epoch size of a paused
run (``bracket.trainer.pause``, ``bracket.trainer.sd_scripts.resume``)."""

from __future__ import annotations

import os
import time
import zipfile
from pathlib import Path

from PIL import Image

from bracket.trainer.pause import (
    ACCELERATE_STATE_FILES,
    accelerate_state_complete,
    logged_past,
    pause_save_every,
)
from bracket.trainer.sd_scripts.resume import one_epoch_repeats


def _state(folder: Path, *, last: bytes | None = None, skip: str = "") -> Path:
    folder.mkdir(parents=True)
    (folder / "train_state.json").write_text('{"current_epoch": 1, "current_step": 5}')
    for name in ACCELERATE_STATE_FILES[:-1]:
        if name != skip:
            (folder / name).write_bytes(b"x")
    rng = folder / ACCELERATE_STATE_FILES[-1]
    if last is None:
        with zipfile.ZipFile(rng, "w") as archive:
            archive.writestr("data.pkl", b"state")
    else:
        rng.write_bytes(last)
    return folder


def test_a_state_is_complete_only_with_every_file_and_a_whole_last_one(tmp_path):
    assert accelerate_state_complete(_state(tmp_path / "whole"), ("train_state.json",))
    assert not accelerate_state_complete(_state(tmp_path / "no-optimizer", skip="optimizer.bin"))
    with zipfile.ZipFile(tmp_path / "z", "w") as archive:
        archive.writestr("data.pkl", b"state" * 1000)
    half = (tmp_path / "z").read_bytes()[:-30]  # the end record not written yet
    assert not accelerate_state_complete(_state(tmp_path / "half", last=half))
    assert not accelerate_state_complete(tmp_path / "missing")


def _events(folder: Path, steps: list[int], tag: str = "loss/current") -> Path:
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    folder.mkdir(parents=True, exist_ok=True)
    writer = EventFileWriter(str(folder))
    for step in steps:
        value = summary_pb2.Summary.Value(tag=tag, simple_value=0.5)
        writer.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary_pb2.Summary(value=[value])))
    writer.close()
    return next(folder.glob("events.out.tfevents.*"))


def test_logged_past_needs_a_later_step_in_a_file_written_since(tmp_path):
    logs = tmp_path / "logs"
    tags = ("loss/current",)
    assert not logged_past(logs, 5, tags)
    early = _events(logs / "a", [1, 2, 3, 4, 5])
    _events(logs / "epochs", [9], tag="loss/epoch")  # a per-epoch scalar: its step is an epoch
    assert not logged_past(logs, 5, tags)  # step 5 is logged, but not the next one
    late = _events(logs / "b", [6])
    assert logged_past(logs, 5, tags)
    old = time.time() - 100
    os.utime(late, (old, old))
    os.utime(early, (old, old))
    assert not logged_past(logs, 5, tags, since=time.time() - 10)  # an earlier launch's events do not count


def test_the_pause_step_is_a_save_step_and_a_requested_cadence_is_kept():
    assert pause_save_every(30, None) == 30
    assert pause_save_every(30, 20) == 10
    assert pause_save_every(30, 15) == 15


def _images(folder: Path, count: int) -> Path:
    folder.mkdir(parents=True)
    for n in range(count):
        Image.new("RGB", (8, 8)).save(folder / f"{n}.png")
    return folder


def test_one_epoch_holds_the_run(tmp_path):
    document = {"general": {"batch_size": 2}, "datasets": [{"subsets": [
        {"image_dir": str(_images(tmp_path / "a", 4)), "num_repeats": 3},
        {"image_dir": str(_images(tmp_path / "b", 2))},
        {"image_dir": str(_images(tmp_path / "reg", 5)), "is_reg": True, "num_repeats": 1},
    ]}]}
    # 4*3 + 2 = 14 images a pass, 90 % kept after validation = 12 (floor), batches of 2
    factor = one_epoch_repeats(document, 101, held_out=0.1)
    assert factor == 17  # 17 * 12 / 2 = 102 >= 101 batches; 16 would give 96
    subsets = document["datasets"][0]["subsets"]
    assert [s.get("num_repeats") for s in subsets] == [51, 17, 1]  # regularisation images follow by themselves
    assert one_epoch_repeats({"datasets": [{"subsets": [{"metadata_file": "m.json"}]}]}, 100) == 1
