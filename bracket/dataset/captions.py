"""The one way Bracket reads a caption file of a dataset (prompt proposals, pre-flight).

A caption is text the dataset's owner wrote, and what Bracket reads of it can end up in a
proposed prompt, the store, the trainer's prompt file and the web form. So a caption is read
only when

* its real path (links followed) is inside the folder it was found in — a ``001.txt`` linked
  to ``/proc/self/environ`` or ``~/.ssh/id_rsa`` is not read;
* it is a regular file (not a FIFO, which would block, nor a device), checked on the opened
  file itself, and the last link is not followed at open (it cannot be swapped in between);
* it is at most :data:`MAX_CAPTION_BYTES` long — a caption is a sentence or a list of tags,
  and a 286 MB file is not read whole.

Anything else is :data:`REFUSED` with the reason, never an exception. The trainers read the
captions themselves when they train; this is only what Bracket reads.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

#: the longest caption read, in bytes (a long tag list is under 2 kB)
MAX_CAPTION_BYTES = 8 * 1024


@dataclass(frozen=True)
class Caption:
    """A caption's text, or why it was not read (``refused``; ``text`` is then "")."""

    text: str = ""
    refused: str = ""


def read_caption(path: Path, folder: Path) -> Caption:
    """The text of caption ``path`` found in ``folder`` (UTF-8, undecodable bytes replaced), or
    why it is not read (see the module docstring)."""
    try:
        real, root = Path(path).resolve(strict=True), Path(folder).resolve(strict=True)
    except (OSError, RuntimeError, ValueError) as error:
        return Caption(refused=f"cannot be opened ({type(error).__name__})")
    if not real.is_relative_to(root):
        return Caption(refused="is a link to a file outside the dataset folder")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        handle = os.open(real, flags)
    except OSError as error:
        return Caption(refused=f"cannot be opened ({error.strerror or type(error).__name__})")
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            return Caption(refused="is not a regular file")
        if info.st_size > MAX_CAPTION_BYTES:
            return Caption(refused=f"is over {MAX_CAPTION_BYTES // 1024} kB")
        data = os.read(handle, MAX_CAPTION_BYTES + 1)
    except OSError as error:
        return Caption(refused=f"cannot be read ({error.strerror or type(error).__name__})")
    finally:
        os.close(handle)
    if len(data) > MAX_CAPTION_BYTES:  # it grew since fstat
        return Caption(refused=f"is over {MAX_CAPTION_BYTES // 1024} kB")
    return Caption(text=data.decode("utf-8", errors="replace"))
