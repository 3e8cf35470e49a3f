"""Thumbnails of sample images, written once into the session folder.

The Compare grid shows many samples at once (8 runs × 8 prompts × every saved step), and
the UI polls. Re-reading and re-encoding the full images on every request would make it
slow, so each source image gets one small PNG under ``<session>/thumbs/``, named by a hash
of the source path, its modification time and the thumbnail size. A changed source (a
re-run that wrote a new file at the same path) gets a new name; an unchanged one is never
read again — the grid is built from paths alone.

Images outside the session folder (an edit model's control image in the dataset) are
shown through a thumbnail too, which keeps everything the app serves under the runs folder.
For blind comparisons, :meth:`ThumbnailCache.alias` gives the full file (unchanged bytes)
a name that does not reveal the run folder and hence the config.

Keyed by the file, not the store's change marker (a picture's thumbnail depends only on its
bytes); one per open session, a declared part of the process's one cache owner
(``bracket.session.store.change_memo``, ``PARTS["thumbnails"]``), its index of made thumbnails
bounded (:data:`MAX_KNOWN`, the least recently used dropped; the files stay on disk).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from collections import OrderedDict
from pathlib import Path

from PIL import Image

THUMB_FOLDER = "thumbs"
DEFAULT_SIZE = 256
#: size of the "full" copy made for images that live outside the runs folder
FULL_SIZE = 1024
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
#: thumbnails whose paths are remembered in memory (one forgotten is found on disk again)
MAX_KNOWN = 4096


class ThumbnailCache:
    """Small PNG copies of images, keyed by (source path, mtime, size)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder) / THUMB_FOLDER
        self._lock = threading.Lock()
        self._known: OrderedDict[tuple[str, float, int], Path] = OrderedDict()

    def path_for(self, source: Path, size: int = DEFAULT_SIZE) -> Path | None:
        """The thumbnail of ``source`` (made now if missing); None if it cannot be read."""
        source = Path(source)
        if source.suffix.lower() not in _IMAGE_SUFFIXES:
            return None
        try:
            mtime = os.stat(source).st_mtime
        except OSError:
            return None
        key = (str(source), mtime, size)
        with self._lock:
            known = self._known.get(key)
            if known is not None:
                self._known.move_to_end(key)
        if known is not None:
            return known
        digest = hashlib.sha1(f"{source}|{mtime}|{size}".encode()).hexdigest()[:20]
        target = self.folder / f"{digest}.png"
        if not target.is_file() and not self._write(source, target, size):
            return None
        with self._lock:
            self._known[key] = target
            while len(self._known) > MAX_KNOWN:
                self._known.popitem(last=False)
        return target

    def known(self) -> int:
        """How many thumbnails' paths are remembered (at most :data:`MAX_KNOWN`)."""
        with self._lock:
            return len(self._known)

    def alias(self, source: Path) -> Path | None:
        """The file itself under a name that says nothing (blind comparisons): a hard link or copy."""
        source = Path(source)
        try:
            mtime = os.stat(source).st_mtime
        except OSError:
            return None
        digest = hashlib.sha1(f"{source}|{mtime}|alias".encode()).hexdigest()[:20]
        target = self.folder / f"{digest}{source.suffix.lower()}"
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            try:
                os.link(source, partial)
            except OSError:
                shutil.copyfile(source, partial)
            os.replace(partial, target)
        return target

    @staticmethod
    def _write(source: Path, target: Path, size: int) -> bool:
        try:
            with Image.open(source) as image:
                image.load()
                copy = image.convert("RGBA" if image.mode in ("RGBA", "LA", "P") else "RGB")
            copy.thumbnail((size, size), Image.Resampling.LANCZOS)
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            copy.save(partial, format="PNG")
            os.replace(partial, target)
            return True
        except (OSError, ValueError):
            return False
