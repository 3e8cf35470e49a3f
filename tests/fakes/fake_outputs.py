"""The outputs of the fake sd-scripts trainer: PNG samples and tfevents scalars (``fake_trainer.py``)."""

from __future__ import annotations

import argparse
import math
import os
import random
import time
from pathlib import Path

#: words of the held-out contexts (``bracket.trainer.sample_proposal.CONTEXTS``): a prompt holding
#: one asks for a context the planted samples draw as a blue band at the top
CONTEXT_WORDS = ("snow", "watercolor", "underwater", "market", "pencil", "desert", "astronaut", "library")


def planted(progress: float, x: float) -> tuple[float, float]:
    """(subject, context) strengths in [0, 1] of a planted sample at ``progress`` (0..1) of a run
    whose rate is ``x`` decades from the optimum: the subject fades in, slower for a rate too low
    (``1.5 * progress * 10 ** min(0, x)``); over-fitting erases the context from half-way on, faster
    for a higher rate (``1 - (progress - 0.5) * 10 ** x``)."""
    subject = min(1.0, 1.5 * progress * 10 ** min(0.0, x))
    context = 1.0 - min(1.0, max(0.0, (progress - 0.5) * 10 ** x))
    return subject, context


def planted_image(text: str, progress: float, x: float, size: tuple[int, int], loss: float):
    """A grey sample with a red square in the middle (the subject, ``planted`` strength) and, for
    a prompt with a held-out context word, a blue band at the top (the context), lightly grained
    by the loss (the quality)."""
    from PIL import Image, ImageDraw

    subject, context = planted(progress, x)
    width, height = size
    image = Image.new("RGB", size, (128, 128, 128))
    draw = ImageDraw.Draw(image)
    grey = 128
    draw.rectangle((width // 4, height // 4, 3 * width // 4 - 1, 3 * height // 4 - 1),
                   fill=(round(grey + (255 - grey) * subject), round(grey * (1 - subject)),
                         round(grey * (1 - subject))))
    if any(word in text.lower() for word in CONTEXT_WORDS):
        draw.rectangle((0, 0, width - 1, height // 8),
                       fill=(round(grey * (1 - context)), round(grey * (1 - context)),
                             round(grey + (255 - grey) * context)))
    sigma = 10.0 + 120.0 * min(1.0, loss if math.isfinite(loss) else 1.0)
    return Image.blend(image, Image.effect_noise(size, sigma).convert("RGB"), 0.1)


class SampleWriter:
    """Writes one small PNG per prompt, named the way sd-scripts (or musubi) names them; with
    ``BRACKET_FAKE_PLANTED=1`` each is a :func:`planted_image` (the trainer sets ``x``)."""

    def __init__(self, args: argparse.Namespace, prompts: list[dict[str, int]]) -> None:
        self.dir = Path(args.output_dir) / "sample"
        self.prefix = f"{args.output_name}_" if args.output_name else ""
        self.prompts = prompts
        self.musubi = os.environ.get("BRACKET_FAKE_SAMPLE_STYLE", "") == "musubi"
        self.planted = os.environ.get("BRACKET_FAKE_PLANTED", "") == "1"
        #: the run's rate, in decades from the optimum (planted samples)
        self.x = 0.0

    def write(self, label: str, loss: float, progress: float = 1.0) -> None:
        from PIL import Image

        self.dir.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d%H%M%S")
        for index, prompt in enumerate(self.prompts):
            seed = prompt.get("d")
            width, height = min(prompt.get("w", 32), 64), min(prompt.get("h", 32), 64)
            name = f"{self.prefix}{label}_{index:02d}_{stamp}" + (f"_{seed}" if seed is not None else "")
            if self.musubi:
                name += "_000"
            if self.planted:
                planted_image(str(prompt.get("text", "")), progress, self.x, (width, height),
                              loss).save(self.dir / f"{name}.png")
                continue
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
