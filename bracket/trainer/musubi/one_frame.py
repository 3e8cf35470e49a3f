"""musubi-tuner's one-frame modes (FramePack 1f, Wan 2.1 1f): video models trained to edit one image.

One-frame training (docs/framepack_1f.md, docs/wan_1f.md) turns an image-to-video model into
an image editor: the dataset is image pairs — the start images in ``control_directory``
(the preset's control-images field), the changed images with their captions in the image
folder — and the model learns the single frame at a RoPE ``target_index`` after the start
image at ``control_index``. Latents are cached with ``--one_frame`` and the trainer samples
with ``--one_frame``; each sample prompt needs the start image twice, as ``--i`` (image
features) and ``--ci`` (the control latent), and the one-frame options ``--of``.

:class:`OneFrameMixin` holds that much; the architecture subclass adds its cache flags.
Samples are single images, and Compare shows each row's control image beside them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Mapping

from bracket.trainer.prompts import SamplePrompt


class OneFrameMixin:
    """Control-image samples with ``--i`` = ``--ci`` = the start image and ``--of`` options."""

    needs_control_images = True
    sample_kind = "image"
    video_dataset_defaults: ClassVar[Mapping[str, Any]] = {}
    #: the docs' "normal single frame training" sample options
    one_frame_options: ClassVar[str] = "target_index=1,control_index=0"

    def needs_start_image(self) -> bool:
        return False  # the start image is the control image, filled in below

    def complete_prompts(self, prompts: Sequence[SamplePrompt], run_toml: Path) -> list[SamplePrompt]:
        done = super().complete_prompts(prompts, run_toml)  # type: ignore[misc]
        return [p.with_defaults(image=p.control_images[0] if p.control_images else None,
                                one_frame=self.one_frame_options) for p in done]
