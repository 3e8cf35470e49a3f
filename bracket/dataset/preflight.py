"""Dataset pre-flight: are there images, do they have captions, can the trainer read them.

Run before anything is launched, so that a search does not spend an hour of GPU time to
find out that half the captions are missing. :func:`preflight_dataset` looks at every
folder a dataset names (a plain folder, or the folders of a dataset TOML) and reports:

- **problems** (the search does not start): no folder, no media, no caption at all, files
  that PIL cannot open, edit-model targets without a control image, no control folder for
  a model that needs one;
- **warnings** (it starts, and the CLI and app say why it may disappoint): images without a
  caption, caption files whose image is missing (``cap_1.txt`` beside ``img_1.png``), empty
  captions, files the trainers ignore, control images without a target, fewer images than
  one batch holds.

:func:`preflight_for_trainer` asks a trainer adapter what to check (its dataset style,
whether it needs control images, its largest batch) so that the CLI's ``run`` and
``doctor`` and the app's Setup tab run the same checks.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bracket.dataset.captions import MAX_CAPTION_BYTES, read_caption
from bracket.dataset.runtime import load_dataset_spec
from bracket.errors import DatasetError

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
VIDEO_EXTENSIONS = (".mp4", ".webm", ".mov", ".avi", ".mkv")
#: files a dataset folder may hold besides media and captions (trainer caches, metadata)
SIDE_FILES = (".toml", ".json", ".jsonl", ".npz", ".safetensors", ".md")
#: how many example names a message lists
EXAMPLES = 3


@dataclass
class PreflightReport:
    """What pre-flight found: counts and the problems a person should fix."""

    media: int = 0
    captions: int = 0
    folders: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        text = f"{self.media} images/videos, {self.captions} captions in {len(self.folders)} folder(s)"
        if self.problems:
            text += ". Problems: " + " ".join(self.problems)
        if self.warnings:
            text += ". Warnings: " + " ".join(self.warnings)
        return text


def _examples(names: Iterable[str]) -> str:
    names = sorted(names)
    shown = ", ".join(names[:EXAMPLES])
    return shown + (f" and {len(names) - EXAMPLES} more" if len(names) > EXAMPLES else "")


def _unreadable_images(images: list[Path]) -> list[str]:
    """Names of the images PIL cannot open and verify (truncated, wrong content, empty)."""
    from PIL import Image, UnidentifiedImageError

    bad = []
    for path in images:
        try:
            with Image.open(path) as image:
                image.verify()
        except (OSError, UnidentifiedImageError, SyntaxError, ValueError):
            bad.append(path.name)
    return bad


def _check_folder(folder: Path, caption_extension: str, report: PreflightReport, *,
                  captions_from_files: bool = True) -> list[Path]:
    """Check one media folder; returns its images (for the control-pair check).

    ``captions_from_files`` is False when the captions come from a metadata file (sd-scripts
    ``metadata_file``): then caption files are neither expected nor orphans.
    """
    report.folders.append(str(folder))
    if not folder.is_dir():
        report.problems.append(f"Folder {folder} does not exist.")
        return []
    if not os.access(folder, os.R_OK | os.X_OK):
        report.problems.append(f"Folder {folder} cannot be read; check its permissions.")
        return []
    files = [p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")]
    media = [p for p in files if p.suffix.lower() in IMAGE_EXTENSIONS + VIDEO_EXTENSIONS]
    images = [p for p in media if p.suffix.lower() in IMAGE_EXTENSIONS]
    captions = [p for p in files if captions_from_files and p.suffix.lower() == caption_extension.lower()]
    media_stems = {p.stem for p in media}
    report.media += len(media)
    missing = [p.name for p in media if captions_from_files and p.stem not in {c.stem for c in captions}]
    report.captions += len(media) - len(missing)
    orphans = [c.name for c in captions if c.stem not in media_stems]
    unsupported = [p.name for p in files if p not in media and p not in captions
                   and p.suffix.lower() not in SIDE_FILES]
    broken = _unreadable_images(images)
    if broken:
        report.problems.append(f"{len(broken)} file(s) in {folder} are not images that can be opened "
                               f"({_examples(broken)}); replace or remove them.")
    orphan_hint = (f" {len(orphans)} caption file(s) match no image ({_examples(orphans)}): a caption must have "
                   "its image's name (img_1.png → img_1" + caption_extension + ").") if orphans else ""
    if not media:
        report.problems.append(f"Folder {folder} holds no images or videos.")
    elif len(missing) == len(media):
        report.problems.append(
            f"No image in {folder} has a {caption_extension} caption; add one text file per image." + orphan_hint
        )
    else:
        if missing:
            report.warnings.append(f"{len(missing)} file(s) in {folder} have no caption ({_examples(missing)}).")
        if orphans:
            report.warnings.append(orphan_hint.strip())
    read = {c.name: read_caption(c, folder) for c in captions if c.stem in media_stems}
    refused = [f"{name} {caption.refused}" for name, caption in read.items() if caption.refused]
    empty = [name for name, caption in read.items() if not caption.refused and not caption.text.strip()]
    if refused:
        report.warnings.append(f"{len(refused)} caption(s) in {folder} are not read by Bracket ({_examples(refused)}); "
                               f"a caption is a regular file inside its folder of at most "
                               f"{MAX_CAPTION_BYTES // 1024} kB.")
    if empty:
        report.warnings.append(f"{len(empty)} caption(s) in {folder} are empty ({_examples(empty)}); those images "
                               "train without a prompt.")
    if unsupported:
        report.warnings.append(f"{len(unsupported)} file(s) in {folder} are neither images, videos nor captions and "
                               f"are ignored by the trainer ({_examples(unsupported)}); supported: "
                               f"{' '.join(IMAGE_EXTENSIONS + VIDEO_EXTENSIONS)}.")
    return images


def _check_controls(targets: list[Path], control: Path, report: PreflightReport) -> None:
    """Every target image needs a control image named like it (musubi-tuner's matching rule)."""
    if not control.is_dir():
        report.problems.append(f"Control images folder {control} does not exist; check the path.")
        return
    controls = [p for p in control.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_EXTENSIONS]
    matched: set[Path] = set()
    lonely = []
    # longest names first, like the trainer, so that img_1 does not take img_10's controls
    for target in sorted(targets, key=lambda p: len(p.stem), reverse=True):
        mine = {c for c in controls if c not in matched
                and (c.stem == target.stem or c.name.startswith(target.stem + "_"))}
        matched |= mine
        if not mine:
            lonely.append(target.name)
    if lonely:
        report.problems.append(f"{len(lonely)} target image(s) have no control image in {control} "
                               f"({_examples(lonely)}); a control image has its target's name (img_1.png, or "
                               "img_1_0.png for several).")
    unused = [c.name for c in controls if c not in matched]
    if unused:
        report.warnings.append(f"{len(unused)} control image(s) in {control} match no target image "
                               f"({_examples(unused)}); they are not used.")


def preflight_dataset(source: Path, style: str, *, caption_extension: str = ".txt", control_dir: str = "",
                      needs_control: bool = False, batch_size: int = 1) -> PreflightReport:
    """Check the dataset at ``source`` (TOML or folder) for the trainer style ``style``.

    ``control_dir`` (the preset's control folder field) applies to every image dataset, as
    the musubi adapters write it; ``needs_control`` makes a missing control folder a
    problem; ``batch_size`` is the largest batch a run may use.
    """
    report = PreflightReport()
    try:
        document = load_dataset_spec(Path(source), style, caption_extension=caption_extension)
    except DatasetError as error:
        report.problems.append(str(error))
        return report
    entries: list[Mapping[str, Any]] = []
    for dataset in document.get("datasets", []):
        entries += dataset.get("subsets", [dataset])
    caption_extension = str(document.get("general", {}).get("caption_extension") or caption_extension)
    has_media_folder = False
    for entry in entries:
        extension = str(entry.get("caption_extension") or caption_extension)
        for key in ("image_dir", "image_directory", "video_directory"):
            if not isinstance(entry.get(key), str):
                continue
            has_media_folder = True
            images = _check_folder(Path(entry[key]), extension, report,
                                   captions_from_files="metadata_file" not in entry)
            if key == "video_directory":
                continue
            control = control_dir.strip() or entry.get("control_directory")
            if isinstance(control, str) and control:
                _check_controls(images, Path(control).expanduser(), report)
            elif needs_control and "image_jsonl_file" not in entry:
                report.problems.append(f"This image-edit model needs control images for {entry[key]}: fill in the "
                                       "control images folder, or set control_directory in the dataset TOML.")
    if not has_media_folder:
        report.problems.append(f"Dataset {source} names no image or video folder.")
    if report.media and report.media < batch_size:
        report.warnings.append(f"Only {report.media} image(s)/video(s) for batches of up to {batch_size}: a batch "
                               "cannot be filled, so runs with a larger batch train on the same images as smaller "
                               f"ones; add images or narrow the batch sizes (--batch-sizes 1,{report.media}).")
    return report


def largest_batch(space: Any, knob_name: str = "batch_size") -> int:
    """The largest batch (knob ``knob_name``) a search space may choose (1 when it has none)."""
    try:
        knob = space[knob_name]
    except (KeyError, TypeError):
        return 1
    values = list(getattr(knob, "choices", ())) or [getattr(knob, "high", None), getattr(knob, "value", None)]
    numbers = [int(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return max(numbers, default=1)


def preflight_for_trainer(trainer: Any, fields: Mapping[str, str], *, space: Any = None) -> PreflightReport | None:
    """The pre-flight a trainer adapter's dataset field gets; None for trainers that read no kohya dataset.

    ``space`` (default: the trainer's own search space) gives the largest batch.
    """
    style = getattr(trainer, "dataset_style", None)
    dataset = str(fields.get("dataset", "") or "").strip()
    if not style or not dataset:
        return None
    if space is None:
        space = trainer.declare_search_space()
    return preflight_dataset(
        Path(dataset).expanduser(), style, control_dir=str(fields.get("control_dir", "") or ""),
        needs_control=bool(getattr(trainer, "needs_control_images", False)),
        batch_size=largest_batch(space, getattr(trainer, "batch_knob", "batch_size")),
    )
