"""The outputs of the fake sd-scripts trainer: PNG samples and tfevents scalars (``fake_trainer.py``)."""

from __future__ import annotations

import argparse
import math
import os
import random
import time
from pathlib import Path


class SampleWriter:
    """Writes one small PNG per prompt, named the way sd-scripts (or musubi) names them."""

    def __init__(self, args: argparse.Namespace, prompts: list[dict[str, int]]) -> None:
        self.dir = Path(args.output_dir) / "sample"
        self.prefix = f"{args.output_name}_" if args.output_name else ""
        self.prompts = prompts
        self.musubi = os.environ.get("BRACKET_FAKE_SAMPLE_STYLE", "") == "musubi"

    def write(self, label: str, loss: float) -> None:
        from PIL import Image

        self.dir.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d%H%M%S")
        for index, prompt in enumerate(self.prompts):
            seed = prompt.get("d")
            width, height = min(prompt.get("w", 32), 64), min(prompt.get("h", 32), 64)
            name = f"{self.prefix}{label}_{index:02d}_{stamp}" + (f"_{seed}" if seed is not None else "")
            if self.musubi:
                name += "_000"
            rng = random.Random(hash((seed, index)) & 0xFFFFFFFF)
            base = Image.new("RGB", (width, height), tuple(rng.randrange(256) for _ in range(3)))
            sigma = 10.0 + 120.0 * min(1.0, loss if math.isfinite(loss) else 1.0)
            grain = Image.effect_noise((width, height), sigma).convert("RGB")
            Image.blend(base, grain, 0.5).save(self.dir / f"{name}.png")


class ScalarWriter:
    """loss/current and loss/average into a real tfevents file."""

    def __init__(self, args: argparse.Namespace) -> None:
        from tensorboard.compat.proto import event_pb2, summary_pb2
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        self._event_pb2, self._summary_pb2 = event_pb2, summary_pb2
        run = f"{args.log_prefix}{time.strftime('%Y%m%d%H%M%S')}"
        folder = Path(args.logging_dir) / run / (args.log_tracker_name or "network_train")
        folder.mkdir(parents=True, exist_ok=True)
        self.writer = EventFileWriter(str(folder))

    def write(self, step: int, scalars: dict[str, float]) -> None:
        summary = self._summary_pb2.Summary(
            value=[self._summary_pb2.Summary.Value(tag=k, simple_value=v) for k, v in scalars.items()]
        )
        self.writer.add_event(self._event_pb2.Event(wall_time=time.time(), step=step, summary=summary))
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()
