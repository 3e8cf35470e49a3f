"""One knob of a search space: a number range (linear or log), a set of choices, or a fixed
value, each optionally *conditional* on earlier knobs (``when``). A knob says what it accepts
(``problem``), how a value is written (``normalise``), its Optuna distribution, and
:func:`uniform_value` draws one of its values at random. :mod:`bracket.search.space` orders
knobs into a :class:`~bracket.search.space.SearchSpace`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

from bracket.errors import SearchSpaceError

if TYPE_CHECKING:  # pragma: no cover - Optuna is imported where a distribution is built: status needs none
    import random

    from optuna.distributions import BaseDistribution

Condition = Mapping[str, tuple]


@dataclass(frozen=True)
class FloatKnob:
    """A real-valued knob in ``[low, high]``, on a log scale when ``log``."""

    low: float
    high: float
    log: bool = False
    when: Condition = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.low <= self.high:
            raise SearchSpaceError(f"FloatKnob bounds are reversed: low {self.low} > high {self.high}.")
        if self.log and self.low <= 0:
            raise SearchSpaceError(f"A log-scale FloatKnob needs low > 0, got {self.low}.")

    def distribution(self) -> BaseDistribution:
        from optuna.distributions import FloatDistribution

        return FloatDistribution(float(self.low), float(self.high), log=self.log)

    def problem(self, value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"must be a number, got {value!r}"
        if not math.isfinite(value):
            return f"must be finite, got {value!r}"
        if not self.low <= value <= self.high:
            return f"{value!r} is outside [{self.low:g}, {self.high:g}]"
        return None

    def normalise(self, value: Any) -> Any:
        return float(value)


@dataclass(frozen=True)
class IntKnob:
    """An integer knob in ``[low, high]`` on a grid of ``step``."""

    low: int
    high: int
    step: int = 1
    log: bool = False
    when: Condition = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.low <= self.high:
            raise SearchSpaceError(f"IntKnob bounds are reversed: low {self.low} > high {self.high}.")
        if self.step < 1:
            raise SearchSpaceError(f"IntKnob step must be >= 1, got {self.step}.")

    def distribution(self) -> BaseDistribution:
        from optuna.distributions import IntDistribution

        return IntDistribution(int(self.low), int(self.high), log=self.log, step=1 if self.log else self.step)

    def problem(self, value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
            return f"must be an integer, got {value!r}"
        if not self.low <= value <= self.high:
            return f"{value!r} is outside [{self.low}, {self.high}]"
        if not self.log and (int(value) - self.low) % self.step:
            return f"{value!r} is not on the grid {self.low}, {self.low + self.step}, ... (step {self.step})"
        return None

    def normalise(self, value: Any) -> Any:
        return int(value)


@dataclass(frozen=True)
class CategoricalKnob:
    """A knob taking one of ``choices`` (str, int, float, bool or None)."""

    choices: tuple
    when: Condition = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "choices", tuple(self.choices))
        if not self.choices:
            raise SearchSpaceError("A CategoricalKnob needs at least one choice.")

    def distribution(self) -> BaseDistribution:
        from optuna.distributions import CategoricalDistribution

        return CategoricalDistribution(self.choices)

    def problem(self, value: Any) -> str | None:
        if value not in self.choices:
            return f"{value!r} is not one of {list(self.choices)}"
        return None

    def normalise(self, value: Any) -> Any:
        return value


@dataclass(frozen=True)
class FixedKnob:
    """A value every configuration has and no search changes."""

    value: Any
    when: Condition = field(default_factory=dict)

    def problem(self, value: Any) -> str | None:
        if value != self.value:
            return f"is fixed at {self.value!r}, got {value!r}"
        return None

    def normalise(self, value: Any) -> Any:
        return value


Knob = Union[FloatKnob, IntKnob, CategoricalKnob, FixedKnob]


def uniform_value(knob: Knob, rng: "random.Random") -> Any:
    """A value of ``knob`` drawn uniformly (log-uniformly on a log range; a fixed knob's own)."""
    if isinstance(knob, CategoricalKnob):
        return rng.choice(knob.choices)
    if isinstance(knob, IntKnob):
        return knob.low + knob.step * rng.randint(0, (knob.high - knob.low) // knob.step)
    if isinstance(knob, FloatKnob):
        if knob.log:
            return math.exp(rng.uniform(math.log(knob.low), math.log(knob.high)))
        return rng.uniform(knob.low, knob.high)
    return knob.value
