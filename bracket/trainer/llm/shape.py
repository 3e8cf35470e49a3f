"""How long an LLM candidate run is and how its batch is laid out: the equal token budget.

Every candidate sees the same number of training examples: ``--steps`` counts optimizer steps
at :data:`REFERENCE_EFFECTIVE_BATCH` examples per step, so a candidate with another effective
batch trains ``round(steps * REFERENCE_EFFECTIVE_BATCH / effective_batch)`` optimizer steps
(:func:`equal_budget_steps`), evaluated about :data:`EVALS_PER_RUN` times (:func:`eval_interval`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bracket.errors import SearchSpaceError

#: effective batch (micro batch x accumulation) at which ``max_steps`` is the step count
REFERENCE_EFFECTIVE_BATCH = 8

#: how many evals a run aims for (plus the one at step 0 where the trainer does it)
EVALS_PER_RUN = 4


@dataclass(frozen=True)
class RunShape:
    """Batch layout and length of one candidate run."""

    micro_batch_size: int
    gradient_accumulation_steps: int
    effective_batch: int
    steps: int
    eval_steps: int
    warmup_ratio: float

    @property
    def warmup_steps(self) -> int:
        """The warmup as a step count (for trainers without a ratio option)."""
        return int(round(self.warmup_ratio * self.steps))


def equal_budget_steps(max_steps: int, effective_batch: int, reference: int = REFERENCE_EFFECTIVE_BATCH) -> int:
    """Optimizer steps that show ``max_steps * reference`` examples at ``effective_batch``."""
    if max_steps < 1 or effective_batch < 1:
        raise SearchSpaceError(f"max_steps ({max_steps}) and the effective batch ({effective_batch}) must be >= 1.")
    return max(1, int(round(max_steps * reference / effective_batch)))


def eval_interval(steps: int, evals: int = EVALS_PER_RUN) -> int:
    """An eval period that divides ``steps`` (so the last step is evaluated on every
    transformers version) and gives about ``evals`` evals; ``steps`` itself if none does."""
    target = max(1, math.ceil(steps / evals))
    divisors = [d for d in range(1, steps + 1) if steps % d == 0 and steps / 8 <= d <= steps / 2]
    if not divisors:
        return steps
    return min(divisors, key=lambda d: (abs(d - target), d))


def run_shape(knobs: Mapping[str, Any], max_steps: int) -> RunShape:
    """Micro batch, accumulation, equal-budget step count and eval period of ``knobs``."""
    effective = int(knobs["effective_batch"])
    micro = min(int(knobs.get("micro_batch_size", 1)), effective)
    if effective % micro:
        raise SearchSpaceError(
            f"Effective batch {effective} is not a multiple of the micro batch {micro}; "
            "choose effective-batch values that the micro batch divides."
        )
    steps = equal_budget_steps(max_steps, effective)
    return RunShape(micro, effective // micro, effective, steps, eval_interval(steps), float(knobs["warmup_ratio"]))
