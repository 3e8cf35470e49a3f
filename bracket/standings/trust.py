"""Trust, shown: how often each automatic judge agrees with the person.

Two measures per judge, each a share of pairs of runs with its count and a 95 % interval:

* **blind choices** — of the person's pairwise choices that name a better run (ties left out),
  the share where the judge scores the chosen run better. Each choice is one trial, so the
  interval is Wilson's score interval of a binomial share (``scipy.stats.binomtest``);
* **order of ratings** — of the pairs of rated runs whose mean ratings differ, the share the
  judge puts in the same order (concordant pairs, as in Kendall's tau). The pairs share their
  runs, so they are not independent trials: the interval is the wider of a bootstrap over the
  rated runs (``scipy.stats.bootstrap``, percentile, 999 resamples, a fixed seed so it is the same
  every time: it carries that pairs share their runs) and Wilson's interval of the pairs (that few
  pairs say little: a bootstrap of a perfect order alone reads 100 %–100 %); with fewer than 3
  rated runs, Wilson's interval alone.

Pairs where the judge scores both runs alike, or has not scored one of them, are left out. A
judge's scores are compared only between runs of the same stage (its normalised parts are
normalised per stage); the image judges' raw scores compare across stages. A judge is **no
better than chance** when it has pairs and no interval lies above ½ (a coin agrees half the
time): its weight is a guess, and the app offers to set it to 0. With nobody's ratings or
choices there is nothing to agree with: no agreement is known.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bracket.session.scoring.image_judges import IMAGE_JUDGES, scores_at

if TYPE_CHECKING:  # pragma: no cover
    from bracket.standings.board import Standings

#: the automatic judges (the human judge is what they are measured against)
AUTOMATIC = ("loss", "eval_loss", "vlm", "task", "llm_judge", *IMAGE_JUDGES)
CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 999
BOOTSTRAP_SEED = 0
#: resamples computed at once (memory: this × rated runs² booleans)
BOOTSTRAP_BATCH = 100
#: below this many rated runs the ratings' interval is Wilson's over the pairs
MIN_BOOTSTRAP_RUNS = 3
NO_AGREEMENT = "nobody rated or compared runs yet: no agreement is known"


@dataclass(frozen=True)
class Agreement:
    """``agree`` of ``n`` pairs agree; ``low``–``high`` the 95 % interval of the share."""

    agree: int = 0
    n: int = 0
    low: float | None = None
    high: float | None = None
    method: str = ""

    @property
    def share(self) -> float | None:
        return self.agree / self.n if self.n else None

    @property
    def above_chance(self) -> bool:
        return bool(self.n) and self.low is not None and self.low > 0.5

    def text(self) -> str:
        if not self.n:
            return "no pairs"
        return (f"{self.agree} of {self.n} ({self.share:.0%}, 95 % CI {self.low:.0%}–{self.high:.0%})")

    def to_dict(self) -> dict[str, Any]:
        return {"agree": self.agree, "n": self.n, "share": self.share, "low": self.low, "high": self.high,
                "method": self.method}


@dataclass(frozen=True)
class JudgeTrust:
    """One automatic judge against the person: their blind choices and the order of their ratings."""

    judge: str
    choices: Agreement
    ratings: Agreement
    #: the judge's weight now (None: the session's weights do not name it)
    weight: float | None = None

    @property
    def known(self) -> bool:
        return bool(self.choices.n or self.ratings.n)

    @property
    def chance(self) -> bool:
        """No better than chance: it has pairs, and no interval lies above ½."""
        return self.known and not (self.choices.above_chance or self.ratings.above_chance)

    @property
    def verdict(self) -> str:
        if not self.known:
            return "no pairs to compare"
        return "no better than chance" if self.chance else "agrees more often than chance"

    def to_dict(self) -> dict[str, Any]:
        return {"judge": self.judge, "weight": self.weight, "choices": self.choices.to_dict(),
                "ratings": self.ratings.to_dict(), "known": self.known, "no_better_than_chance": self.chance,
                "verdict": self.verdict}


def wilson(agree: int, n: int) -> tuple[float, float]:
    """Wilson's 95 % score interval of ``agree`` successes in ``n`` trials."""
    from scipy.stats import binomtest

    interval = binomtest(agree, n).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    return float(interval.low), float(interval.high)


def _same(group: Mapping[int, str] | None, a: int, b: int) -> bool:
    return group is None or group.get(a) == group.get(b)


def choice_agreement(goodness: Mapping[int, float], comparisons: Sequence[Mapping[str, Any]],
                     group: Mapping[int, str] | None = None) -> Agreement:
    """How often the judge (run id -> goodness, higher is better) prefers the run the person chose."""
    agree = n = 0
    for choice in comparisons:
        left, right, winner = choice.get("left_run_id"), choice.get("right_run_id"), choice.get("winner")
        if winner not in ("left", "right") or left is None or right is None or left not in goodness \
                or right not in goodness:
            continue
        if goodness[left] == goodness[right] or not _same(group, left, right):
            continue
        chosen, other = (left, right) if winner == "left" else (right, left)
        n += 1
        agree += goodness[chosen] > goodness[other]
    if not n:
        return Agreement()
    low, high = wilson(agree, n)
    return Agreement(agree, n, low, high, "wilson")


def _pair_signs(runs: Sequence[int], goodness: Mapping[int, float], rating: Mapping[int, float],
                group: Mapping[int, str] | None) -> tuple[Any, Any]:
    """(which pairs count, which of them agree) as run × run matrices: a pair counts when the
    ratings and the judge both tell its runs apart and they share a group."""
    import numpy as np

    rated = np.array([rating[r] for r in runs], dtype=float)
    judged = np.array([goodness[r] for r in runs], dtype=float)
    by_rating = np.sign(rated[:, None] - rated[None, :])
    by_judge = np.sign(judged[:, None] - judged[None, :])
    counts = (by_rating != 0) & (by_judge != 0)
    if group is not None:
        labels = np.array([str(group.get(r)) for r in runs], dtype=object)
        counts &= labels[:, None] == labels[None, :]
    return counts, counts & (by_rating == by_judge)


def rating_agreement(goodness: Mapping[int, float], rating: Mapping[int, float],
                     group: Mapping[int, str] | None = None) -> Agreement:
    """How often the judge orders two rated runs (run id -> mean rating) as their ratings do."""
    import numpy as np

    runs = sorted(r for r in rating if r in goodness)
    if len(runs) < 2:
        return Agreement()
    counts, agrees = _pair_signs(runs, goodness, rating, group)
    n, agree = int(counts.sum()) // 2, int(agrees.sum()) // 2  # each pair is in both triangles
    if not n:
        return Agreement()
    if len(runs) < MIN_BOOTSTRAP_RUNS:
        low, high = wilson(agree, n)
        return Agreement(agree, n, low, high, "wilson")
    from scipy.stats import bootstrap

    def share(indices: Any, axis: int = -1) -> Any:
        """The agreeing share of each resample (rows of ``indices``) at once."""
        drawn = np.moveaxis(np.asarray(indices, dtype=int), axis, -1)
        rows, cols = drawn[..., :, None], drawn[..., None, :]  # a run drawn twice pairs with itself: not counted
        m = counts[rows, cols].sum(axis=(-2, -1))
        k = agrees[rows, cols].sum(axis=(-2, -1))
        return np.where(m > 0, k / np.maximum(m, 1), 0.5)  # no ordered pair says nothing either way

    result = bootstrap((np.arange(len(runs)),), share, vectorized=True, batch=BOOTSTRAP_BATCH,
                       n_resamples=BOOTSTRAP_RESAMPLES, confidence_level=CONFIDENCE, method="percentile",
                       rng=np.random.default_rng(BOOTSTRAP_SEED))
    interval, (low, high) = result.confidence_interval, wilson(agree, n)
    return Agreement(agree, n, min(float(interval.low), low), max(float(interval.high), high),
                     "bootstrap over rated runs and Wilson")


def mean_ratings(ratings: Sequence[Mapping[str, Any]]) -> dict[int, float]:
    """Run id -> the mean of every rating of it (of the whole run or of one prompt)."""
    values: dict[int, list[float]] = {}
    for rating in ratings:
        values.setdefault(int(rating["run_id"]), []).append(float(rating["value"]))
    return {run: statistics.fmean(v) for run, v in values.items()}


def judge_trust(goodness: Mapping[str, Mapping[int, float]], ratings: Sequence[Mapping[str, Any]],
                comparisons: Sequence[Mapping[str, Any]], weights: Mapping[str, float] | None = None,
                group: Mapping[int, str] | None = None) -> list[JudgeTrust]:
    """One :class:`JudgeTrust` per automatic judge in ``goodness`` (judge -> run id -> goodness,
    higher is better), in :data:`AUTOMATIC`'s order; ``group`` (run id -> stage) limits the pairs
    of every judge but the image judges to runs of one stage."""
    rating = mean_ratings(ratings)
    found = []
    for judge in AUTOMATIC:
        values = goodness.get(judge)
        if not values:
            continue
        within = None if judge in IMAGE_JUDGES else group
        found.append(JudgeTrust(judge, choice_agreement(values, comparisons, within),
                                rating_agreement(values, rating, within),
                                None if weights is None or judge not in weights else float(weights[judge])))
    return found


def run_goodness(table: "Standings", runs_by_id: Mapping[int, Mapping[str, Any]], *,
                 judges: Sequence[str] = AUTOMATIC, step: int | None = None
                 ) -> tuple[dict[str, dict[int, float]], dict[int, str]]:
    """(judge -> run id -> goodness, run id -> stage) of the standings' runs for ``judges``: each
    measured part turned round (``1 - value``: higher is better), the image judges' raw scores at
    ``step`` (``image_judges.scores_at``; None: the run's last scored step)."""
    goodness: dict[str, dict[int, float]] = {}
    stage: dict[int, str] = {}
    for board in table.boards.values():
        for row in board.rows:
            for standing in row.runs:
                stage[standing.run_id] = standing.stage
                for part in standing.parts:
                    if part.judge in judges and not part.estimated and part.value is not None:
                        goodness.setdefault(part.judge, {})[standing.run_id] = 1.0 - part.value
                run = runs_by_id.get(standing.run_id)
                for judge, value in (scores_at(run, step)[1] if run is not None else {}).items():
                    if judge in judges:
                        goodness.setdefault(judge, {})[standing.run_id] = value
    return goodness, stage
