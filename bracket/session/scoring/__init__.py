"""Scoring a session's runs: the judges run on finished runs, and what they read back.

``run_scores`` (every run's score, derived from the store as it is now), ``scoreboard``
(:class:`Scoreboard`), ``summaries`` (:class:`KeptSummaries`), ``best_step``, ``text_judges``
and ``vlm`` (the judges that need a server or a thread), ``ratings`` (people's ratings and
pairwise choices recorded), ``tfevents`` and ``samples`` (a run's loss series and sample files).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: public name -> the module (of this package) that defines it
_WHERE = {
    "RunScore": "run_scores",
    "score_runs": "run_scores",
    "effective_weights": "run_scores",
    "Scoreboard": "scoreboard",
    "KeptSummaries": "summaries",
    "StepCurve": "best_step",
    "step_curves": "best_step",
    "checkpoint_at": "best_step",
    "RatingError": "ratings",
    "record_rating": "ratings",
    "record_comparison": "ratings",
    "ScalarReader": "tfevents",
    "read_scalars": "tfevents",
    "SampleFile": "samples",
    "collect_samples": "samples",
    "TextJudges": "text_judges",
    "VlmScorer": "vlm",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    """Import the module that holds ``name`` on first use, so importing the package stays light."""
    if name in _WHERE:
        return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
