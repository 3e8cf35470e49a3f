"""Writing a report's or an export's files whole, or not at all."""

from __future__ import annotations

import os
from pathlib import Path


def write_whole(path: Path, data: bytes | str, *, mode: int | None = None) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` unless it already holds exactly that: into a
    temporary file beside it, then renamed over it, so a reader (or a second writer) never sees
    half a file, and a full disk leaves the old file (or none), never an empty or cut one."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = Path(path)
    try:
        if path.read_bytes() == data:
            return path
    except OSError:
        pass
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(data)
        if mode is not None:
            temporary.chmod(mode)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return path
