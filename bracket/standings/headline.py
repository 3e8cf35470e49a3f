"""The headline: what a config (or a run) achieved, in words whose meaning does not move.

A combined score is relative — the loss judge ranks runs against each other — so it changes
when other runs arrive and says nothing on its own. The headline says each part on a scale
of its own that no other run can move (docs/SCORING.md, "The headline"):

* **loss** against the stage's **baseline** config: ``12 % lower validation loss than your
  baseline, ± 3 %``, the ± by one rule (``bracket.standings.interval``: Student's t over the
  stage's pooled seed spread, never narrower than the loss judge's noise floor; where no config
  ran two seeds, the floor's alone, said ``± 2.8 % (noise floor: one seed each)``). A difference
  inside it reads as a tie: ``validation loss level with your baseline (± 3 %)``. The baseline
  itself reads ``your baseline (validation loss 0.1146)``; a stage without one shows the loss itself.
* **the person's verdict** on their own 1–10 scale: ``rated 8/10 by you`` (the mean rating;
  blind choices, when they move it, follow: ``your blind choices: 8.6/10``), or
  ``7.1/10 from your blind choices`` for a config only compared; an unrated config reads
  ``not rated (est. 6.8/10)`` when the score carries an estimate of its rating that rests on
  similar rated configs (``parts.informed``), else plain ``not rated``: one rating far away
  says nothing about it.
* **every other judge** on its own documented scale: its raw figure (``vlm 7.2/10``,
  ``rouge-L 0.41``), or for a judge without one its goodness out of 10, ``10 × (1 − score)``;
  an estimated part ``vlm ≈ 6.1/10 (est.)`` (only where it rests on similar scored runs).

:func:`headline` is the one function that writes it; the leaderboards, ``status`` (text and
``--json``), the report, the verdict and the export header all show its text.
:func:`pair_reading`, the one tie rule, is the verdict's too.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bracket.standings.interval import (
    FLOOR_LABEL,
    FLOOR_ONLY,
    NOISE_FLOOR,
    PairReading,
    SeedNoise,
    margin,
    pooled_spread,
)
from bracket.standings.parts import informed

#: the loss figures a headline compares, best first, with the words it says them in
LOSS_FIGURES = (("val loss", "validation loss"), ("eval loss", "eval loss"), ("loss", "training loss"))
#: the judges the loss figures come from (their parts are said as the loss comparison)
LOSS_JUDGES = ("loss", "eval_loss")
#: the suffix of a raw figure on its own scale (a figure not named here is shown as it is)
FIGURE_SCALE = {"vlm": "/10", "llm judge": "/10"}
#: figures that are not a judge's main reading (left out of the headline, kept in the raw figures)
SECONDARY = ("strength", "judge strength", "match", "json")


@dataclass(frozen=True)
class LossChange:
    """The loss of a config against the stage's baseline."""

    #: the figure compared ("val loss", "eval loss", "loss") and its words
    figure: str
    words: str
    #: the config's mean loss and the baseline's (None without a baseline)
    value: float
    baseline: float | None = None
    #: (value − baseline) / baseline, and the 95 % half-width of it from seed noise
    change: float | None = None
    margin: float | None = None
    #: the half-width rests on measured seed spread above the floor (False: the noise floor)
    measured_noise: bool = False
    #: this is the baseline itself
    is_baseline: bool = False
    #: the degrees of freedom of the stage's pooled seed spread (0: no config ran two seeds)
    freedom: int = 0

    @property
    def tie(self) -> bool:
        """The difference lies inside seed noise."""
        return self.change is not None and self.margin is not None and abs(self.change) <= self.margin

    @property
    def floor_only(self) -> bool:
        """The ± is the noise floor alone: no seed spread was measured in the stage."""
        return self.margin is not None and self.freedom == 0

    @property
    def basis(self) -> str:
        """What the ± rests on: ``seeds`` (their measured spread), ``noise floor`` (the measured
        spread lies below it) or :data:`FLOOR_LABEL` (nothing measured); "" without a ±."""
        if self.margin is None:
            return ""
        return "seeds" if self.measured_noise else FLOOR_LABEL if self.floor_only else "noise floor"

    @property
    def noise_words(self) -> str:
        """What a difference inside the ± lies inside: seed noise, or the floor where nothing was measured."""
        return "the noise floor" if self.floor_only else "seed noise"

    def margin_text(self, label: str = " ({})") -> str:
        """``± 3 %``, or ``± 2.8 % (noise floor: one seed each)`` where the ± is the floor alone (its
        :data:`FLOOR_LABEL` put into ``label``)."""
        if self.margin is None:
            return ""
        return f"± {percent_text(100 * self.margin)} %" + (label.format(FLOOR_LABEL) if self.floor_only else "")

    def to_dict(self) -> dict[str, Any]:
        return {"figure": self.figure, "value": self.value, "baseline": self.baseline, "change": self.change,
                "margin": self.margin, "measured_noise": self.measured_noise, "freedom": self.freedom,
                "basis": self.basis, "tie": self.tie, "is_baseline": self.is_baseline}


@dataclass(frozen=True)
class Headline:
    """One config's (or run's) headline and the parts it is written from."""

    text: str
    loss: LossChange | None = None
    #: the person's verdict on the 1–10 scale (mean rating, or what blind choices say); None: none
    rating: float | None = None
    #: the rating is an estimate (nobody rated this config)
    rating_estimated: bool = False
    #: other judges: name -> (reading on its own scale, estimated)
    judges: dict[str, tuple[str, bool]] = field(default_factory=dict)
    #: the person's mean rating on the 1–10 scale, blind choices left out; None: nobody rated it
    rated: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "loss": self.loss.to_dict() if self.loss else None, "rating": self.rating,
                "rating_estimated": self.rating_estimated,
                "judges": {name: {"text": text, "estimated": est} for name, (text, est) in self.judges.items()}}


def percent_text(value: float) -> str:
    """Two significant places for a percentage: ``12``, ``3.4``, ``0.8`` (the headline's and the
    verdict's one way of writing a percent)."""
    return f"{value:.0f}" if abs(value) >= 9.5 else f"{value:.1f}"


def _figures(runs: Iterable[Any], judge: str | None = None) -> dict[str, list[float]]:
    """Measured raw figures of ``runs`` (each a run with ``parts``), per figure name."""
    found: dict[str, list[float]] = {}
    for run in runs:
        for part in getattr(run, "parts", ()) or ():
            if part.estimated or (judge is not None and part.judge != judge):
                continue
            for name, value in part.figures.items():
                found.setdefault(name, []).append(float(value))
    return found


def loss_values(runs: Iterable[Any]) -> dict[str, list[float]]:
    """Per loss figure, the measured value of each of ``runs`` (``{"val loss": [0.11, 0.12]}``)."""
    found: dict[str, list[float]] = {}
    for judge in LOSS_JUDGES:
        for name, values in _figures(runs, judge).items():
            if name in NOISE_FLOOR:
                found.setdefault(name, []).extend(values)
    return found


def seed_noise(groups: Iterable[Sequence[Any]]) -> dict[str, SeedNoise]:
    """Per loss figure, the relative spread of one run's loss over seeds, pooled over the
    ``groups`` (each a config's runs) that have two values or more, with its degrees of freedom
    (``interval.pooled_spread``); missing where none has."""
    per_figure: dict[str, list[list[float]]] = {}
    for runs in groups:
        for name, values in loss_values(runs).items():
            per_figure.setdefault(name, []).append(values)
    return {name: found for name, values in per_figure.items() if (found := pooled_spread(values)) is not None}


def _loss_change(runs: Sequence[Any], baseline: Sequence[Any] | None, noise: Mapping[str, SeedNoise],
                 is_baseline: bool) -> LossChange | None:
    mine = loss_values(runs)
    theirs = loss_values(baseline or ()) if baseline else {}
    for figure, words in LOSS_FIGURES:
        if figure not in mine:
            continue
        value = statistics.fmean(mine[figure])
        if is_baseline or not baseline:
            return LossChange(figure, words, value, is_baseline=is_baseline)
        if figure not in theirs or statistics.fmean(theirs[figure]) <= 0:
            continue
        base = statistics.fmean(theirs[figure])
        pooled = noise.get(figure)
        half, measured = margin(figure, pooled, len(mine[figure]), len(theirs[figure]))
        return LossChange(figure, words, value, base, (value - base) / base, half, measured,
                          freedom=pooled.freedom if pooled is not None else 0)
    # no baseline figure to compare with (e.g. the baseline stands paused at a lower rung): its own loss
    plain = next(((figure, words) for figure, words in LOSS_FIGURES if figure in mine), None)
    return LossChange(plain[0], plain[1], statistics.fmean(mine[plain[0]])) if plain else None


def compare_loss(runs: Sequence[Any], reference: Sequence[Any], noise: Mapping[str, SeedNoise]
                 ) -> LossChange | None:
    """The loss of ``runs`` (one config's) against ``reference`` (another config's runs of the same
    stage), by the headline's rule: the same figure, the relative change and its seed-noise
    half-width, a tie inside it; None when the two share no loss figure."""
    found = _loss_change(runs, reference, noise, False)
    return found if found is not None and found.change is not None else None


def pair_reading(runs_a: Sequence[Any], runs_b: Sequence[Any], noise: Mapping[str, SeedNoise], *,
                 a_is_baseline: bool = False) -> PairReading | None:
    """Whether config ``a`` (ranked first) and ``b`` are level, by the headline's one rule
    (:func:`compare_loss`), as a :class:`PairReading`; None when they share no loss figure. The
    change is taken against ``b``, or against ``a`` when ``a`` is the baseline, so a pair with the
    baseline reads as its headline does."""
    mine, other = (runs_b, runs_a) if a_is_baseline else (runs_a, runs_b)
    found = compare_loss(mine, other, noise)
    if found is None or found.change is None or found.margin is None:
        return None
    lower = found.change > 0 if a_is_baseline else found.change < 0
    # the ±'s number as the headline writes it; where it is the floor alone the verdict says so once (``caveat``)
    apart = f"{percent_text(100 * abs(found.change))} % apart, {found.margin_text(label='')}"
    return PairReading(found.tie, lower, found.words, apart, found.noise_words,
                       FLOOR_ONLY if found.floor_only else "")


def _loss_text(loss: LossChange) -> str:
    if loss.is_baseline:
        return f"your baseline ({loss.words} {loss.value:.4g})"
    if loss.change is None or loss.margin is None:
        return f"{loss.words} {loss.value:.4g}"
    if loss.tie:
        return f"{loss.words} level with your baseline ({loss.margin_text(label=', {}')})"
    word = "lower" if loss.change < 0 else "higher"
    return f"{percent_text(100 * abs(loss.change))} % {word} {loss.words} than your baseline, {loss.margin_text()}"


def rating_text(value: float) -> str:
    return f"{value:.0f}/10" if abs(value - round(value)) < 0.05 else f"{value:.1f}/10"


def _goodness(value: float) -> float:
    """A normalised part (lower better, [0, 1]) as goodness out of 10."""
    return 10.0 * (1.0 - value)


def _mean_part(runs: Iterable[Any], judge: str, estimated: bool) -> float | None:
    """The mean of ``judge``'s measured (or estimated) parts; an estimate only where it rests on
    similar scored runs (``parts.informed``): one far away says nothing about this config."""
    values = [float(p.value) for r in runs for p in getattr(r, "parts", ()) or ()
              if p.judge == judge and bool(p.estimated) == estimated and p.value is not None and p.weight > 0
              and (not estimated or informed(p))]
    return statistics.fmean(values) if values else None


def _human(runs: Sequence[Any]) -> tuple[str, float | None, bool, float | None]:
    verdicts = [float(r.verdict) for r in runs if getattr(r, "verdict", None) is not None]
    # the person's own verdict (bracket.standings.evidence.own_verdict), else the measured human part
    measured = statistics.fmean(verdicts) if verdicts else (
        None if any(hasattr(r, "verdict") for r in runs) else _mean_part(runs, "human", False))
    if measured is not None:
        verdict = 10.0 - 9.0 * measured  # the human part on the rating scale (bracket.judge.human)
        ratings = _figures(runs, "human").get("rating")
        if ratings:
            rating = statistics.fmean(ratings)
            text = f"rated {rating_text(rating)} by you"
            if abs(verdict - rating) >= 0.05:
                text += f" (your blind choices: {rating_text(verdict)})"
            return text, verdict, False, rating
        return f"{rating_text(verdict)} from your blind choices", verdict, False, None
    estimate = _mean_part(runs, "human", True)
    if estimate is not None:
        value = 10.0 - 9.0 * estimate
        return f"not rated (est. {rating_text(value)})", value, True, None
    if any(p.judge == "human" and p.estimated and p.weight > 0 for r in runs for p in getattr(r, "parts", ()) or ()):
        return "not rated", None, False, None  # an estimate from nothing similar: no number (parts.informed)
    return "", None, False, None


def _judge_text(runs: Sequence[Any], judge: str) -> tuple[str, bool] | None:
    figures = {name: values for name, values in _figures(runs, judge).items() if name not in SECONDARY}
    if figures:
        return " · ".join(f"{name} {statistics.fmean(values):.3g}{FIGURE_SCALE.get(name, '')}"
                          for name, values in figures.items()), False
    measured = _mean_part(runs, judge, False)
    if measured is not None:
        return f"{judge} {_goodness(measured):.1f}/10", False
    estimate = _mean_part(runs, judge, True)
    if estimate is not None:
        return f"{judge} ≈ {_goodness(estimate):.1f}/10 (est.)", True
    return None


def headline(runs: Sequence[Any], baseline: Sequence[Any] | None = None, *,
             noise: Mapping[str, SeedNoise] | None = None, is_baseline: bool = False) -> Headline:
    """The headline of ``runs`` (one config's runs, or one run) against the ``baseline``
    config's runs of the same stage (None: the stage has none), with the seed ``noise`` of
    :func:`seed_noise` (missing figures use :data:`NOISE_FLOOR`). Runs carry ``parts``
    (``bracket.standings.parts.ScorePart``)."""
    loss = _loss_change(runs, baseline, noise or {}, is_baseline)
    human, rating, rating_estimated, rated = _human(runs)
    judges: dict[str, tuple[str, bool]] = {}
    names = sorted({p.judge for r in runs for p in getattr(r, "parts", ()) or ()
                    if p.judge not in LOSS_JUDGES and p.judge != "human"})
    for name in names:
        found = _judge_text(runs, name)
        if found is not None:
            judges[name] = found
    pieces = [_loss_text(loss)] if loss else []
    pieces += [human] if human else []
    pieces += [text for text, _ in judges.values()]
    return Headline("; ".join(pieces) or "not scored yet", loss, rating, rating_estimated, judges, rated)


def stage_headlines(by_config: Mapping[int, Sequence[Any]], baseline_id: int | None) -> dict[int, Headline]:
    """Each config's headline in a stage (``by_config``: config id -> its runs) against the
    config ``baseline_id``, with the stage's seed noise; each run gets its own (``run.headline``)."""
    baseline = by_config[baseline_id] if baseline_id is not None else None
    noise = seed_noise(by_config.values())
    lines: dict[int, Headline] = {}
    for cid, members in by_config.items():
        lines[cid] = headline(members, baseline, noise=noise, is_baseline=cid == baseline_id)
        for run in members:
            run.headline = headline([run], baseline, noise=noise, is_baseline=cid == baseline_id)
    return lines
