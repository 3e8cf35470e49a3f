"""Where a session's latent and text-encoder caches live, and the key that names them.

Both kohya trainers decide whether to reuse a cache file by its *existence* (and, at most,
its shape): neither records which model, VAE or flags made it. A cache written by one model
and read by a session over another would silently train on the wrong latents. So Bracket
keeps every cache in a folder named by a digest of what made it:

* the identity of each model file the cache commands read — its resolved path, size and
  modification time (for a folder, those of every file in it; content hashes of 7–20 GB
  files would cost minutes);
* the flags that change what is cached (resolution, precision, variant, token lengths);
* the dataset's files (name, size, modification time), so editing a caption or an image
  makes a new cache instead of reusing a stale one.

Change any of them and the folder name changes; nothing old is reused, nothing is deleted.
:func:`session_cache_dir` maps a setup, trial, finals, promote or export folder of a session
to the session's one ``cache`` folder (or to a shared folder the person chose), so the
pre-caching commands and every run of the session name the same keyed folder.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from bracket.fields import FieldSpec

#: run folders of a session that sit one level below the session folder
RUN_PARENT_FOLDERS = ("trials", "finals", "promote", "export")
#: files never part of a dataset's identity (caches the trainers write beside images)
CACHE_FILE_SUFFIXES = (".npz", ".safetensors")

CACHE_DIR_FIELD = FieldSpec(
    "cache_dir", "Latent cache folder (optional)", "text",
    help="Where latent and text-encoder caches go; empty = <session>/cache. A shared folder lets later "
    "sessions reuse caches; each cache sits in a sub-folder keyed by the model files, flags and dataset "
    "files that made it, so another model or an edited caption never reuses an old cache.",
)


def session_cache_dir(run_dir: Path, override: str = "") -> Path:
    """The session's shared cache folder for a setup or run folder ``run_dir``.

    ``<session>/setup`` and ``<session>/{trials,finals,promote,export}/<run>`` all map to
    ``<session>/cache``; a non-empty ``override`` (the ``cache_dir`` field) wins.
    """
    if override.strip():
        return Path(override.strip()).expanduser()
    run_dir = Path(run_dir)
    if run_dir.parent.name in RUN_PARENT_FOLDERS:
        return run_dir.parent.parent / "cache"
    return run_dir.parent / "cache"


def _stat(path: Path) -> list[Any]:
    try:
        info = path.stat()
    except OSError:
        return [str(path), "missing"]
    return [str(path), info.st_size, info.st_mtime_ns]


def path_identity(value: str | os.PathLike[str]) -> list[Any]:
    """Resolved path, size and mtime of a file; of every file under a folder (Diffusers)."""
    text = str(value).strip()
    if not text:
        return []
    path = Path(text).expanduser()
    try:
        path = path.resolve()
    except OSError:
        pass
    if path.is_dir():
        return [str(path)] + [[str(p.relative_to(path))] + _stat(p)[1:]
                              for p in sorted(path.rglob("*")) if p.is_file()]
    return _stat(path)


def folder_listing(folder: Path) -> list[Any]:
    """Name, size and mtime of each file directly in ``folder`` (caches left out)."""
    folder = Path(folder)
    if not folder.is_dir():
        return [str(folder), "missing"]
    return [str(folder.resolve())] + [
        [p.name] + _stat(p)[1:] for p in sorted(folder.iterdir())
        if p.is_file() and not p.name.lower().endswith(CACHE_FILE_SUFFIXES)
    ]


def cache_key(*, models: Iterable[str], flags: Iterable[str], folders: Iterable[Path],
              extra: Mapping[str, Any] | None = None) -> str:
    """A short digest of what made a cache (model files, flags, dataset files, extras)."""
    document = {
        "models": [path_identity(m) for m in models],
        "flags": [str(f) for f in flags],
        "folders": [folder_listing(f) for f in folders],
        "extra": dict(extra or {}),
    }
    text = json.dumps(document, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def held_out_key(held_out: Iterable[Path]) -> dict[str, Any]:
    """The cache key's part for the likeness references a session leaves out of training
    (``bracket.dataset.references``): nothing when none are, so caches made without them keep
    their key; their paths otherwise, so a folder or cache that lacks them is never shared with a
    session that trains on them (musubi-tuner trains on every cache file in its folder)."""
    names = sorted(str(Path(p)) for p in held_out)
    return {"held_out": names} if names else {}
