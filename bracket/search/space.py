"""The search space: which knobs a trainer searches, over which ranges, and which are fixed.

A :class:`SearchSpace` maps knob names to knobs, in order. Searched knobs become Optuna
distributions; a :class:`FixedKnob` is part of every configuration but never searched. A
knob may be *conditional* (``when={"optimizer_type": ("Prodigy",)}``): it exists only in
configurations where an earlier categorical or fixed knob has one of the listed values.
That is how a trainer searches the learning rate of AdamW on a log range around 1e-4 and
the learning rate of Prodigy around 1.0 without either range swallowing the other.

People narrow a space with bounds (learning-rate min/max, batch-size choices). The same
bounds apply to the baseline and the curated configs through :meth:`SearchSpace.fit`,
which clamps a value into range (and says so) or drops a config that cannot fit (and says
why) — nothing is changed silently.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from bracket.errors import SearchSpaceError
from bracket.search.knobs import CategoricalKnob, FixedKnob, FloatKnob, IntKnob, Knob

if TYPE_CHECKING:  # pragma: no cover - Optuna is imported where a distribution is built: status needs none
    import optuna
    from optuna.distributions import BaseDistribution

#: the knob types, where most callers name them with the space (:mod:`bracket.search.knobs`)
__all__ = ["CategoricalKnob", "FitResult", "FixedKnob", "FloatKnob", "IntKnob", "Knob", "SearchSpace"]

@dataclass(frozen=True)
class FitResult:
    """A config after :meth:`SearchSpace.fit`: the fitted config (None if dropped) and notes."""

    config: dict[str, Any] | None
    notes: tuple[str, ...] = ()


class SearchSpace(Mapping[str, Knob]):
    """An ordered mapping of knob name to knob; conditions refer only to earlier knobs."""

    def __init__(self, knobs: Mapping[str, Knob]) -> None:
        self._knobs: dict[str, Knob] = dict(knobs)
        seen: set[str] = set()
        for name, knob in self._knobs.items():
            for parent in knob.when:
                if parent not in seen:
                    raise SearchSpaceError(f"Knob {name!r} depends on {parent!r}, which must come before it.")
                if not isinstance(self._knobs[parent], (CategoricalKnob, FixedKnob)):
                    raise SearchSpaceError(f"Knob {name!r} may only depend on a categorical or fixed knob.")
            seen.add(name)

    def __getitem__(self, name: str) -> Knob:
        return self._knobs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._knobs)

    def __len__(self) -> int:
        return len(self._knobs)

    def __repr__(self) -> str:
        return f"SearchSpace({self._knobs!r})"

    # -- structure ---------------------------------------------------------------------
    def searched(self) -> list[str]:
        """Names of the knobs a search varies (everything but fixed knobs)."""
        return [n for n, k in self._knobs.items() if not isinstance(k, FixedKnob)]

    def is_active(self, name: str, config: Mapping[str, Any]) -> bool:
        """Whether ``name`` belongs in ``config`` given its conditions."""
        return all(config.get(parent) in allowed for parent, allowed in self._knobs[name].when.items())

    def fill(self, choose: Callable[[str, "Knob", dict[str, Any]], Any]) -> dict[str, Any]:
        """A config of every active knob, in order (a knob's conditions read the knobs before it):
        a fixed knob takes its value, any other ``choose(name, knob, the config so far)``. Every
        config the search builds is filled this way (Optuna's suggestions, shape and focus draws)."""
        config: dict[str, Any] = {}
        for name, knob in self._knobs.items():
            if self.is_active(name, config):
                config[name] = knob.value if isinstance(knob, FixedKnob) else choose(name, knob, config)
        return config

    def complete(self, knobs: Mapping[str, Any]) -> dict[str, Any]:
        """``knobs`` with every active fixed knob filled in and inactive knobs removed."""
        config: dict[str, Any] = {}
        for name, knob in self._knobs.items():
            if not self.is_active(name, config):
                continue
            if isinstance(knob, FixedKnob) and name not in knobs:
                config[name] = knob.value
            elif name in knobs:
                config[name] = knob.normalise(knobs[name]) if knob.problem(knobs[name]) is None else knobs[name]
        for name, value in knobs.items():
            if name not in self._knobs:
                config[name] = value  # kept so that validate() names it
        return config

    def problems(self, config: Mapping[str, Any]) -> list[str]:
        """Every reason ``config`` does not fit, one line per offending knob."""
        found: list[str] = []
        for name in config:
            if name not in self._knobs:
                found.append(f"{name}: not a knob of this trainer (known: {', '.join(self._knobs)})")
        for name, knob in self._knobs.items():
            active = self.is_active(name, config)
            if not active:
                if name in config:
                    conditions = ", ".join(f"{p} in {list(v)}" for p, v in knob.when.items())
                    found.append(f"{name}: only used when {conditions}")
                continue
            if name not in config:
                found.append(f"{name}: missing")
                continue
            problem = knob.problem(config[name])
            if problem:
                found.append(f"{name}: {problem}")
        return found

    def validate(self, config: Mapping[str, Any]) -> None:
        """Raise :class:`SearchSpaceError` naming every offending knob and why."""
        found = self.problems(config)
        if found:
            raise SearchSpaceError("Configuration does not fit the search space: " + "; ".join(found))

    # -- Optuna ---------------------------------------------------------------------------
    def distributions(self, config: Mapping[str, Any] | None = None) -> dict[str, BaseDistribution]:
        """Optuna distributions of the searched knobs (those active in ``config`` if given)."""
        result: dict[str, BaseDistribution] = {}
        for name, knob in self._knobs.items():
            if isinstance(knob, FixedKnob):
                continue
            if config is not None and not self.is_active(name, config):
                continue
            result[name] = knob.distribution()
        return result

    def suggest(self, trial: optuna.trial.BaseTrial) -> dict[str, Any]:
        """Ask ``trial`` for a value of every active knob, define-by-run, in order."""
        def ask(name: str, knob: Knob, config: dict[str, Any]) -> Any:
            if isinstance(knob, FloatKnob):
                return trial.suggest_float(name, knob.low, knob.high, log=knob.log)
            if isinstance(knob, IntKnob):
                return trial.suggest_int(name, knob.low, knob.high, step=1 if knob.log else knob.step, log=knob.log)
            assert isinstance(knob, CategoricalKnob), "fill() gives fixed knobs their value"
            return trial.suggest_categorical(name, knob.choices)
        return self.fill(ask)

    def searched_params(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """The searched (non-fixed) part of ``config``: what Optuna records as params (the names
        :meth:`distributions` gives, without building a distribution per knob: the standings ask
        this of every config)."""
        return {name: config[name] for name, knob in self._knobs.items()
                if not isinstance(knob, FixedKnob) and name in config and self.is_active(name, config)}

    # -- user bounds -------------------------------------------------------------------
    def narrow(self, bounds: Mapping[str, Any]) -> "SearchSpace":
        """A space narrowed by user bounds.

        ``bounds`` maps a knob name to ``(low, high)`` for a numeric knob or to a list of
        choices for a categorical knob. Choices given for a fixed knob turn it into a
        searched categorical knob (e.g. batch-size choices). A bound that does not fit raises
        ``SearchSpaceError``; with several, its message names each (one sentence apiece).
        """
        knobs = dict(self._knobs)
        problems: list[str] = []
        for name, bound in bounds.items():
            try:
                knobs[name] = _narrowed(name, bound, knobs.get(name))
            except SearchSpaceError as error:  # every bad bound is named, not only the first
                problems.append(str(error))
        if problems:
            raise SearchSpaceError(" ".join(problems))
        return SearchSpace(knobs)

    def fit(self, config: Mapping[str, Any], *, label: str = "config") -> FitResult:
        """Fit a warm-start config into this (possibly narrowed) space.

        Numbers outside a range are clamped, with a note; a categorical value that is no
        longer a choice, or a fixed value that differs, drops the config, with a note that says
        only why (not the clamps made before it was dropped).
        """
        fitted = dict(self.complete(config))
        notes: list[str] = []
        for name, knob in self._knobs.items():
            if name not in fitted or not self.is_active(name, fitted):
                continue
            value = fitted[name]
            if isinstance(knob, (FloatKnob, IntKnob)) and isinstance(value, (int, float)):
                clamped = min(max(value, knob.low), knob.high)
                if clamped != value:
                    notes.append(f"{label}: {name} {value:g} clamped to {clamped:g} by the bounds")
                    fitted[name] = knob.normalise(clamped)
            elif (isinstance(knob, CategoricalKnob) and _is_number(value) and value not in knob.choices
                  and knob.choices and all(_is_number(c) for c in knob.choices)):
                # a numeric choice narrowed away (e.g. --batch-sizes 2,4 and a baseline at 16): keep the
                # config at the nearest allowed value rather than losing the whole warm start
                nearest = min(knob.choices,
                              key=lambda c: (abs(math.log(max(float(c), 1e-12) / max(float(value), 1e-12))), c))
                notes.append(f"{label}: {name} {value:g} moved to {nearest:g}, the nearest allowed choice")
                fitted[name] = nearest
        fitted = self.complete(fitted)
        remaining = self.problems(fitted)
        if remaining:
            return FitResult(None, (f"{label}: dropped, it cannot fit the bounds ({'; '.join(remaining)})",))
        return FitResult(fitted, tuple(notes))


def _narrowed(name: str, bound: Any, knob: Any) -> Any:
    """``knob`` narrowed by one ``bound`` (see :meth:`SearchSpace.narrow`)."""
    if knob is None:
        raise SearchSpaceError(f"Bound for {name!r}: this trainer has no such knob.")
    if isinstance(knob, (FloatKnob, IntKnob)):
        low, high = _pair(name, bound)
        new_low, new_high = max(knob.low, low), min(knob.high, high)
        if new_low > new_high and low == high:  # a lock (the table's lock cell, or MIN = MAX)
            raise SearchSpaceError(
                f"Lock for {name!r} at {low:g} is outside the trainer's range "
                f"[{knob.low:g}, {knob.high:g}]; pick a value inside it."
            )
        if new_low > new_high:
            raise SearchSpaceError(
                f"Bound for {name!r} [{low:g}, {high:g}] does not overlap the trainer's range "
                f"[{knob.low:g}, {knob.high:g}]; widen it."
            )
        if isinstance(knob, IntKnob):
            return replace(knob, low=int(math.ceil(new_low)), high=int(math.floor(new_high)))
        return replace(knob, low=new_low, high=new_high)
    if isinstance(knob, FixedKnob) and _is_number(knob.value) and _is_pair(bound):
        choices = _number_choices(name, bound)
    else:
        choices = tuple(bound) if not isinstance(bound, (str, bytes)) else (bound,)
    if isinstance(knob, FixedKnob) and _is_number(knob.value):
        choices = tuple(_as_number(name, c, type(knob.value)) for c in choices)
    elif isinstance(knob, CategoricalKnob) and all(_is_number(c) for c in knob.choices):
        choices = tuple(_as_number(name, c, float) for c in choices)  # "8" matches 8
    if not choices:
        raise SearchSpaceError(f"Bound for {name!r} lists no choices.")
    if isinstance(knob, CategoricalKnob):
        kept = tuple(c for c in knob.choices if c in choices)
        unknown = [c for c in choices if c not in knob.choices]
        if unknown:  # a typo must not silently narrow the search to the other choices
            raise SearchSpaceError(
                f"Bound for {name!r}: {', '.join(map(str, unknown))} "
                f"{'is' if len(unknown) == 1 else 'are'} not among {list(knob.choices)}."
            )
        return CategoricalKnob(kept, when=knob.when)
    return CategoricalKnob(choices, when=knob.when) if len(choices) > 1 else FixedKnob(choices[0], when=knob.when)


def _pair(name: str, bound: Any) -> tuple[float, float]:
    try:
        low, high = (float(b) for b in bound)
    except (TypeError, ValueError):
        shown = ",".join(map(str, bound)) if isinstance(bound, (list, tuple)) else str(bound)
        raise SearchSpaceError(f"Bound for {name!r} is a number range, got {shown!r}; write {name}=MIN:MAX "
                               f"such as 1e-5:1e-3 (or V:V to lock it).") from None
    if math.isnan(low) or math.isnan(high):
        raise SearchSpaceError(f"Bound for {name!r} must be numbers, got {bound!r}; write MIN:MAX such as 1e-5:1e-3.")
    if low > high:
        raise SearchSpaceError(f"Bound for {name!r} is reversed: min {low:g} > max {high:g}; swap them.")
    return low, high


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_pair(bound: Any) -> bool:
    return isinstance(bound, tuple) and len(bound) == 2 and all(_is_number(b) for b in bound)


def _number_choices(name: str, bound: Any) -> tuple:
    """The ends of ``(low, high)`` and the powers of two strictly between them."""
    low, high = _pair(name, bound)
    between = [2.0 ** k for k in range(0, 64) if low < 2.0 ** k < high]
    return tuple(dict.fromkeys([low, *between, high]))


def _as_number(name: str, value: Any, kind: type) -> Any:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SearchSpaceError(f"Bound for {name!r}: {value!r} is not a number.") from None
    if kind is int:
        if number != int(number) or number < (1 if name.endswith("batch_size") else 0):
            raise SearchSpaceError(f"Bound for {name!r}: {value!r} must be a "
                                   f"{'positive' if name.endswith('batch_size') else 'non-negative'} whole number.")
        return int(number)
    return number
