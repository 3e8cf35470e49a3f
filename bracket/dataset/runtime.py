"""The per-run dataset TOML: the user's dataset, with what one run changes written in.

Both kohya trainers read their data from a ``--dataset_config`` TOML. sd-scripts nests
``[[datasets.subsets]]`` under ``[[datasets]]``; musubi-tuner has flat ``[[datasets]]``
entries and keeps ``batch_size`` only in the TOML. A search changes some of those keys per
run (batch size, resolution, the shared latent cache folder), so every run gets its own
copy, derived here from either the user's TOML or a plain folder of captioned images.

Relative paths in the user's TOML are made absolute (relative to the TOML's folder), since
the trainers run with their own checkout as the working folder.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w

from bracket.errors import DatasetError

STYLES = ("sd-scripts", "musubi")
#: a folder holding a file of this name is read through that TOML, not as a plain image folder
DATASET_TOML_NAME = "dataset.toml"
_PATH_KEYS = (
    "image_dir", "metadata_file", "conditioning_data_dir", "image_directory", "image_jsonl_file",
    "video_directory", "video_jsonl_file", "control_directory", "cache_directory",
)


def read_dataset_toml(path: Path) -> dict[str, Any]:
    """Parse a dataset TOML; a syntax error names the file and line to fix."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise DatasetError(f"Cannot read dataset TOML {path}: {error.strerror}.") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise DatasetError(f"Dataset TOML {path} is malformed: {error}. Fix that line and try again.") from None


def _absolutise(entry: dict[str, Any], base: Path) -> None:
    for key in _PATH_KEYS:
        value = entry.get(key)
        if isinstance(value, str) and value and not Path(value).is_absolute():
            entry[key] = str((base / value).resolve())


def _from_folder(folder: Path, style: str, caption_extension: str) -> dict[str, Any]:
    if style == "sd-scripts":
        return {
            "general": {"caption_extension": caption_extension},
            "datasets": [{"subsets": [{"image_dir": str(folder.resolve()), "num_repeats": 1}]}],
        }
    return {
        "general": {"caption_extension": caption_extension},
        "datasets": [{"image_directory": str(folder.resolve())}],
    }


def load_dataset_spec(source: Path, style: str, *, caption_extension: str = ".txt") -> dict[str, Any]:
    """The user's dataset as a TOML document: parsed from a TOML, or built for a folder."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}")
    source = Path(source)
    if source.is_dir() and (source / DATASET_TOML_NAME).is_file():
        source = source / DATASET_TOML_NAME  # a folder that carries its own dataset TOML
    if source.is_dir():
        return _from_folder(source, style, caption_extension)
    if not source.is_file():
        raise DatasetError(f"Dataset {source} does not exist; give a dataset TOML or an image folder.")
    if source.suffix.lower() != ".toml":
        raise DatasetError(f"Dataset {source} is a file but not a dataset TOML (.toml); give a dataset TOML or "
                           "the folder of images.")
    document = read_dataset_toml(source)
    datasets = document.get("datasets")
    if not isinstance(datasets, list) or not datasets:
        raise DatasetError(f"Dataset TOML {source} has no [[datasets]] entry; add at least one.")
    has_subsets = any(isinstance(d, dict) and "subsets" in d for d in datasets)
    if style == "musubi" and has_subsets:
        raise DatasetError(
            f"Dataset TOML {source} uses sd-scripts [[datasets.subsets]]; musubi-tuner needs flat "
            "[[datasets]] entries with image_directory/video_directory."
        )
    if style == "sd-scripts" and not has_subsets:
        raise DatasetError(
            f"Dataset TOML {source} has no [[datasets.subsets]]; sd-scripts needs image_dir inside subsets."
        )
    base = source.resolve().parent
    for dataset in datasets:
        _absolutise(dataset, base)
        for subset in dataset.get("subsets", []):
            _absolutise(subset, base)
    return document


def derive_run_toml(
    source: Path,
    dest: Path,
    *,
    style: str,
    general: Mapping[str, Any] | None = None,
    per_dataset: Mapping[str, Any] | None = None,
    cache_root: Path | None = None,
    caption_extension: str = ".txt",
) -> Path:
    """Write the run's dataset TOML to ``dest`` and return it.

    ``general`` keys go into ``[general]`` and replace the same key in any dataset entry,
    so a searched batch size really applies. ``per_dataset`` keys are set on every
    ``[[datasets]]`` entry (e.g. ``control_directory`` or ``target_frames``). With
    ``cache_root`` (musubi), dataset *i* caches to ``cache_root/ds<i>`` — one shared
    cache for every run of a session.
    """
    document = load_dataset_spec(source, style, caption_extension=caption_extension)
    general_section = dict(document.get("general", {}))
    for key, value in (general or {}).items():
        general_section[key] = value
        for dataset in document["datasets"]:
            dataset.pop(key, None)
    document["general"] = general_section
    for index, dataset in enumerate(document["datasets"]):
        for key, value in (per_dataset or {}).items():
            dataset[key] = value
        if cache_root is not None:
            dataset["cache_directory"] = str((Path(cache_root) / f"ds{index}").resolve())
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(tomli_w.dumps(document), encoding="utf-8")
    return dest


def dataset_image_dirs(source: Path, style: str) -> list[Path]:
    """Folders holding the training media (for pre-flight checks and cache keys)."""
    document = load_dataset_spec(source, style)
    folders: list[Path] = []
    for dataset in document["datasets"]:
        entries = dataset.get("subsets", [dataset])
        for entry in entries:
            for key in ("image_dir", "image_directory", "video_directory"):
                if isinstance(entry.get(key), str):
                    folders.append(Path(entry[key]))
    return folders
