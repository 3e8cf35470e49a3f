"""Folder arguments of the CLI (``report``/``export --out``, ``demo-data``): refused in one line
when nothing can be made there, before anything is written."""

from __future__ import annotations

import tempfile
from pathlib import Path

from bracket.errors import BracketError


def output_folder(path: Path | str | None, what: str) -> None:
    """Refuse, in one line, a folder argument that names a file or lies inside one (the folder
    itself is made when it is missing)."""
    if path is None:
        return
    for part in (Path(path), *Path(path).parents):
        if part.exists():
            if not part.is_dir():
                raise BracketError(f"{what} {path}: {part} is a file, not a folder; give a folder "
                                   "(it is made when missing).")
            _can_write_in(part, path, what)
            return


def _can_write_in(folder: Path, path: Path | str, what: str) -> None:
    """Refuse a folder nothing can be made in (``/proc``, a read-only mount): a probe folder is
    made there and removed at once (permissions alone do not tell, e.g. for root)."""
    try:
        Path(tempfile.mkdtemp(prefix=".bracket-probe-", dir=folder)).rmdir()
    except OSError as error:
        raise BracketError(f"{what} {path}: nothing can be written in {folder} ({type(error).__name__}: "
                           f"{error.strerror}); give a writable folder.") from None
