"""What the video families share: short clips for a search, animated-WebP samples.

ai-toolkit reads videos from the dataset folder at ``datasets[].num_frames`` frames and ``fps``;
its samples of more than one frame are written as animated WebP (``SampleConfig``), which the
Compare view shows as pictures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bracket.trainer.ai_toolkit.base import AiToolkitTrainer
from bracket.trainer.prompts import SamplePrompt


class VideoFamily(AiToolkitTrainer):
    #: ai-toolkit's validation items are still images
    validation_tags = ()
    default_resolution = 512
    fps = 24
    timestep_types = ("weighted", "sigmoid", "linear", "shift")
    sample_defaults = {"width": 512, "height": 512, "sample_steps": 25, "guidance_scale": 4.0}

    def frames(self) -> int:
        return int(self.field("frames") or 33)

    def datasets_section(self, dataset: Path, knobs: Mapping[str, Any], run_dir: Path) -> list[dict[str, Any]]:
        extra = {"num_frames": self.frames(), "fps": self.fps}
        return [{**entry, **extra} for entry in super().datasets_section(dataset, knobs, run_dir)]

    def sample_section(self, prompts: Sequence[SamplePrompt], every: int) -> dict[str, Any]:
        return {**super().sample_section(prompts, every), "num_frames": self.frames(), "fps": self.fps}
