"""What a run cost, read from what it left: tfevents wall times, sample files, nvidia-smi samples.

* :func:`phases`: a run's wall time split into *before the first step* (launch, model load and,
  for a session's first run, caching), *steps* (first to last logged step) and *after* (the last
  samples, saving, exit), from the run's start and end and its ``loss/current`` event times.
* :func:`gpu_samples` / :func:`peak_mib` / :func:`idle_seconds`: the CSV that
  ``nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader,nounits -lms N``
  writes: the peak memory, and how long the GPU sat at 0 % between two times.
* :func:`plan_check`: the peak against the preset's memory plan for the VRAM tier (``bracket.trainer.vram``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bracket.trainer.vram import TIERS, memory_flags


@dataclass(frozen=True)
class GpuSample:
    time: float  # seconds since the epoch
    utilization: float  # percent
    memory_mib: float


def step_times(logging_dir: Path, tag: str = "loss/current") -> list[tuple[int, float]]:
    """(step, wall time) of every ``tag`` event under ``logging_dir``, in step order."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    found: dict[int, float] = {}
    for path in sorted(Path(logging_dir).rglob("events.out.tfevents.*")):
        for event in EventFileLoader(str(path)).Load():
            if any(value.tag == tag for value in event.summary.value):
                found.setdefault(int(event.step), float(event.wall_time))
    return sorted(found.items())


def phases(start: float, end: float, steps: list[tuple[int, float]]) -> dict[str, float | int | None]:
    """Wall time of one run split at its first and last logged step (seconds)."""
    wall = end - start
    if not steps:
        return {"wall_s": wall, "before_first_step_s": None, "steps_s": None, "after_s": None,
                "steps": 0, "steps_per_s": None, "before_share": None}
    first, last = steps[0][1], steps[-1][1]
    count = steps[-1][0] - steps[0][0]
    span = last - first
    return {"wall_s": wall, "before_first_step_s": first - start, "steps_s": span, "after_s": end - last,
            "steps": steps[-1][0], "steps_per_s": count / span if span > 0 else None,
            "before_share": (first - start) / wall if wall > 0 else None}


def gpu_samples(path: Path) -> list[GpuSample]:
    """The rows of an nvidia-smi CSV log; unreadable lines (a header, a cut last line) are skipped."""
    rows = []
    if not Path(path).is_file():
        return rows
    for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3:
            continue
        try:
            stamp = datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            rows.append(GpuSample(stamp, float(parts[1]), float(parts[2])))
        except ValueError:
            continue
    return rows


def peak_mib(samples: list[GpuSample], start: float | None = None, end: float | None = None) -> float | None:
    inside = [s.memory_mib for s in samples if (start is None or s.time >= start) and (end is None or s.time <= end)]
    return max(inside) if inside else None


def idle_seconds(samples: list[GpuSample], start: float, end: float) -> float | None:
    """Seconds between ``start`` and ``end`` that the GPU sat at 0 % (each sample holds until the next)."""
    inside = [s for s in samples if start <= s.time <= end]
    if len(inside) < 2:
        return None
    return sum(b.time - a.time for a, b in zip(inside, inside[1:]) if a.utilization <= 0)


def plan_check(trainer, peak: float | None) -> dict:
    """The peak (MiB) against the trainer's tier: the tier's GB, its memory flags, the preset's floor."""
    from bracket.trainer.vram import vram_tier

    tier = vram_tier(trainer.fields)
    flags = memory_flags(trainer.memory_table(), tier) if hasattr(trainer, "memory_table") else []
    peak_gb = None if peak is None else peak / 1024
    return {"tier_gb": tier, "tier_flags": flags, "min_vram_gb": getattr(trainer, "min_vram_gb", None),
            "peak_gb": peak_gb, "fits_tier": None if peak_gb is None else peak_gb <= tier,
            "smaller_tier_would_fit": None if peak_gb is None else [t for t in TIERS if peak_gb <= t][:1]}
