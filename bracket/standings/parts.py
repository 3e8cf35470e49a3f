"""The parts of a combined score, each with the raw figure a person can read.

A combined score (``bracket.session.scoring.run_scores.RunScore``) is a weighted mean of normalised
judge scores in [0, 1]. Normalised numbers move when other runs arrive (the loss judge ranks
runs against each other), so next to each part we keep the figure behind it:

=============  ============================================  =====================
judge          raw figures (short name: meaning)              from the judge's details
=============  ============================================  =====================
``loss``       ``val loss``: last validation loss, when the    ``final_validation``,
               score rests on it; ``loss``: final smoothed      ``final_ema``
               training loss
``human``      ``rating``: mean 1–10 rating;                    ``mean_rating``,
               ``strength``: Bradley–Terry pairwise strength    ``bt_strength``
``vlm``        ``vlm``: the VLM's mean criteria score, 0–10     ``criteria_means``
``eval_loss``  ``eval loss``: last evaluation loss             ``loss``
``task``       ``rouge-L``: mean ROUGE-L F of the held-out      ``rouge_l``,
               answers, 0–1; ``match``: normalised matches;     ``normalised``,
               ``json``: share with the reference's keys        ``json_keys``
``llm_judge``  ``llm judge``: the LLM's mean criteria score,    ``criteria_means``,
               0–10; ``judge strength``: its Bradley–Terry    ``bt_strength``
               strength
=============  ============================================  =====================

A part may be **estimated** — the judge has not seen the run and its score was predicted
from the other judges (``bracket.judge.combine``'s estimator), with an ``uncertainty``.
When the scoring layer hands parts (``RunScore.parts``: per judge an object or mapping with
``value``, ``raw``, ``estimated`` and ``uncertainty``), they are used as given; otherwise
every part present is a measured one.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bracket.judge.base import finite_number
from bracket.judge.neighbours import INFORMED

#: the order judges are listed in
JUDGE_ORDER = ("loss", "eval_loss", "human", "vlm", "likeness", "prompt_following", "image_quality", "preference",
               "face_identity", "task", "llm_judge")
#: the raw figure of each image judge, as a person reads it (``bracket.judge.image_judges.SCALES``)
IMAGE_FIGURES = {"likeness": "likeness", "prompt_following": "prompt following", "image_quality": "quality",
                 "face_identity": "face identity"}


@dataclass(frozen=True)
class ScorePart:
    """One judge's share of a run's combined score."""

    judge: str
    #: the normalised score in [0, 1] (lower is better); None when the judge has no data
    value: float | None
    #: the weight this part had in the combined score (0 when it was not used)
    weight: float = 0.0
    #: raw figures behind the value, short name -> number (see the module docstring)
    figures: dict[str, float] = field(default_factory=dict)
    #: True when the judge has not seen the run and ``value`` is a prediction
    estimated: bool = False
    #: the estimate's standard error (None for a measured part)
    uncertainty: float | None = None
    #: the weight the judge gets once it has scored the run (an estimate carries less: its
    #: evidence, ``bracket.judge.combine``); None when not given (then ``weight``)
    full_weight: float | None = None
    #: an estimate's evidence (``bracket.judge.neighbours``: what similar scored runs say of it,
    #: 0–1); 1 for a measured part. Below ``INFORMED`` the estimate is not shown (:func:`informed`)
    evidence: float = 1.0

    @property
    def raw(self) -> float | None:
        """The main raw figure (the first one)."""
        return next(iter(self.figures.values()), None)

    def to_dict(self) -> dict[str, Any]:
        return {"judge": self.judge, "value": self.value, "weight": self.weight, "raw": self.raw,
                "figures": dict(self.figures), "estimated": self.estimated, "uncertainty": self.uncertainty,
                "evidence": self.evidence}


def raw_figures(judge: str, details: Mapping[str, Any] | None) -> dict[str, float]:
    """The raw figures of one judge result's ``details`` (empty when it logged none)."""
    details = details or {}
    found: dict[str, float | None] = {}
    if judge == "loss":
        if details.get("basis") == "validation":  # the figure the score rests on comes first
            found["val loss"] = finite_number(details.get("final_validation"))
        found["loss"] = finite_number(details.get("final_ema"))
    elif judge == "eval_loss":
        found["eval loss"] = finite_number(details.get("loss"))
    elif judge == "human":
        found["rating"] = finite_number(details.get("mean_rating"))
        found["strength"] = finite_number(details.get("bt_strength"))
    elif judge == "vlm":
        means = details.get("criteria_means") or {}
        values = ([v for v in (finite_number(x) for x in means.values()) if v is not None]
                  if isinstance(means, Mapping) else [])
        found["vlm"] = statistics.fmean(values) if values else None
    elif judge in IMAGE_FIGURES:
        found[IMAGE_FIGURES[judge]] = finite_number(details.get("raw"))
    elif judge == "preference":  # its share of the same-prompt comparisons won
        found["preference"] = finite_number(details.get("raw"))
    elif judge == "task":
        found["rouge-L"] = finite_number(details.get("rouge_l"))
        found["match"] = finite_number(details.get("normalised"))
        found["json"] = finite_number(details.get("json_keys"))
    elif judge == "llm_judge":
        means = details.get("criteria_means") or {}
        values = ([v for v in (finite_number(x) for x in means.values()) if v is not None]
                  if isinstance(means, Mapping) else [])
        found["llm judge"] = statistics.fmean(values) if values else None
        found["judge strength"] = finite_number(details.get("bt_strength"))
    return {name: value for name, value in found.items() if value is not None}


def _field(part: Any, name: str, default: Any = None) -> Any:
    if isinstance(part, Mapping):
        return part.get(name, default)
    return getattr(part, name, default)


def score_parts(score: Any) -> list[ScorePart]:
    """The parts of one ``RunScore`` (measured and estimated), in :data:`JUDGE_ORDER`."""
    if score is None:
        return []
    judges: Mapping[str, Any] = getattr(score, "judges", {}) or {}
    details: Mapping[str, Mapping[str, Any]] = getattr(score, "details", {}) or {}
    weights: Mapping[str, float] = getattr(score, "weights_used", {}) or {}
    given = getattr(score, "parts", None) or {}
    if not isinstance(given, Mapping):  # a sequence of parts, each naming its judge
        given = {str(_field(p, "judge", _field(p, "name", ""))): p for p in given}
    names = sorted(set(judges) | set(given), key=lambda n: (JUDGE_ORDER.index(n) if n in JUDGE_ORDER else 99, n))
    parts = []
    for name in names:
        part = given.get(name)
        value = _field(part, "value") if part is not None else judges.get(name)
        detail = details.get(name)
        figures = raw_figures(name, detail) if detail else {}  # no details: no figures (the common estimated part)
        raw = finite_number(_field(part, "raw")) if part is not None else None
        if raw is not None and not figures:
            figures = {name: raw}
        estimated = bool(_field(part, "estimated", False)) if part is not None else False
        if value is None and not figures and not estimated:
            continue
        parts.append(ScorePart(name, finite_number(value), float(weights.get(name, 0.0)), figures, estimated,
                               finite_number(_field(part, "uncertainty")) if part is not None else None,
                               finite_number(_field(part, "full_weight")) if part is not None else None,
                               _evidence(part)))
    return parts


def _evidence(part: Any) -> float:
    value = finite_number(_field(part, "evidence")) if part is not None else None
    return 1.0 if value is None else min(1.0, max(0.0, value))


def informed(part: Any) -> bool:
    """A part a person may read as a figure: measured, or an estimate resting on similar scored
    runs (evidence at least :data:`~bracket.judge.neighbours.INFORMED`); an estimate from runs
    unlike this one is not shown — nothing similar was scored, so its number would say nothing."""
    return not getattr(part, "estimated", False) or float(getattr(part, "evidence", 1.0)) >= INFORMED


def mean_figures(parts: Iterable[ScorePart]) -> dict[str, float]:
    """Each raw figure averaged over measured parts (estimated ones have no raw figure of their own)."""
    values: dict[str, list[float]] = {}
    for part in parts:
        if part.estimated:
            continue
        for name, value in part.figures.items():
            values.setdefault(name, []).append(value)
    return {name: statistics.fmean(v) for name, v in values.items()}


def figures_text(figures: Mapping[str, float]) -> str:
    """``"loss 0.0123 · rating 7.5"`` (the raw figures a person can read)."""
    return " · ".join(f"{name} {value:.4g}" if name != "rating" else f"rating {value:.1f}"
                      for name, value in figures.items())


def as_rating(value: float) -> float:
    """The human judge's normalised part on the 1–10 rating scale a person rates on: 0 is a
    10, 1 a 1 (``bracket.judge.human``): the quality every score is shown as
    (:func:`bracket.standings.quality.quality`), so a normalised ``0.407`` is a 6.3."""
    from bracket.standings.quality import quality

    return quality(value)


#: what an estimate too far from every scored run reads as (:func:`informed`)
NOTHING_SIMILAR = {"human": "not rated, nothing similar rated"}


def estimated_text(judges: Iterable[str], parts: Iterable[ScorePart] = ()) -> str:
    """The judges whose part was predicted, with the prediction where ``parts`` hold it (their
    mean over the estimated parts): the human judge on its rating scale (``human ≈ rating 6.8
    (est.)``, from rated runs of similar configs), any other judge as its normalised part
    (``vlm ≈ 0.412 (est.)``); ``"human estimated"`` without a value; an estimate that rests on
    nothing similar (:func:`informed`) without its number (``not rated, nothing similar rated``);
    "" when none was."""
    values: dict[str, list[float]] = {}
    unlike: set[str] = set()
    for part in parts:
        if part.estimated and part.weight > 0 and part.value is not None:
            if informed(part):
                values.setdefault(part.judge, []).append(part.value)
            else:
                unlike.add(part.judge)
    shown = []
    for name in sorted(set(judges) | set(values) | unlike):
        if name not in values:
            shown.append(NOTHING_SIMILAR.get(name, f"{name}: nothing similar scored") if name in unlike
                         else f"{name} estimated")
            continue
        value = statistics.fmean(values[name])
        if name == "human":
            shown.append(f"human ≈ rating {as_rating(value):.1f} (est.)")
        else:
            shown.append(f"{name} ≈ {value:.3f} (est.)")
    return ", ".join(shown)
