"""The combined score of a run: a weighted mean of the judges that have scored it.

Every judge score is in [0, 1], lower is better (see :mod:`bracket.judge.base`). For one run:

* if any judge **disqualified** the run (NaN loss, divergence, no log), the combination is
  disqualified too, whatever that judge's weight -- a broken run is never "best";
* otherwise the judges that have a score and a weight above 0 are **used**; their weights are
  renormalised to sum to 1 and the value is the weighted mean. A judge with no data for this
  run (nobody rated it yet, no VLM configured) simply drops out;
* if no judge is used, the value is None (the run is not ranked yet).

:data:`DEFAULT_WEIGHTS` is the single source of the default weights for the UI and the CLI;
:func:`parse_weights` is their one parser (text or form values); :func:`validate_weights` rejects negative, non-numeric and all-zero weights with a
:class:`WeightsError` that says what to do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from bracket.errors import BracketError
from bracket.judge.base import JudgeResult

JUDGE_NAMES = ("loss", "human", "vlm", "eval_loss")
DEFAULT_WEIGHTS: dict[str, float] = {"loss": 1.0, "human": 2.0, "vlm": 1.0, "eval_loss": 1.0}


class WeightsError(BracketError):
    """Judge weights that cannot be used (negative, not a number, or all zero)."""


@dataclass(frozen=True)
class CombinedScore:
    """One run's combined score and what it is made of."""

    value: float | None
    used: list[str] = field(default_factory=list)
    weights_used: dict[str, float] = field(default_factory=dict)
    disqualified: bool = False
    reason: str = ""


def validate_weights(weights: Mapping[str, Any]) -> dict[str, float]:
    """The weights as floats; raises WeightsError for negative, non-numeric or all-zero weights."""
    checked: dict[str, float] = {}
    for name, value in weights.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise WeightsError(
                f"weight of judge {name!r} must be a number, got {value!r}; use e.g. {name}=1.0"
            )
        if value < 0:
            raise WeightsError(
                f"weight of judge {name!r} is negative ({value}); use 0 to switch that judge off"
            )
        checked[str(name)] = float(value)
    if sum(checked.values()) <= 0:
        defaults = ", ".join(f"{k}={v:g}" for k, v in DEFAULT_WEIGHTS.items())
        raise WeightsError(
            f"all judge weights are 0; give at least one judge a weight above 0 (defaults: {defaults})"
        )
    return checked


def parse_weights(given: str | Mapping[str, Any] | None, base: Mapping[str, float] | None = None) -> dict[str, float]:
    """The one weights parser of the UI and the CLI: ``given`` laid over ``base`` (default
    DEFAULT_WEIGHTS), validated.

    ``given`` is the CLI's text ``"loss=1,human=2"`` or the Setup form's mapping of judge
    name to number (or to the text of a number); empty or None keeps ``base``. Unknown judge
    names, values that are not numbers, negative and all-zero weights raise ``WeightsError``.
    """
    weights: dict[str, Any] = dict(DEFAULT_WEIGHTS if base is None else base)
    if isinstance(given, Mapping):
        items = [(str(name), value) for name, value in given.items()]
    else:
        items = []
        for item in filter(None, (part.strip() for part in (given or "").split(","))):
            name, sep, value = item.partition("=")
            if not sep:
                raise WeightsError(f"cannot read judge weight {item!r}; write name=number with a name from {JUDGE_NAMES}")
            items.append((name.strip(), value.strip()))
    for name, value in items:
        if name not in JUDGE_NAMES:
            raise WeightsError(f"cannot read judge weight {name!r}; write name=number with a name from {JUDGE_NAMES}")
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise WeightsError(f"weight of judge {name!r} must be a number, got {value!r}") from None
        weights[name] = value
    return validate_weights(weights)


def combine_scores(per_judge: Mapping[str, JudgeResult | None], weights: Mapping[str, Any]) -> CombinedScore:
    """Combine one run's judge results with ``weights`` (validated; see the module docstring)."""
    checked = validate_weights(weights)
    for name, result in per_judge.items():
        if result is not None and result.disqualified:
            return CombinedScore(value=None, disqualified=True, reason=f"{name}: {result.reason}")
    used = [
        name
        for name, result in per_judge.items()
        if result is not None and result.score is not None and checked.get(name, 0.0) > 0.0
    ]
    if not used:
        return CombinedScore(value=None, reason="no judge with a weight above 0 has scored this run yet")
    total = sum(checked[name] for name in used)
    weights_used = {name: checked[name] / total for name in used}
    value = sum(weights_used[name] * per_judge[name].score for name in used)  # type: ignore[union-attr]
    return CombinedScore(value=min(1.0, max(0.0, value)), used=used, weights_used=weights_used)
