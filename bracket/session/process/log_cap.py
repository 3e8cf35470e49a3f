"""A launch's trainer log kept to a size: its first and its last bytes, and what was cut.

A trainer's output goes straight to ``logs/stdout.log`` (appended, never a pipe); one that prints
200 MB of progress or warnings would keep it all. :class:`LogCap` watches the part of the log
one launch wrote: past :data:`MAX_LAUNCH_LOG_BYTES` it keeps the launch's first
:data:`HEAD_BYTES` and its newest bytes, and writes in between one line saying how many bytes
were cut. The trainer appends (``O_APPEND``), so it goes on writing at the new end; output
written during the few milliseconds of a cut may be lost with the middle.
"""

from __future__ import annotations

from pathlib import Path

#: the most one launch keeps in its log (its head and its tail)
MAX_LAUNCH_LOG_BYTES = 64 << 20
#: the first bytes of a launch's output, always kept (the command, the versions, the first errors)
HEAD_BYTES = 8 << 20
_CHUNK = 1 << 20


class LogCap:
    """The cap of one launch's part of ``path``, which starts at the log's size now."""

    def __init__(self, path: Path, *, limit: int = MAX_LAUNCH_LOG_BYTES, head: int = HEAD_BYTES) -> None:
        self.path = Path(path)
        self.limit, self.head = int(limit), min(int(head), int(limit) // 2)
        try:
            self.start = self.path.stat().st_size
        except OSError:
            self.start = 0
        #: bytes of this launch's output cut so far
        self.cut = 0

    def note(self) -> bytes:
        return (f"\n[bracket] {self.cut} bytes of trainer output were cut here: a launch's log keeps its first "
                f"{self.head} and its last bytes, {self.limit} in all\n").encode()

    def check(self) -> int:
        """Cut the middle of this launch's output once it passes the limit; the bytes cut now."""
        try:
            size = self.path.stat().st_size
        except OSError:
            return 0
        if size - self.start <= self.limit:
            return 0
        keep_from = self.start + self.head  # the head stays, the note and the newest bytes follow it
        tail = self.limit - self.head - len(self.note()) - 64  # room for a longer number in the note
        source = size - tail
        try:
            with open(self.path, "r+b") as log:
                log.seek(keep_from)
                old_note = len(self.note()) if self.cut else 0
                cut_now = source - keep_from - old_note
                self.cut += cut_now
                note = self.note()
                write_at, read_at = keep_from + len(note), source
                log.seek(keep_from)
                log.write(note)
                while True:  # copied forward in chunks: the target is always before the source
                    log.seek(read_at)
                    chunk = log.read(_CHUNK)
                    if not chunk:
                        break
                    log.seek(write_at)
                    log.write(chunk)
                    read_at += len(chunk)
                    write_at += len(chunk)
                log.truncate(write_at)
        except OSError:
            return 0
        return cut_now
