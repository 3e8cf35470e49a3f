"""GPU memory tier: how much VRAM the trainer may assume, for memory-saving flags.

Adapters pick memory flags (gradient checkpointing, fp8, block swap, ...) from a coarse
tier. The tier comes from the preset's ``vram_gb`` field, or from ``nvidia-smi`` when the
field says ``auto`` and the tool is present; without either we assume the smallest tier,
which is slow but safe.

The **device** (a preset's ``device`` field: ``auto``/``gpu``/``cpu``) says whether runs
train on the GPU at all; :func:`runs_on_cpu` is the one reading of it, shared by the
families that have a CPU mode (sd-scripts, the LLM trainers).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping

from bracket.fields import FieldSpec

TIERS = (12, 16, 24, 48, 80)
#: the preset field the tier is read from
VRAM_TIER_FIELD = FieldSpec(
    "vram_gb", "GPU memory (GB)", "choice", default="auto",
    choices=("auto", "12", "16", "24", "48", "80"),
    help="Selects memory-saving flags; 'auto' reads nvidia-smi when it is present.",
)


def detect_vram_gb() -> int | None:
    """Total memory of GPU 0 in GB from ``nvidia-smi``; None when it cannot be read."""
    tool = shutil.which("nvidia-smi")
    if not tool:
        return None
    try:
        result = subprocess.run(
            [tool, "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=10, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = result.stdout.strip().splitlines()[:1]
    try:
        return int(float(first[0]) / 1024) if first else None
    except ValueError:
        return None


def vram_tier(fields: Mapping[str, str]) -> int:
    """The largest tier not above the available memory (field, else nvidia-smi, else 12)."""
    value = str(fields.get("vram_gb", "auto") or "auto").strip()
    gigabytes = detect_vram_gb() if value == "auto" else int(float(value))
    if gigabytes is None:
        return TIERS[0]
    fitting = [tier for tier in TIERS if tier <= gigabytes]
    return fitting[-1] if fitting else TIERS[0]


#: ((largest tier in GB, flags), ...), smallest tier first: a family's memory-saving flags
MemoryPlan = tuple[tuple[int, tuple[str, ...]], ...]
#: the "largest tier" of a row that applies to every GPU
ANY_TIER = TIERS[-1]


def memory_flags(plan: MemoryPlan, tier: int) -> list[str]:
    """The flags of the first row of ``plan`` whose tier is at least ``tier`` (none past the last)."""
    for largest, flags in plan:
        if tier <= largest:
            return list(flags)
    return []


#: values of a preset's ``device`` field
DEVICE_CHOICES = ("auto", "gpu", "cpu")


def runs_on_cpu(fields: Mapping[str, str]) -> bool:
    """Whether runs train on the CPU: field ``device`` ``cpu``, or ``auto`` without ``nvidia-smi``."""
    device = str(fields.get("device") or "auto").strip()
    if device == "auto":
        return shutil.which("nvidia-smi") is None
    return device == "cpu"
