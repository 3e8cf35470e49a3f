"""Finding the tokenizers a diffusion trainer loads from the Hugging Face hub by name.

sd-scripts (and several musubi-tuner architectures) load their CLIP and T5 tokenizers with
``from_pretrained("<hub id>")`` at the start of every run; no model file carries them. On
a machine without the hub (offline, firewalled) that dies deep in ``transformers`` with
``TypeError … NoneType``. sd-scripts' ``--tokenizer_cache_dir DIR`` makes it read
``DIR/<id with "/" replaced by "_">`` instead (and save there after one online run), which
is the ``tokenizer_cache_dir`` preset field (default ``BRACKET_TOKENIZER_CACHE_DIR``).

:func:`missing_tokenizers` tells ``bracket doctor`` which ids are in neither place: the
cache folder, or the local Hugging Face hub cache (``HF_HUB_CACHE``, ``HF_HOME/hub`` or
``~/.cache/huggingface/hub``) that ``from_pretrained`` reads offline.

An id names a hub repository (``owner/name``); a longer id names a folder inside it
(``Wan-AI/Wan2.1-T2V-14B/google/umt5-xxl`` is ``from_pretrained("Wan-AI/Wan2.1-T2V-14B",
subfolder="google/umt5-xxl")``, as musubi-tuner loads several of its tokenizers).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

CLIP_L_TOKENIZER = "openai/clip-vit-large-patch14"
CLIP_G_TOKENIZER = "laion/CLIP-ViT-bigG-14-laion2B-39B-b160k"
T5_XXL_TOKENIZER = "google/t5-v1_1-xxl"
#: files of which at least one marks a usable tokenizer folder
TOKENIZER_FILES = ("tokenizer.json", "vocab.json", "spiece.model", "tokenizer.model", "tokenizer_config.json")


def hub_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The local Hugging Face hub cache, as ``huggingface_hub`` resolves it."""
    env = os.environ if environ is None else environ
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if env.get(name):
            return Path(env[name]).expanduser()
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]).expanduser() / "hub"
    base = Path(env["XDG_CACHE_HOME"]).expanduser() if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def _has_tokenizer(folder: Path) -> bool:
    return folder.is_dir() and any((folder / name).is_file() for name in TOKENIZER_FILES)


def tokenizer_location(model_id: str, cache_dir: str = "",
                       environ: Mapping[str, str] | None = None) -> Path | None:
    """Where ``model_id``'s tokenizer is on this machine, or None."""
    if cache_dir.strip():
        local = Path(cache_dir.strip()).expanduser() / model_id.replace("/", "_")
        if _has_tokenizer(local):
            return local
    parts = model_id.split("/")
    repo, subfolder = parts[:2], parts[2:]
    snapshots = hub_cache_dir(environ) / f"models--{'--'.join(repo)}" / "snapshots"
    if snapshots.is_dir():
        for snapshot in sorted(snapshots.iterdir()):
            places = ((snapshot.joinpath(*subfolder),) if subfolder
                      else (snapshot, snapshot / "tokenizer", snapshot / "tokenizer_2"))
            for folder in places:
                if _has_tokenizer(folder):
                    return folder
    return None


def missing_tokenizers(model_ids: Iterable[str], cache_dir: str = "",
                       environ: Mapping[str, str] | None = None) -> list[str]:
    """The ids of ``model_ids`` found neither in ``cache_dir`` nor in the hub cache."""
    return [m for m in model_ids if tokenizer_location(m, cache_dir, environ) is None]
