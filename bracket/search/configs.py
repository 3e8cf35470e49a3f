"""A named configuration: a point of a search space with a name and where it comes from.

Trainers offer them as the warm start (a baseline and curated configs, each citing its
source, e.g. a trainer's README); the controller queues them before the sampler proposes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class NamedConfig:
    """A configuration with a name and the source it comes from (a doc, a guide)."""

    name: str
    knobs: dict[str, Any]
    source: str = ""
