"""A cgroup v2 per run, where the machine lets Bracket create one (Linux).

A process cannot leave its cgroup without write access to another cgroup's ``cgroup.procs``,
so a run's cgroup holds every process the run starts — also one that called ``setsid``,
double-forked and cleared its environment (no run marker left to find it by). Where Bracket's
own cgroup (``/proc/self/cgroup``'s ``0::`` line, under the ``cgroup2`` mount) lets it create
a child cgroup and move a process into it (root in most containers, a delegated systemd unit),
each run gets ``<own cgroup>/bracket-run-<marker>``: the trainer moves itself in between
``fork`` and ``exec`` (it writes ``0`` to the cgroup's ``cgroup.procs``), so nothing it starts
is ever outside. Ending the run kills the cgroup (``cgroup.kill``; where the kernel has none,
every listed process, until none is left) and removes it. Elsewhere :func:`probe` says why
not, and the run is contained by its process group and marker only.
"""

from __future__ import annotations

import functools
import os
import signal
import time
from pathlib import Path

PREFIX = "bracket-run-"


def _v2_mount() -> Path | None:
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if " - " in line and line.split(" - ", 1)[1].split()[:1] == ["cgroup2"] and len(fields) > 4:
            return Path(fields[4])
    return None


def own_cgroup() -> Path | None:
    """The folder of this process's cgroup v2 (None without a cgroup v2 mount)."""
    mount = _v2_mount()
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("0::") and mount is not None:
            folder = mount / line[3:].strip().lstrip("/")
            return folder if folder.is_dir() else None
    return None


@functools.lru_cache(maxsize=1)
def probe() -> str:
    """"" when runs get a cgroup each here; else why not (one sentence)."""
    if os.name == "nt" or not Path("/proc/self/cgroup").exists():
        return "this system has no cgroups (Linux only)"
    own = own_cgroup()
    if own is None:
        return "this machine has no cgroup v2 (the unified hierarchy) mounted"
    test = own / f"{PREFIX}probe-{os.getpid()}"
    try:
        test.mkdir()
    except OSError as error:
        return f"Bracket may not create a cgroup in {own} ({error.strerror})"
    try:
        if not os.access(test / "cgroup.procs", os.W_OK) or not os.access(own / "cgroup.procs", os.W_OK):
            return f"Bracket may not move processes into a cgroup under {own}"
    finally:
        try:
            test.rmdir()
        except OSError:
            pass
    return ""


class RunCgroup:
    """The cgroup of one run: made before the trainer starts, killed and removed after it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._procs_fd: int | None = os.open(path / "cgroup.procs", os.O_WRONLY)

    @classmethod
    def create(cls, marker: str) -> RunCgroup | None:
        """The run's cgroup, or None where :func:`probe` found none may be made (or it fails now)."""
        own = own_cgroup() if not probe() and marker else None
        if own is None:
            return None
        try:
            path = own / f"{PREFIX}{marker}"
            path.mkdir(exist_ok=True)
            return cls(path)
        except OSError:
            return None

    def enter(self) -> None:
        """Called in the child between fork and exec: move this very process into the cgroup."""
        if self._procs_fd is not None:
            try:
                os.write(self._procs_fd, b"0")
            except OSError:
                pass

    def started(self) -> None:
        """After the fork: the parent needs the file no more."""
        if self._procs_fd is not None:
            os.close(self._procs_fd)
            self._procs_fd = None

    def pids(self) -> list[int]:
        return pids_in(self.path)

    def signal_all(self, sig: int) -> None:
        for pid in self.pids():
            try:
                os.kill(pid, sig)
            except OSError:
                pass

    def kill(self) -> None:
        """Kill every process in the cgroup (those it forks meanwhile too)."""
        kill_folder(self.path)

    def close(self, wait_s: float = 2.0) -> None:
        """Kill what is left, wait for it to go, remove the cgroup."""
        self.started()
        kill_folder(self.path, wait_s=wait_s, remove=True)


def pids_in(folder: Path) -> list[int]:
    try:
        text = (folder / "cgroup.procs").read_text(encoding="ascii")
    except OSError:
        return []
    return [int(word) for word in text.split() if word.isdigit()]


def kill_folder(folder: Path, *, wait_s: float = 2.0, remove: bool = False) -> bool:
    """SIGKILL every process of the cgroup ``folder`` until none is left; True if any was.
    ``remove``: then remove the (empty) cgroup."""
    had = bool(pids_in(folder))
    deadline = time.monotonic() + wait_s
    while True:
        try:
            (folder / "cgroup.kill").write_text("1", encoding="ascii")
        except OSError:  # a kernel before 5.14 has no cgroup.kill: one process at a time
            for pid in pids_in(folder):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        if not pids_in(folder) or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    if remove:
        while True:
            try:
                folder.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.02)
    return had


def kill_marked_cgroups(marker: str) -> bool:
    """Kill and remove the cgroup of run ``marker`` wherever it is in the hierarchy (a Bracket
    started again may sit in another cgroup than the one that started the run); True if it
    held a process."""
    mount = _v2_mount()
    if not marker or mount is None or os.name == "nt":
        return False
    killed = False
    name = f"{PREFIX}{marker}"
    for folder, subfolders, _files in os.walk(mount):
        if name in subfolders:
            killed = kill_folder(Path(folder) / name, remove=True) or killed
            subfolders.remove(name)
    return killed
