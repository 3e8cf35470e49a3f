"""The per-run musubi-tuner dataset TOML, and the images that sample prompts borrow from it.

:func:`write_musubi_toml` derives the run's TOML with
:func:`bracket.dataset.runtime.derive_run_toml` (batch size and resolution in
``[general]``, every dataset's ``cache_directory`` under the session's shared cache) and
then adds what only musubi needs:

- a folder of videos becomes a ``video_directory`` dataset (a plain folder is read as
  images otherwise);
- video datasets get the architecture's short-clip defaults (``target_frames``,
  ``frame_extraction``) unless the person's TOML sets them;
- image-edit datasets get ``control_directory`` from the preset's control-images field,
  and a dataset without control images is an error before anything runs;
- ``caption_extension`` defaults to ``.txt`` (musubi has no default and would silently
  train without captions);
- with the session's held-out likeness references (``bracket.dataset.references``), an image
  dataset reads a folder of links to the rest (``train-data/images<i>`` beside the TOML; musubi
  names a cache file by the image's name, so the shared cache still serves every run, and the
  cache root's key names the held-out images, since musubi trains on every cache file of its
  ``cache_directory``).

The same function writes the setup TOML the cache scripts read and every trial's TOML,
so all of them agree on resolution, frames and ``cache_directory``: that is what lets the
cache be built once per session.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import tomli_w

from bracket.dataset.preflight import IMAGE_EXTENSIONS, VIDEO_EXTENSIONS
from bracket.dataset.references import training_folder
from bracket.dataset.runtime import derive_run_toml, read_dataset_toml
from bracket.errors import DatasetError

_VIDEO_KEYS = ("video_directory", "video_jsonl_file")


def _media(folder: Path, extensions: tuple[str, ...]) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in extensions)


def is_video_dataset(entry: Mapping[str, Any]) -> bool:
    """Whether a ``[[datasets]]`` entry is a video dataset (musubi's own rule)."""
    return any(key in entry for key in _VIDEO_KEYS)


def write_musubi_toml(
    source: Path,
    dest: Path,
    *,
    cache_root: Path,
    batch_size: int,
    resolution: int,
    video_defaults: Mapping[str, Any] | None = None,
    control_dir: str = "",
    needs_control: bool = False,
    excluded: Collection[Path] = (),
) -> Path:
    """Write the run's musubi dataset TOML to ``dest`` (see the module docstring)."""
    derive_run_toml(
        Path(source), Path(dest), style="musubi",
        general={"batch_size": int(batch_size), "resolution": int(resolution)},
        cache_root=Path(cache_root),
    )
    document = read_dataset_toml(Path(dest))
    general = document.setdefault("general", {})
    for index, entry in enumerate(document["datasets"]):
        folder = entry.get("image_directory")
        if isinstance(folder, str) and not _media(Path(folder), IMAGE_EXTENSIONS) and _media(
            Path(folder), VIDEO_EXTENSIONS
        ):
            entry["video_directory"] = entry.pop("image_directory")
        if is_video_dataset(entry):
            for key, value in (video_defaults or {}).items():
                entry.setdefault(key, value)
            continue
        if excluded and isinstance(folder, str):  # the held-out likeness references stay out
            links = Path(dest).parent / "train-data" / f"images{index}"
            entry["image_directory"] = str(training_folder(Path(folder), excluded, links))
        if control_dir:
            entry["control_directory"] = str(Path(control_dir).expanduser().resolve())
        if needs_control and "control_directory" not in entry and "image_jsonl_file" not in entry:
            raise DatasetError(
                f"Dataset {source} (entry {index + 1}) has no control images, which this image-edit model "
                "needs: fill in the 'Control images folder' field, or set control_directory in the dataset TOML."
            )
        if "control_directory" in entry and not Path(entry["control_directory"]).is_dir():
            raise DatasetError(
                f"Control images folder {entry['control_directory']} does not exist; check the path."
            )
    if "caption_extension" not in general and not all("caption_extension" in e for e in document["datasets"]):
        general["caption_extension"] = ".txt"
    Path(dest).write_text(tomli_w.dumps(document), encoding="utf-8")
    return Path(dest)


def first_control_image(run_toml: Path) -> Path | None:
    """The first control image (sorted by name) of the run's datasets, for sample prompts."""
    for entry in read_dataset_toml(Path(run_toml)).get("datasets", []):
        control = entry.get("control_directory")
        if isinstance(control, str):
            images = _media(Path(control), IMAGE_EXTENSIONS)
            if images:
                return images[0]
    return None


def first_dataset_image(run_toml: Path) -> Path | None:
    """The first training image (sorted by name), used as the start image of I2V samples."""
    for entry in read_dataset_toml(Path(run_toml)).get("datasets", []):
        for key in ("image_directory", "control_directory", "video_directory"):
            folder = entry.get(key)
            if isinstance(folder, str):
                images = _media(Path(folder), IMAGE_EXTENSIONS)
                if images:
                    return images[0]
    return None
