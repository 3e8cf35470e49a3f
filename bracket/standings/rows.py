"""The rows of a leaderboard: one :class:`RunStanding` per run, one :class:`ConfigRow` per config
(the mean over its seeds, its interval, its best step, its headline and its place on the
rungs). Plain data that ``bracket.standings.board`` fills and everything that shows a board reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bracket.standings.headline import Headline
from bracket.standings.parts import ScorePart, estimated_text, figures_text
from bracket.standings.run_reading import run_reading


@dataclass
class RunStanding:
    """One training run as the standings see it."""

    run_id: int
    config_id: int
    stage: str
    seed: int | None
    steps: int | None
    status: str
    score: float | None
    disqualified: bool
    parts: list[ScorePart] = field(default_factory=list)
    ratings: int = 0
    comparisons: int = 0
    #: the loss the loss judge scored this run on: "validation" or "training" ("" unscored)
    loss_basis: str = ""
    #: the steps it has trained (``steps`` is its length): a paused run's pause step; None while it trains
    trained_steps: int | None = None
    #: what it achieved in words that do not move (``bracket.standings.headline``)
    headline: Headline | None = None
    #: the person's own verdict on it (``evidence.own_verdict``, lower better); None when not judged
    verdict: float | None = None
    #: its mean rating alone on the same scale (``evidence.own_rating``); None when nobody rated it
    rating: float | None = None

    @property
    def rated(self) -> bool:
        return self.ratings > 0

    @property
    def judges(self) -> list[str]:
        """Judges that scored this run themselves (used, not estimated)."""
        return [p.judge for p in self.parts if p.weight > 0 and not p.estimated]

    @property
    def estimated(self) -> list[str]:
        return [p.judge for p in self.parts if p.weight > 0 and p.estimated]

    @property
    def reading(self) -> str:
        """Its headline as one seed's reading, without its config's interval (``run_reading``)."""
        return run_reading(self.headline)

    @property
    def raw_text(self) -> str:
        """Its measured raw figures and its estimated parts (``loss 0.1534 · rating 9.0; human ≈
        rating 6.8 (est.)``): one run's side of :attr:`ConfigRow.raw_text`."""
        measured = figures_text({k: v for p in self.parts if not p.estimated for k, v in p.figures.items()})
        return "; ".join(t for t in (measured, estimated_text(self.estimated, self.parts)) if t)

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "config_id": self.config_id, "stage": self.stage, "seed": self.seed,
                "steps": self.steps, "trained_steps": self.trained_steps, "paused": self.status == "paused",
                "status": self.status, "score": self.score, "disqualified": self.disqualified,
                "rated": self.rated, "ratings": self.ratings, "comparisons": self.comparisons,
                "judges": self.judges, "estimated": self.estimated, "parts": [p.to_dict() for p in self.parts],
                "headline": self.reading}


@dataclass
class ConfigRow:
    """One config on its stage's leaderboard."""

    rank: int | None
    config_id: int
    trial_number: int | None
    name: str
    kind: str
    stage: str
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    seeds: int
    disqualified: int
    params: dict[str, Any]
    runs: list[RunStanding]
    #: raw figures averaged over the config's measured runs (see ``parts``)
    figures: dict[str, float] = field(default_factory=dict)
    #: judges whose part is estimated for at least one of its runs
    estimated: list[str] = field(default_factory=list)
    #: the config's best step and what it rests on (``bracket.session.scoring.best_step``)
    best_step: int | None = None
    best_step_basis: str = ""
    #: per-step scores (step -> score, lower is better) behind the best step
    step_scores: dict[int, float] = field(default_factory=dict)
    #: the loss that scores (validation, else training) per step, the mean over its seeds: raw
    #: values, so two configs' curves compare (``step_scores`` are normalised per config)
    step_loss: dict[int, float] = field(default_factory=dict)
    #: its runs are full-length (False: it stands at a lower rung of a halving search)
    full_length: bool = True
    #: a halving search's config: its place on the rungs (``rungs.rung_place``); None without rungs
    place: dict[str, Any] | None = None
    #: what it achieved in words that do not move (``bracket.standings.headline``)
    headline: Headline | None = None
    #: the image judges' raw figures per sampled step (step -> judge -> mean over its seeds; higher
    #: is better, ``bracket.judge.image_judges.SCALES``); empty when they did not judge it
    step_images: dict[int, dict[str, float]] = field(default_factory=dict)

    @property
    def loss_basis(self) -> str:
        """The loss its runs were scored on ("validation", "training", or both joined by "/")."""
        return "/".join(sorted({r.loss_basis for r in self.runs if r.loss_basis}))

    @property
    def run_ids(self) -> list[int]:
        return [r.run_id for r in self.runs]

    @property
    def ratings(self) -> int:
        return sum(r.ratings for r in self.runs)

    @property
    def comparisons(self) -> int:
        return sum(r.comparisons for r in self.runs)

    @property
    def raw_text(self) -> str:
        """The raw figures and which parts are estimated, as one readable string."""
        parts = [p for r in self.runs for p in r.parts]  # the estimate itself, e.g. "human ≈ rating 6.8 (est.)"
        return "; ".join(t for t in (figures_text(self.figures), estimated_text(self.estimated, parts)) if t)

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "config_id": self.config_id, "trial_number": self.trial_number,
                "name": self.name, "kind": self.kind, "stage": self.stage, "mean": self.mean,
                "ci_low": self.ci_low, "ci_high": self.ci_high, "seeds": self.seeds,
                "disqualified": self.disqualified, "ratings": self.ratings, "comparisons": self.comparisons,
                "figures": dict(self.figures), "estimated": list(self.estimated), "params": dict(self.params),
                "best_step": self.best_step, "best_step_basis": self.best_step_basis, "loss_basis": self.loss_basis,
                "step_scores": {str(k): v for k, v in self.step_scores.items()}, "full_length": self.full_length,
                "step_images": {str(k): dict(v) for k, v in self.step_images.items()},
                "headline": self.headline.text if self.headline else "",
                "headline_parts": self.headline.to_dict() if self.headline else None,
                **(self.place or {}), "runs": [r.to_dict() for r in self.runs]}
