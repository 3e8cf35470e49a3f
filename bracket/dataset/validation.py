"""Dataset pre-flight: are there images, do they have captions, can the trainer read them.

Run before anything is launched, so that a search does not spend an hour of GPU time to
find out that half the captions are missing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from bracket.dataset.runtime import dataset_image_dirs
from bracket.errors import DatasetError

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
VIDEO_EXTENSIONS = (".mp4", ".webm", ".mov", ".avi", ".mkv")


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


#: the first bytes of each image format a trainer reads (WebP: RIFF....WEBP)
_SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"BM")


def _looks_like_image(path: Path) -> bool:
    """Whether ``path`` starts like a PNG, JPEG, WebP or BMP file (reads 12 bytes)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(12)
    except OSError:
        return False
    return head.startswith(_SIGNATURES) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")


def preflight_dataset(source: Path, style: str, *, caption_extension: str = ".txt") -> PreflightReport:
    """Check the dataset at ``source`` (TOML or folder) for the trainer style ``style``."""
    report = PreflightReport()
    try:
        folders = dataset_image_dirs(Path(source), style)
    except DatasetError as error:
        report.problems.append(str(error))
        return report
    if not folders:
        report.problems.append(f"Dataset {source} names no image or video folder.")
    for folder in folders:
        report.folders.append(str(folder))
        if not folder.is_dir():
            report.problems.append(f"Folder {folder} does not exist.")
            continue
        if not os.access(folder, os.R_OK | os.X_OK):
            report.problems.append(f"Folder {folder} cannot be read; check its permissions.")
            continue
        media = [p for p in folder.iterdir() if p.suffix.lower() in IMAGE_EXTENSIONS + VIDEO_EXTENSIONS]
        report.media += len(media)
        missing = [p.name for p in media if not p.with_suffix(caption_extension).is_file()]
        report.captions += len(media) - len(missing)
        broken = [p.name for p in media if p.suffix.lower() in IMAGE_EXTENSIONS and not _looks_like_image(p)]
        if broken:
            report.problems.append(f"{len(broken)} file(s) in {folder} are not images although their names say so "
                                   f"(e.g. {broken[0]}); replace or remove them.")
        if not media:
            report.problems.append(f"Folder {folder} holds no images or videos.")
        elif len(missing) == len(media):
            report.problems.append(
                f"No image in {folder} has a {caption_extension} caption; add one text file per image."
            )
        elif missing:
            report.warnings.append(f"{len(missing)} file(s) in {folder} have no caption (e.g. {missing[0]}).")
    return report
