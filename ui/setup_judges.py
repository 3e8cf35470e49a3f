"""Setup's image-judge model boxes, in the *Score weights and judges* part of the form.

Each box names one model of ``SearchSettings.image_models`` (``bracket.app.form_values.IMAGE_MODEL_BOXES``):
a model folder or a Hugging Face name in this machine's cache, which the engine reads as data only
(never run, never downloaded: docs/JUDGES.md). A blank box is ``.env``'s model, shown as its
placeholder. The worker's python is not a box: it comes from ``.env`` only.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from bracket.app.form_values import image_model_defaults

#: each image-judge model box: its label and what it takes
IMAGE_MODEL_LABELS = {
    "judge_text_image": ("Image judges' model (CLIP or SigLIP)", "prompt-following and image quality, and likeness "
                         "without a likeness model"),
    "judge_likeness": ("Likeness model (optional: DINOv2, CLIP or SigLIP)", "the subject against the references"),
    "judge_preference": ("Preference model (optional, PickScore-style CLIP)", "the preference judge, weight 0 "
                         "by default"),
}


def image_model_boxes() -> dict[str, Any]:
    """The image judges' model boxes (name → textbox): a model folder or a Hugging Face name in this
    machine's cache, read as data (never run, never downloaded); blank: ``.env``'s, shown in the box."""
    boxes = {}
    for name, (setting, configured) in image_model_defaults().items():
        label, what = IMAGE_MODEL_LABELS[name]
        boxes[name] = gr.Textbox("", label=label, placeholder=configured or f"{setting} is not set",
                                 info=f"{what}: a model folder or a Hugging Face name in the local cache; blank: "
                                      f"{setting} of .env", elem_id=f"bk-{name.replace('_', '-')}")
    return boxes
