"""Running one trainer process tree: the executor every run goes through, the runner, the group.

``execute`` (:class:`RunExecutor`: store rows, log, judges' inputs), ``runner``
(:class:`Runner`: log file, watch, stop, kill), ``groups`` (the one place that knows how a
trainer's processes are started and ended: process groups, run markers, cgroups, Job Objects;
the platform parts in ``_posix``, ``_windows``, ``_cgroup``).
"""

from __future__ import annotations

from bracket.lazy_exports import lazy_exports

#: public name -> the module (of this package) that defines it
_WHERE = {
    "RunExecutor": "execute",
    "Runner": "runner",
    "RunResult": "runner",
    "read_log_tail": "runner",
    "ProcessRecord": "groups",
    "Started": "groups",
    "start": "groups",
    "run_marker": "groups",
    "terminate_and_wait": "groups",
    "find_leftovers": "groups",
    "kill_leftovers": "groups",
    "pid_exists": "groups",
}
__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
