"""Scoring a session's runs: the judges run on finished runs, and what they read back.

``run_scores`` (every run's score, derived from the store as it is now), ``sampler_values`` (what
the sampler sees once a person judged runs: their verdict, and its prediction), ``scoreboard``
(:class:`Scoreboard`), ``summaries`` (:class:`KeptSummaries`), ``best_step``, ``text_judges``,
``vlm`` and ``image_scorer`` (the judges that need a server, a worker process or a thread;
``image_config``: whether the image judges run and their models check),
``image_judges`` (the image judges' stored figures read back), ``rung_verdicts`` (their verdicts at
a rung of a halving search, kept per step and waited for), ``ratings`` (people's ratings and
pairwise choices recorded), ``tfevents`` and ``samples`` (a run's loss series and sample files).
"""

from __future__ import annotations

from bracket.lazy_exports import lazy_exports

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
    "ImageScorer": "image_scorer",
    "session_image_scorer": "image_scorer",
    "image_parts": "image_judges",
}
__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
