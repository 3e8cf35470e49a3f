"""Skip a queued warm-start config that a divergence has already answered.

The warm start is enqueued before anything is known about the data. When a config diverged,
its optimizer family took too large a step for this data at that batch size: a queued config
of the same family and batch at the same or a larger effective step will diverge too. So
before the controller hands out a waiting ``curated`` or ``past`` config it asks
:func:`skip_reason`: did a config in the history diverge with

* the same optimizer family and step knob (:func:`bracket.search.lr_bracket.step_of`),
* the same batch size, and
* an effective step no higher than the queued one's, within
  :data:`bracket.search.lr_bracket.SAME_RATE_DECADES`?

If so the config leaves the queue untrained: its Optuna trial is told ``PRUNED`` with the
reason in ``bracket_note``, the session notes it, and it costs nothing of the budget. The
baseline, bracket configs and sampled configs are never skipped. The rule reads only the
history (no state): under the session's row lock Optuna pops a waiting trial once, so several
workers agree. Measured side by side with ``bracket@no-skip`` by ``python -m bench presets``
(docs/BENCHMARKS.md).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bracket.search.lr_bracket import SAME_RATE_DECADES, step_of
from bracket.search.space import SearchSpace
from bracket.search.types import PAST_KIND, ScoredConfig

__all__ = ["SKIPPABLE_KINDS", "skip_note", "skip_reason", "skipped_kinds"]

#: the queued kinds the rule may skip
SKIPPABLE_KINDS = ("curated", PAST_KIND)
#: a session note about a skipped config: ``curated adamw-fast skipped: adamw diverged at …``
_NOTE = re.compile(r"^(" + "|".join(SKIPPABLE_KINDS) + r") (\S+) skipped: ")


def skip_note(kind: str, name: str, reason: str) -> str:
    """The session note for a skipped config (``reason`` from :func:`skip_reason`)."""
    return f"{kind} {name} {reason}"


def skipped_kinds(notes: Iterable[str]) -> Counter[str]:
    """How many configs of each kind the session's ``notes`` say were skipped (the plan
    counts them out of their phase, ``bracket.session.loop.plan.plan_progress``)."""
    return Counter(match.group(1) for note in notes if (match := _NOTE.match(str(note))))


def skip_reason(params: Mapping[str, Any], history: Sequence[ScoredConfig], space: SearchSpace) -> str | None:
    """Why the queued config ``params`` should not be trained, or None when it should.

    ``"skipped: adamw diverged at learning_rate 0.0001 (curated-2)"``: a config in
    ``history`` of the same optimizer family, step knob and batch diverged at an effective
    step no higher than ``params``' (see the module docstring). ``params`` and the history's
    params are searched params (``SearchSpace.searched_params``)."""
    own = step_of(params, space)
    if own is None:
        return None
    family, knob, step, batch = own
    for item in history:
        if not item.diverged:
            continue
        other = step_of(item.params, space)
        if other is None or other[:2] != (family, knob) or other[3] != batch:
            continue
        if other[2] <= step + SAME_RATE_DECADES:
            what = f" ({item.name})" if item.name else f" (a {item.kind} config)"
            return f"skipped: {family or 'its optimizer'} diverged at {knob} {item.params[knob]:g}{what}"
    return None
