"""Whether an ai-toolkit model name can load without a download: a local path, or a cached repo id.

ai-toolkit's ``name_or_path`` (and ``extras_name_or_path``, HiDream's ``llama_model_path``) is
either a local file or folder, or a Hugging Face id (``org/name``, sometimes ``org/name/file``)
that diffusers downloads on first use. Bracket runs trainers with ``HF_HUB_OFFLINE=1``: an id is
only usable when its snapshot is already in the cache (``HF_HUB_CACHE``, else
``HF_HOME/hub``, else ``~/.cache/huggingface/hub``), which is what :func:`model_problem` checks.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*(/.+)?$")


def hub_cache() -> Path:
    """The Hugging Face hub cache folder, as huggingface_hub finds it."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or str(Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")) / "huggingface")
    return Path(home).expanduser() / "hub"


def cached_snapshot(repo_id: str) -> Path | None:
    """The newest snapshot folder of ``org/name`` in the hub cache, or None."""
    org_name = "/".join(repo_id.split("/")[:2])
    snapshots = hub_cache() / f"models--{org_name.replace('/', '--')}" / "snapshots"
    found = [p for p in snapshots.iterdir() if p.is_dir()] if snapshots.is_dir() else []
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def model_problem(value: str) -> str | None:
    """Why ``value`` cannot load without a download; None when it can (or is empty: not asked)."""
    value = value.strip()
    if not value:
        return None
    path = Path(value).expanduser()
    if path.exists():
        return None
    if path.is_absolute() or value.startswith((".", "~")) or not _REPO_ID.match(value):
        return f"Model {value} does not exist; give a local model folder or file, or a Hugging Face id in the cache."
    snapshot = cached_snapshot(value)
    if snapshot is None:
        return (f"Model {value} is not in the Hugging Face cache ({hub_cache()}); Bracket never downloads during a "
                f"search: run `huggingface-cli download {'/'.join(value.split('/')[:2])}` first, or give a local path.")
    inner = value.split("/", 2)[2:] if value.count("/") >= 2 else []
    if inner and not (snapshot / inner[0]).exists():
        return f"Model {value}: {inner[0]} is not in the cached snapshot {snapshot}; download it first."
    return None
