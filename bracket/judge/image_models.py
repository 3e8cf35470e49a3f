"""The models behind the image judges, loaded from the user's machine with ``transformers``.

Up to three models, each named in Setup's judges fields, ``run --judge-*`` or ``.env`` and read
from a local folder or the Hugging Face cache. A model is **data, never code**: ``local_files_only``
(nothing is ever downloaded here; ``./install.sh --judges`` fetches them once), ``trust_remote_code``
off (a checkpoint's own Python files are never imported) and safetensors weights only (a pickled
``pytorch_model.bin`` can run code when it is read, so it is refused):

* the **text-image model** (``BRACKET_JUDGE_TEXT_IMAGE``): a CLIP (``CLIPModel``) or SigLIP
  (``SiglipModel``) checkpoint, through ``AutoModel`` and ``AutoProcessor``. It gives
  prompt-following (cosine of a sample's image and prompt embeddings) and image quality by the
  CLIP-IQA method (the softmax share of "Good photo." against "Bad photo." at the model's own
  logit scale), and likeness when no likeness model is set (its image embeddings);
* the **preference model** (``BRACKET_JUDGE_PREFERENCE``, optional): a PickScore-style CLIP
  fine-tuned on people's choices between images of one prompt, for the preference judge;
* the **likeness model** (``BRACKET_JUDGE_LIKENESS``, optional): a DINOv2 checkpoint
  (``Dinov2Model`` with its image processor), whose CLS embedding says whether two images show the
  same subject better than CLIP's does (DreamBooth's DINO score);
* the **face model** (``BRACKET_JUDGE_FACE``, optional, for the face-identity judge): an image
  model (DINOv2, ViT or CLIP in transformers' format) whose pooled embedding of a face crop is
  compared; without one, the face crops go through the likeness model (``bracket.judge.faces``).

:func:`check_weights` is what Start and ``doctor`` run: it finds each model's folder and reads
its configs without loading the weights. :class:`TransformersBackbone` does the work, batched,
in the worker process (``bracket.judge.image_worker``); ``torch`` and ``transformers`` are imported
only there.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: the antonym prompts of CLIP-IQA's overall-quality figure
QUALITY_PROMPTS = ("Good photo.", "Bad photo.")
#: the model families each role accepts (``model_type`` of the checkpoint's config.json)
TEXT_IMAGE_TYPES = ("clip", "siglip")
LIKENESS_TYPES = ("dinov2", "clip", "siglip")
FACE_TYPES = ("dinov2", "vit", "clip")
#: where a checkpoint keeps its image processor's settings (the hub's older name, transformers 5's)
PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")
#: the weights files read: safetensors only (tensors, no code; a pickle is refused)
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json")
#: what every ``from_pretrained`` of a judge model is given: the local files, read as data
READ_ONLY = {"local_files_only": True, "trust_remote_code": False}


class WeightsProblem(Exception):
    """A judge model that cannot be found or read; the message says what to do."""


#: how a model gets into the cache, said after a missing or broken one: the install option fetches
#: only the defaults (:mod:`bracket.judge.fetch_models`); any other is the person's own download
FETCH_HINT = "./install.sh --judges fetches the default models; any other: hf download NAME"


def model_folder(name: str) -> Path:
    """The local folder of ``name``: a folder path as it is, else a Hugging Face repo id looked up
    in the local cache only (never downloaded)."""
    path = Path(name).expanduser()
    if path.is_dir():
        return path
    if path.is_absolute() or name.startswith((".", "~")) or name.count("/") != 1:
        raise WeightsProblem(f"{name}: no such folder; give a model folder or a Hugging Face name such as "
                             "facebook/dinov2-small")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(snapshot_download(name, local_files_only=True))
    except (LocalEntryNotFoundError, OSError, ValueError):
        raise WeightsProblem(f"{name} is not in the Hugging Face cache; download it once on a machine with "
                             f"internet ({FETCH_HINT})") from None


def check_weights(name: str, kinds: Sequence[str], role: str) -> str:
    """The ``model_type`` of the checkpoint ``name`` for ``role`` (``text-image``, ``likeness``,
    ``preference``); raises WeightsProblem when its folder, config, safetensors weights or processor
    files are missing or of another kind. Reads only the configs (no weights, no code)."""
    try:
        folder = model_folder(name)
    except WeightsProblem as problem:
        raise WeightsProblem(f"{role} model {problem}") from None
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise WeightsProblem(f"{role} model {name}: cannot read {folder / 'config.json'} "
                             f"({type(error).__name__}); download it again ({FETCH_HINT})") from None
    kind = str(config.get("model_type", "")) if isinstance(config, dict) else ""
    if kind not in kinds:
        raise WeightsProblem(f"{role} model {name} is a {kind or 'model of unknown type'!s}; give a "
                             f"{' or '.join(kinds)} checkpoint")
    if not any((folder / f).is_file() for f in WEIGHT_FILES):
        pickled = (folder / "pytorch_model.bin").is_file() or (folder / "pytorch_model.bin.index.json").is_file()
        raise WeightsProblem(f"{role} model {name}: no safetensors weights file (model.safetensors) in {folder}"
                             + ("; a pickled pytorch_model.bin is not read (it can run code): convert it to "
                                "safetensors or use a checkpoint that has one" if pickled else
                                f"; download it again ({FETCH_HINT})"))
    if not any((folder / f).is_file() for f in PROCESSOR_FILES):
        raise WeightsProblem(f"{role} model {name}: no image processor config ({' or '.join(PROCESSOR_FILES)}) "
                             f"in {folder}; download it again ({FETCH_HINT})")
    return kind


def mean_cosine(row: Sequence[float], refs: Sequence[Sequence[float]]) -> float:
    """The mean cosine of unit embedding ``row`` to the unit embeddings ``refs`` (:func:`clip_cosine`)."""
    return clip_cosine(sum(sum(a * b for a, b in zip(row, ref)) for ref in refs) / len(refs))


def clip_cosine(value: float) -> float:
    """A cosine of unit vectors clipped to [-1, 1] (their dot products overshoot by float round-off)."""
    return min(1.0, max(-1.0, float(value)))


def _features(output: Any) -> Any:
    """The embedding tensor of a ``get_*_features`` call (a tensor, or an output's pooled part)."""
    import torch

    return output if torch.is_tensor(output) else output.pooler_output


class TransformersBackbone:
    """The text-image model (CLIP or SigLIP; and the likeness and preference models when given) on
    ``device``, batched."""

    def __init__(self, text_image: str, likeness: str | None = None, *, device: str = "auto",
                 batch_size: int = 8, preference: str | None = None, face: str | None = None) -> None:
        import torch
        from transformers import AutoImageProcessor, AutoProcessor

        self.torch = torch
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device, self.batch_size = device, max(1, int(batch_size))
        self.kind, self.model, self.processor = self._load(text_image, TEXT_IMAGE_TYPES, "text-image", AutoProcessor)
        none: tuple[str, Any, Any] = ("", None, None)
        self.likeness_kind, self.likeness_model, self.likeness_processor = (
            self._load(likeness, LIKENESS_TYPES, "likeness", AutoImageProcessor) if likeness else none)
        self.preference_kind, self.preference_model, self.preference_processor = (
            self._load(preference, TEXT_IMAGE_TYPES, "preference", AutoProcessor) if preference else none)
        _kind, self.face_model, self.face_processor = (
            self._load(face, FACE_TYPES, "face", AutoImageProcessor) if face else none)

    def _load(self, name: str, kinds: Sequence[str], role: str, processor_class: Any) -> tuple[str, Any, Any]:
        """(model_type, model on the device in eval mode, processor) of checkpoint ``name``, checked
        for ``role`` first; from the local folder or cache only, read as data (:data:`READ_ONLY`)."""
        from transformers import AutoModel

        kind = check_weights(name, kinds, role)
        folder = model_folder(name)
        model = AutoModel.from_pretrained(folder, use_safetensors=True, **READ_ONLY).to(self.device).eval()
        return kind, model, processor_class.from_pretrained(folder, **READ_ONLY)

    def _batches(self, items: Sequence[Any]) -> list[Sequence[Any]]:
        return [items[i:i + self.batch_size] for i in range(0, len(items), self.batch_size)]

    def _unit(self, output: Any) -> Any:
        return self.torch.nn.functional.normalize(_features(output).float(), dim=-1)

    def _embed_text(self, model: Any, processor: Any, kind: str, texts: Sequence[str]) -> Any:
        """Unit text embeddings of a CLIP or SigLIP (SigLIP was trained on prompts padded to its length)."""
        padding = "max_length" if kind == "siglip" else True
        tokens = processor(text=list(texts), return_tensors="pt", padding=padding, truncation=True)
        with self.torch.inference_mode():
            return self._unit(model.get_text_features(**{k: v.to(self.device) for k, v in tokens.items()}))

    def _text(self, texts: Sequence[str]) -> Any:
        return self._embed_text(self.model, self.processor, self.kind, texts)

    def _clip_images(self, images: Sequence[Any]) -> Any:
        return self._pooled(self.model, self.processor, images)

    def image_embeddings(self, images: Sequence[Any]) -> list[list[float]]:
        """Unit image embeddings for likeness (DINOv2's CLS token, a likeness CLIP's or SigLIP's
        image tower, else the text-image model's)."""
        rows: list[list[float]] = []
        for batch in self._batches(images):
            if self.likeness_model is None:
                rows += self._clip_images(batch).tolist()
            else:
                rows += self._pooled(self.likeness_model, self.likeness_processor, batch).tolist()
        return rows

    def face_embeddings(self, faces: Sequence[Any]) -> list[list[float]]:
        """Unit embeddings of face crops: the face model's, else the likeness embeddings."""
        if self.face_model is None:
            return self.image_embeddings(faces)
        return [row for batch in self._batches(faces)
                for row in self._pooled(self.face_model, self.face_processor, batch).tolist()]

    def _pooled(self, model: Any, processor: Any, batch: Sequence[Any]) -> Any:
        """Unit image embeddings of an image model: CLIP's image features, else the pooled output
        (DINOv2's and ViT's CLS token)."""
        pixels = processor(images=list(batch), return_tensors="pt")["pixel_values"].to(self.device)
        with self.torch.inference_mode():
            if hasattr(model, "get_image_features"):
                out = _features(model.get_image_features(pixel_values=pixels))
            else:
                out = model(pixel_values=pixels).pooler_output
        return self.torch.nn.functional.normalize(out.float(), dim=-1)

    def prompt_similarity(self, images: Sequence[Any], texts: Sequence[str]) -> list[float]:
        """Cosine similarity of each image with its own prompt."""
        values: list[float] = []
        for start in range(0, len(images), self.batch_size):
            image = self._clip_images(images[start:start + self.batch_size])
            text = self._text(texts[start:start + self.batch_size])
            values += (image * text).sum(dim=-1).tolist()
        return values

    def preference(self, images: Sequence[Any], texts: Sequence[str]) -> list[float] | None:
        """The preference model's figure of each image with its own prompt — its logit
        ``scale × cos`` as PickScore scores — or None when no preference model is loaded. Only
        figures of the same prompt may be compared (``bracket.judge.preference``)."""
        model, processor = self.preference_model, self.preference_processor
        if model is None:
            return None
        scale = _logit_scale(model)
        values: list[float] = []
        for start in range(0, len(images), self.batch_size):
            image = self._pooled(model, processor, images[start:start + self.batch_size])
            text = self._embed_text(model, processor, self.preference_kind, texts[start:start + self.batch_size])
            values += (scale * (image * text).sum(dim=-1)).tolist()
        return values

    def quality(self, images: Sequence[Any]) -> list[float]:
        """CLIP-IQA: the softmax share of "Good photo." against "Bad photo." for each image (a
        SigLIP's bias is the same for both prompts, so the share is the same rule)."""
        anchors = self._text(QUALITY_PROMPTS)
        scale = _logit_scale(self.model)
        values: list[float] = []
        for batch in self._batches(images):
            logits = scale * self._clip_images(batch) @ anchors.T
            values += logits.softmax(dim=-1)[:, 0].tolist()
        return values


def _logit_scale(model: Any) -> float:
    """The model's own temperature ``exp(logit_scale)`` (CLIP's and SigLIP's), 100 where it has none."""
    return float(model.logit_scale.detach().exp()) if hasattr(model, "logit_scale") else 100.0
