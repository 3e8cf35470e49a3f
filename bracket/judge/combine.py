"""The combined score of a run: a weighted mean of its judges, measured or estimated.

Every judge score is in [0, 1], lower is better (see :mod:`bracket.judge.base`). For one run:

* if any judge **disqualified** the run (NaN loss, divergence, no log), the combination is
  disqualified too, whatever that judge's weight -- a broken run is never "best";
* otherwise every judge with a weight above 0 contributes a :class:`JudgePart`: its own
  score when it has one, else its **estimate** for runs it has not seen (when the caller
  passes one, see :func:`estimate_missing` and :mod:`bracket.judge.neighbours`). An estimate
  carries the judge's weight times its **evidence** (``Estimate.evidence``, in [0, 1]: how much
  the scored runs near this one say about it; ≈0 far from all of them), and never more than
  the weight of the run's measured loss (its largest measured part when the loss is not
  one). Weights are renormalised over the parts and the value is the weighted mean. A judge
  that has seen no run at all (nobody rated anything, no VLM configured) has no estimate and
  drops out -- for every run alike;
* if no judge contributes, the value is None (the run is not ranked yet).

Why estimate instead of dropping a judge per run: with the judge dropped, an unrated run is
scored on loss alone (0.0 for the best loss) while a rated run mixes in its rating, so any
rating short of 10 acts as a penalty and the search flees what people rated. With an
estimate every run is scored on the same judges with the same weights, so a rating above the
estimate lifts a run and one below it lowers it (docs/SCORING.md, "Runs a judge has not seen").

:data:`DEFAULT_WEIGHTS` is the single source of the default weights for the UI and the CLI;
:func:`parse_weights` is their one parser (text or form values); :func:`validate_weights`
rejects negative, non-numeric and all-zero weights with a :class:`WeightsError` that says what
to do.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from bracket.errors import BracketError
from bracket.judge.base import JudgeResult, finite_number
from bracket.judge.image_judges import IMAGE_JUDGES

#: loss/eval_loss: bracket.judge.loss / eval_loss; human: ratings and pairwise choices; vlm: the
#: vision model on images and video frames; task: LLM answers vs held-out references
#: (bracket.judge.task); llm_judge: a language model grading and comparing those answers;
#: likeness, prompt_following, image_quality: local image models on every sample
#: (bracket.judge.image_judges; they score only where their models are configured); preference:
#: a preference model compared within one prompt (bracket.judge.preference; off by default);
#: face_identity: faces of the samples against the references' (bracket.judge.faces; off by default)
JUDGE_NAMES = ("loss", "human", "vlm", "eval_loss", "task", "llm_judge", "likeness", "prompt_following",
               "image_quality", "preference", "face_identity")
DEFAULT_WEIGHTS: dict[str, float] = {"loss": 1.0, "human": 2.0, "vlm": 1.0, "eval_loss": 1.0, "task": 1.0,
                                     "llm_judge": 1.0, "likeness": 1.0, "prompt_following": 1.0,
                                     "image_quality": 0.5, "preference": 0.0, "face_identity": 0.0}


class WeightsError(BracketError):
    """Judge weights that cannot be used (negative, not a number, or all zero)."""


#: The prior behind an estimate: PRIOR_COUNT pseudo-runs scored PRIOR_MEAN (a rating of 5.5,
#: "no opinion") with spread PRIOR_SD. With few scored runs the estimate stays near the middle,
#: so one 10 lifts its run above the unrated ones instead of dragging them all to 0.
PRIOR_COUNT = 2.0
PRIOR_MEAN = 0.5
PRIOR_SD = 0.3


@dataclass(frozen=True)
class Estimate:
    """A judge's guess for the runs it has not scored, from the ``count`` runs it has."""

    value: float
    uncertainty: float
    count: int
    #: summed similarity weight of the scored runs near this run (``bracket.judge.neighbours``);
    #: 0 for the shared estimate every unscored run gets alike
    near: float = 0.0
    #: the share of the judge's weight the estimate carries, in [0, 1]: ``near / (near + 1)``
    #: from :mod:`bracket.judge.neighbours`; 1 for an estimate given as certain (the shared one)
    evidence: float = 1.0


@dataclass(frozen=True)
class JudgePart:
    """One judge's part of a run's combined score."""

    #: normalised score in [0, 1], lower is better (measured or estimated)
    value: float
    #: the figure a person reads (final smoothed loss, mean rating, ...); None when estimated
    raw: float | None
    estimated: bool
    #: standard deviation of ``value``: 0 when measured, the estimate's spread when estimated
    uncertainty: float
    #: the weight this part got after renormalisation
    weight: float
    note: str = ""
    #: the weight the judge gets once it has scored the run (its full weight, renormalised over
    #: the parts); the same as ``weight`` for a measured part. What a rating may still move the
    #: run by is this times ``uncertainty``
    full_weight: float | None = None
    #: an estimate's evidence (``Estimate.evidence``: how much the similar scored runs say about
    #: this run, in [0, 1]); 1 for a measured part
    evidence: float = 1.0


@dataclass(frozen=True)
class CombinedScore:
    """One run's combined score and what it is made of."""

    value: float | None
    #: judges that contributed (measured or estimated)
    used: list[str] = field(default_factory=list)
    weights_used: dict[str, float] = field(default_factory=dict)
    disqualified: bool = False
    reason: str = ""
    parts: dict[str, JudgePart] = field(default_factory=dict)
    #: judges whose part is an estimate
    estimated: list[str] = field(default_factory=list)
    #: how far the estimated parts may still move ``value`` (a standard deviation): each
    #: estimate's spread times the judge's full weight share; 0 when all were measured
    uncertainty: float = 0.0


def estimate_missing(scores: Iterable[float], *, prior_count: float = PRIOR_COUNT,
                     prior_mean: float = PRIOR_MEAN, prior_sd: float = PRIOR_SD) -> Estimate | None:
    """What a judge most likely says of a run it has not scored, given its ``scores`` of others.

    The mean of the scores, shrunk toward ``prior_mean`` as if ``prior_count`` more runs had
    scored that: ``(sum + k * prior_mean) / (n + k)``. Its uncertainty is the predictive
    standard deviation of one more run, ``sqrt(var * (1 + 1 / (n + k)))``, with the variance
    pooled the same way (``prior_sd`` for the pseudo-runs). None when there is no score at all:
    then the judge drops out for every run.

    Every unscored run gets the same estimate, so a new score for run A moves all unscored
    runs together and never reorders two of them; a score better than the estimate lifts A
    above where it stood among them, a worse one lowers it.
    """
    values = [float(v) for v in scores]
    if not values:
        return None
    n = len(values)
    mean = (sum(values) + prior_count * prior_mean) / (n + prior_count)
    spread = (sum((v - mean) ** 2 for v in values) + prior_count * prior_sd ** 2) / (n + prior_count)
    return Estimate(value=min(1.0, max(0.0, mean)), uncertainty=math.sqrt(spread * (1.0 + 1.0 / (n + prior_count))),
                    count=n)


def measured_score(run: Any, leave_out: str | None = None) -> float | None:
    """A run's combined score over its measured parts alone, estimated parts (and the judge
    ``leave_out``) left out, each measured part at the weight its judge gets once it has seen the
    run (``full_weight``); the score itself when nothing was left out; None for an unscored run
    or one with no measured part. ``run``: anything with ``score`` and ``parts`` (objects or mappings with
    ``judge``, ``value``, ``weight``, ``full_weight``, ``estimated``), as the standings' runs."""
    score = getattr(run, "score", None)
    if score is None:
        return None
    parts = [_fields(p) for p in getattr(run, "parts", ()) or ()]
    parts = [p for p in parts if p["value"] is not None and (p["weight"] or 0.0) > 0]
    if not any(p["estimated"] or p["judge"] == leave_out for p in parts):
        return float(score)
    measured = [(p["full_weight"] if p["full_weight"] is not None else p["weight"], float(p["value"]))
                for p in parts if not p["estimated"] and p["judge"] != leave_out]
    total = sum(w for w, _ in measured)
    return sum(w * v for w, v in measured) / total if total > 0 else None


def _fields(part: Any) -> dict[str, Any]:
    """A score part's fields, given as an object or a mapping."""
    get = part.get if isinstance(part, Mapping) else (lambda name: getattr(part, name, None))
    return {name: get(name) for name in ("judge", "value", "weight", "full_weight", "estimated")}


def validate_weights(weights: Mapping[str, Any]) -> dict[str, float]:
    """The weights as floats; raises WeightsError for negative, non-numeric or all-zero weights."""
    checked: dict[str, float] = {}
    for name, value in weights.items():
        if name not in JUDGE_NAMES:
            raise WeightsError(f"unknown judge {name!r} in the weights; the judges are {', '.join(JUDGE_NAMES)}")
        if finite_number(value) is None:
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


@functools.lru_cache(maxsize=16)
def _validated(items: tuple[tuple[str, Any], ...]) -> dict[str, float]:
    """:func:`validate_weights` of ``dict(items)``, kept (read only: shared by its callers)."""
    return validate_weights(dict(items))


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
                raise WeightsError(f"cannot read judge weight {item!r}; "
                                   f"write name=number with a name from {JUDGE_NAMES}")
            items.append((name.strip(), value.strip()))
    for name, value in items:
        if name not in JUDGE_NAMES:
            raise WeightsError(f"cannot read judge weight {name!r}; write name=number with a name from {JUDGE_NAMES}")
        if isinstance(value, str):
            try:
                weights[name] = float(value)
            except ValueError:
                raise WeightsError(f"weight of judge {name!r} must be a number, got {value!r}") from None
        else:
            weights[name] = value
    return validate_weights(weights)


def check_weights_score(weights: Mapping[str, float], *, sample_kind: str, judge_server: bool,
                        image_judges: bool = False, preference: bool = False) -> None:
    """Raise WeightsError when every judge that can score this session weighs 0.

    ``loss`` and ``human`` score any session; ``vlm`` needs a judge server and samples that are
    images or video; ``eval_loss`` and ``task`` score LLM answers (``sample_kind`` "text"), and
    ``llm_judge`` needs the server as well; the image judges need their models (``image_judges``)
    and samples that are images or video, ``preference`` its own model as well (``preference``).
    Without one of them above 0 no run gets a score and
    the search ends with no winner, so such weights are refused before anything starts.
    """
    weights = {**DEFAULT_WEIGHTS, **weights}  # a judge the session does not name keeps its default
    text = sample_kind == "text"
    able = {"loss": True, "human": True, "vlm": judge_server and not text, "eval_loss": text, "task": text,
            "llm_judge": judge_server and text, **{name: image_judges and not text for name in IMAGE_JUDGES},
            "preference": image_judges and preference and not text}
    if any(able[name] and weights.get(name, 0.0) > 0 for name in able):
        return
    zero = ", ".join(f"{name}=0" for name in able if able[name])
    raise WeightsError(f"every judge that can score this session weighs 0 ({zero}), so no run would get a "
                       "score; give loss or human a weight above 0, e.g. loss=1,human=2")


def _part_weights(chosen: Mapping[str, tuple[Any, ...]], checked: Mapping[str, float],
                  evidence: Mapping[str, float]) -> dict[str, float]:
    """Each part's weight before renormalisation: a measured part its judge's weight; an
    estimated one its judge's weight times its evidence, capped at the measured loss's weight
    (the largest measured weight when the loss was not measured). With nothing measured the
    estimates are all there is: they keep their judges' weights."""
    measured = {name: checked[name] for name, item in chosen.items() if not item[2]}
    if not measured:
        return {name: checked[name] for name in chosen}
    cap = measured.get("loss", max(measured.values()))
    return {name: (checked[name] if name in measured else min(cap, checked[name] * evidence.get(name, 1.0)))
            for name in chosen}


def combine_scores(per_judge: Mapping[str, JudgeResult | None], weights: Mapping[str, Any], *,
                   estimates: Mapping[str, Estimate | None] | None = None,
                   raws: Mapping[str, float | None] | None = None) -> CombinedScore:
    """Combine one run's judge results with ``weights`` (validated; see the module docstring).

    ``estimates`` holds, per judge, the estimate used when that judge has no score for this
    run; ``raws`` the raw figure of each measured part (shown beside the normalised value).
    """
    items = tuple(weights.items())  # the same weights for every run of a session: validated once
    checked = (_validated(items) if all(type(v) is float or type(v) is int for _, v in items)
               else validate_weights(weights))  # (True == 1 as a key: anything else is checked as given)
    estimates = estimates or {}
    raws = raws or {}
    for name, result in per_judge.items():
        if result is not None and result.disqualified:
            return CombinedScore(value=None, disqualified=True, reason=f"{name}: {result.reason}")
    chosen: dict[str, tuple[float, float | None, bool, float, str]] = {}
    evidence: dict[str, float] = {}
    for name in list(per_judge) + [n for n in estimates if n not in per_judge]:
        if checked.get(name, 0.0) <= 0.0:
            continue
        result = per_judge.get(name)
        estimate = estimates.get(name)
        if result is not None and result.score is not None:
            chosen[name] = (result.score, raws.get(name), False, 0.0, "")
        elif estimate is not None:
            evidence[name] = min(1.0, max(0.0, float(estimate.evidence)))
            near = (f", from similar configs (evidence {evidence[name]:.2f})" if estimate.near >= 0.05
                    else ", nothing similar scored (little weight)" if evidence[name] < 1.0 else "")
            chosen[name] = (estimate.value, None, True, estimate.uncertainty,
                            f"estimated from {estimate.count} run{'s' * (estimate.count != 1)} it scored{near}")
    if not chosen:
        return CombinedScore(value=None, reason="no judge with a weight above 0 has scored this run yet")
    raw_weights = _part_weights(chosen, checked, evidence)
    total = sum(raw_weights.values())
    weights_used = {name: raw_weights[name] / total for name in chosen}
    full_total = sum(checked[name] for name in chosen)
    parts = {name: JudgePart(value=v, raw=raw, estimated=est, uncertainty=u, weight=weights_used[name], note=note,
                             full_weight=checked[name] / full_total, evidence=evidence.get(name, 1.0))
             for name, (v, raw, est, u, note) in chosen.items()}
    value = sum(p.weight * p.value for p in parts.values())
    uncertainty = math.sqrt(sum(((p.full_weight or 0.0) * p.uncertainty) ** 2 for p in parts.values()))
    return CombinedScore(value=min(1.0, max(0.0, value)), used=list(chosen), weights_used=weights_used,
                         parts=parts, estimated=[n for n, p in parts.items() if p.estimated], uncertainty=uncertainty)
