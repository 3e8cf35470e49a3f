"""musubi-tuner's one-frame modes (FramePack 1f, Wan 2.1 1f): video models trained to edit one image.

One-frame training (docs/framepack_1f.md, docs/wan_1f.md) turns an image-to-video model into
an image editor: the dataset is image pairs — the start images in ``control_directory``
(the preset's control-images field), the changed images with their captions in the image
folder — and the model learns the single frame at a RoPE ``target_index`` after the start
image at ``control_index``. Latents are cached with ``--one_frame`` and the trainer samples
with ``--one_frame``; each sample prompt needs the start image twice, as ``--i`` (image
features) and ``--ci`` (the control latent), and the one-frame options ``--of``.

:class:`OneFrameMixin` holds that much, and the warm start both modes share (their docs say
"optimal settings are unknown" and reuse the architecture's LoRA example); the architecture
subclass adds its cache flags and names its docs.
Samples are single images, and Compare shows each row's control image beside them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Mapping

from bracket.search.configs import NamedConfig
from bracket.trainer.musubi.base import MusubiTrainer
from bracket.trainer.musubi.space import community_lora_configs
from bracket.trainer.prompts import SamplePrompt

_LORA_EXAMPLE = {"optimizer_type": "AdamW8bit", "learning_rate": 2e-4, "lr_scheduler": "constant",
                 "network_dim": 32, "network_alpha": 1, "timestep_sampling": "shift"}


class OneFrameMixin(MusubiTrainer):
    """Control-image samples with ``--i`` = ``--ci`` = the start image and ``--of`` options; mixed
    in before an architecture's LoRA adapter, whose prompts it completes."""

    needs_control_images = True
    sample_kind = "image"
    video_dataset_defaults: ClassVar[Mapping[str, Any]] = {}
    #: the docs' "normal single frame training" sample options
    one_frame_options: ClassVar[str] = "target_index=1,control_index=0"
    #: the architecture's docs and its one-frame docs, cited by the warm start
    docs: ClassVar[str] = ""
    docs_1f: ClassVar[str] = ""

    def baseline_config(self) -> NamedConfig:
        # the one-frame docs give no optimizer settings: the architecture's LoRA example
        return NamedConfig("musubi-docs", {**_LORA_EXAMPLE, "discrete_flow_shift": 3.0},
                           source=f"{self.docs}, LoRA training example (used by {self.docs_1f}, One Frame Training)")

    def curated_configs(self) -> list[NamedConfig]:
        return [
            # the one-frame docs' sample prompt renders with --fs 7: train at the same shift
            NamedConfig("shift-7", {**_LORA_EXAMPLE, "discrete_flow_shift": 7.0},
                        source=f"{self.docs_1f}, sample prompt example (--fs 7)"),
            *community_lora_configs({"timestep_sampling": "shift", "discrete_flow_shift": 3.0},
                                    example="train_lora_wan21_14b_24gb.yaml"),
        ]

    def needs_start_image(self) -> bool:
        return False  # the start image is the control image, filled in below

    def complete_prompts(self, prompts: Sequence[SamplePrompt], run_toml: Path) -> list[SamplePrompt]:
        done = super().complete_prompts(prompts, run_toml)
        return [p.with_defaults(image=p.control_images[0] if p.control_images else None,
                                one_frame=self.one_frame_options) for p in done]
