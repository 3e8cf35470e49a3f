"""The likeness references: a held-out share of a diffusion dataset's images that no run trains on.

The likeness judge (docs/JUDGES.md) compares each run's samples with reference images of the
subject. Images the runs trained on would reward memorising them, so where the dataset is big
enough a share of its images is **held out**: every run of the session (and its export) trains
on the rest, and the held-out images are the references.

**The rule** (:func:`held_count`): a dataset with at least :data:`MIN_IMAGES` images holds out
10 % of them (:data:`SHARE`), at least :data:`MIN_HELD` and at most :data:`MAX_HELD`. Below
that, taking images from a 5–11-image LoRA dataset costs the LoRA a real part of what it learns
from, so nothing is held out and the references are spread training images instead
(``bracket.session.scoring.image_config``), which the session's notes and every image-judge
record say. Only images count (video datasets have no image references; nothing is held out).

**Which images** (:func:`choose`): spread evenly over the dataset's images in name order — no
seed, so the same dataset gives the same references on every read. The session stores the
*count* when it is created (``SearchSettings.reference_holdout``), so a resumed session holds out
the same images, and a session made before this existed holds out none.

**How they stay out of training**: the trainer adapters read the dataset's folders through a
folder of links to every file but the held-out images and their side files
(:func:`training_folder`): sd-scripts' mirror folders, musubi-tuner's per-dataset image folders
and ai-toolkit's ``folder_path``. Datasets named by JSONL/metadata files have no image folders
here, so they hold nothing out.
"""

from __future__ import annotations

import shutil
from collections.abc import Collection, Sequence
from pathlib import Path

from bracket.dataset.preflight import IMAGE_EXTENSIONS
from bracket.dataset.runtime import dataset_image_dirs
from bracket.errors import BracketError

#: a dataset needs at least this many images for held-out references
MIN_IMAGES = 12
#: the share of its images held out ...
SHARE = 0.10
#: ... but at least this many (one image says more about itself than about the subject) ...
MIN_HELD = 2
#: ... and at most this many (each is an image the runs do not learn from)
MAX_HELD = 8


def held_count(images: int) -> int:
    """How many of ``images`` dataset images are held out (0 below :data:`MIN_IMAGES`)."""
    if images < MIN_IMAGES:
        return 0
    return max(MIN_HELD, min(MAX_HELD, round(SHARE * images)))


def dataset_images(dataset: str | Path | None, style: str | None) -> list[Path]:
    """The images (not videos) in the dataset's media folders, sorted by path ([] when it names none)."""
    if not dataset or not style:
        return []
    try:
        folders = dataset_image_dirs(Path(dataset).expanduser(), str(style))
    except (BracketError, OSError, ValueError):
        return []
    return sorted(p for folder in folders if folder.is_dir() for p in folder.iterdir()
                  if p.is_file() and p.suffix.lower() in IMAGE_EXTENSIONS)


def choose(images: Sequence[Path], count: int) -> list[Path]:
    """``count`` of ``images`` spread evenly over them (all of them when there are no more)."""
    images = list(images)
    if count <= 0:
        return []
    if len(images) <= count:
        return images
    return [images[int((i + 0.5) * len(images) / count)] for i in range(count)]


def held_out_references(dataset: str | Path | None, style: str | None, count: int) -> list[Path]:
    """The ``count`` held-out images of the dataset (absolute paths; [] when ``count`` is 0)."""
    return [p.resolve() for p in choose(dataset_images(dataset, style), count)] if count > 0 else []


def _held_stems(folder: Path, excluded: Collection[Path]) -> set[str]:
    folder = folder.resolve()
    return {Path(p).stem for p in excluded if Path(p).resolve().parent == folder}


def _link(source: Path, dest: Path) -> None:
    for make in (dest.symlink_to, dest.hardlink_to, lambda target: shutil.copy2(target, dest)):
        try:
            make(source)
            return
        except FileExistsError:
            return
        except OSError:
            continue


def training_folder(folder: Path, excluded: Collection[Path], dest: Path, *,
                    skip_suffixes: tuple[str, ...] = ()) -> Path:
    """``dest`` filled with links to ``folder``'s files but the ``excluded`` images and every file
    sharing their name stem (caption, metadata, a trainer's cache); files named ``*skip_suffixes``
    (cache files) are not linked either. Links already there are kept (runs share the folder);
    a held-out file found there (a folder made by an older rule) is removed."""
    dest.mkdir(parents=True, exist_ok=True)
    held = _held_stems(folder, excluded)
    for old in dest.iterdir():
        if old.stem in held:
            old.unlink(missing_ok=True)
    if not folder.is_dir():
        return dest
    for item in sorted(folder.iterdir()):
        if not item.is_file() or item.name.lower().endswith(skip_suffixes):
            continue
        if item.stem in held:
            continue
        link = dest / item.name
        if not (link.is_symlink() or link.exists()):
            _link(item.resolve(), link)
    return dest


def note(images: int, count: int, *, supported: bool, wanted: bool) -> str:
    """The session note on the likeness references (one sentence, for the notes and the report)."""
    if not wanted:
        return ""
    if not supported:
        return ("Likeness references: this trainer cannot leave images out, so likeness is measured against "
                "training images.")
    if count:
        return (f"Likeness references: {count} of the dataset's {images} images are held out (never trained on, "
                "the export included) and are what likeness is measured against.")
    return (f"Likeness references: the dataset has {images} images, fewer than {MIN_IMAGES}, so none is held "
            "out; likeness is measured against training images (it rewards memorising them).")
