"""LTX-2 video LoRA through ai-toolkit (``model.arch: ltx2``).

Settings: ai-toolkit's ``ltx2`` entry in ``ui/src/app/jobs/new/options.tsx`` at the pin (quantized
transformer and text encoder, ``low_vram``, flowmatch, ``weighted`` timesteps, 24 fps) on its UI
job template. Bracket trains video only (``datasets[].do_audio`` off: a search's clips need no
sound track); the UI turns audio on.
"""

from __future__ import annotations

from bracket.search.configs import NamedConfig
from bracket.trainer.ai_toolkit.space import UI_JOB, recipe
from bracket.trainer.ai_toolkit.video import VideoFamily

OPTIONS = "ostris/ai-toolkit ui/src/app/jobs/new/options.tsx (ltx2)"


class Ltx2LoRA(VideoFamily):
    model_keys = {"arch": "ltx2"}
    memory_plan = (
        (48, {"model": {"quantize": True, "quantize_te": True, "low_vram": True}}),
        (80, {"model": {"quantize_te": True}}),
    )
    dataset_defaults = {"cache_latents_to_disk": True, "do_audio": False}

    def frames(self) -> int:
        return int(self.field("frames") or 41)  # LTX takes 8k+1 frames

    def baseline_config(self) -> NamedConfig:
        return NamedConfig("baseline", recipe(timestep_type="weighted"), source=f"{OPTIONS} on {UI_JOB}")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            NamedConfig("sigmoid", recipe(timestep_type="sigmoid"), source=f"{UI_JOB} (sigmoid timesteps)"),
            NamedConfig("rank16-lower-rate",
                        recipe(timestep_type="weighted", learning_rate=5e-5, network_dim=16, network_alpha=16),
                        source=f"Bracket's variant of {OPTIONS}: half the UI rate at rank 16"),
            NamedConfig("lokr", recipe(network_type="lokr", lokr_factor=8, timestep_type="weighted"),
                        source=f"{UI_JOB} (lokr, full rank)"),
        ]
