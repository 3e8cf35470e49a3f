"""The human judge: 1-10 ratings and blind pairwise choices, merged into one score per run.

**Ratings.** A person rates a whole run, or one prompt of a run, from 1 (worst) to 10 (best).
Per-prompt ratings are averaged per prompt first; the run's mean rating is the mean of its
whole-run ratings and its per-prompt means. The score is absolute, ``(10 - mean) / 9``
(10 -> 0.0, 1 -> 1.0), so it never moves because another run was rated.

**Pairwise choices.** Blind left / right / tie choices are fitted with a Bradley-Terry model
(``choix.opt_pairwise``; a normal prior of sd :data:`PRIOR_STRENGTH_SD` on each strength, a tie
half a win each way); each strength's standard error comes from the inverse Fisher
information. The pairwise score is ``1 - mean P(this run beats the other compared runs)``.

**Merge.** :func:`score_human` is the weighted mean of the parts a run has (rating, pairwise);
a run with neither has no data and gets the judge's estimate
(:func:`bracket.judge.combine.estimate_missing`). A pairwise score is laid on the rating scale
(:func:`anchor_pairwise`): the run's own rating score, else its estimate, plus
``pairwise score - 0.5``. :func:`next_pairs` picks close, little-compared pairs to show next.
docs/JUDGES.md ("Human") gives the numbers behind the prior.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from bracket.judge.base import JudgeResult

RATING_MIN, RATING_MAX = 1, 10
#: prior standard deviation of a Bradley-Terry strength (log-odds): two runs a prior sd apart
#: each way (strengths ±1) beat one another 88 % of the time
PRIOR_STRENGTH_SD = 1.0
#: the L2 penalty ``alpha * sum(strength²)`` of that prior, per comparison counted once
DEFAULT_ALPHA = 1.0 / (2.0 * PRIOR_STRENGTH_SD ** 2)
WINNERS = ("left", "right", "tie")


@dataclass(frozen=True)
class Rating:
    """A rating of a run (``prompt_index`` None) or of one prompt of a run, 1..10."""

    run_id: int
    value: float
    prompt_index: int | None = None


@dataclass(frozen=True)
class Comparison:
    """A blind pairwise choice: ``winner`` is 'left', 'right' or 'tie'."""

    left_run_id: int
    right_run_id: int
    winner: str


@dataclass(frozen=True)
class Strength:
    """A run's Bradley-Terry strength (centred log-odds scale) and what backs it."""

    strength: float
    std_error: float
    win_probability: float
    comparisons: int
    wins: int
    losses: int
    ties: int


def _field(record: Any, name: str, index: int) -> Any:
    if isinstance(record, Mapping):
        return record[name]
    if isinstance(record, (tuple, list)):
        return record[index] if index < len(record) else None
    return getattr(record, name)


def as_rating(record: Any) -> Rating:
    """A Rating from a Rating, a store record/dict with the same names, or (run_id, prompt_index, value)."""
    if isinstance(record, Rating):
        return record
    return Rating(
        run_id=int(_field(record, "run_id", 0)),
        prompt_index=_field(record, "prompt_index", 1),
        value=float(_field(record, "value", 2)),
    )


def as_comparison(record: Any) -> Comparison:
    """A Comparison from a Comparison, a store record/dict, or (left_run_id, right_run_id, winner)."""
    if isinstance(record, Comparison):
        return record
    return Comparison(
        left_run_id=int(_field(record, "left_run_id", 0)),
        right_run_id=int(_field(record, "right_run_id", 1)),
        winner=str(_field(record, "winner", 2)),
    )


def _valid_comparisons(comparisons: Iterable[Any]) -> list[Comparison]:
    valid = []
    for record in comparisons:
        comparison = as_comparison(record)
        if comparison.winner in WINNERS and comparison.left_run_id != comparison.right_run_id:
            valid.append(comparison)
    return valid


def mean_ratings(ratings: Iterable[Any]) -> dict[int, tuple[float, int]]:
    """Per run: (mean rating, number of ratings); out-of-range ratings are ignored."""
    whole: dict[int, list[float]] = defaultdict(list)
    per_prompt: dict[int, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    counts: Counter[int] = Counter()
    for record in ratings:
        rating = as_rating(record)
        if not (math.isfinite(rating.value) and RATING_MIN <= rating.value <= RATING_MAX):
            continue
        counts[rating.run_id] += 1
        if rating.prompt_index is None:
            whole[rating.run_id].append(rating.value)
        else:
            per_prompt[rating.run_id][int(rating.prompt_index)].append(rating.value)
    means: dict[int, tuple[float, int]] = {}
    for run_id in counts:
        parts = list(whole.get(run_id, []))
        parts += [sum(v) / len(v) for v in per_prompt.get(run_id, {}).values()]
        means[run_id] = (sum(parts) / len(parts), counts[run_id])
    return means


def rating_score(mean_rating: float) -> float:
    """A mean 1..10 rating as a [0, 1] lower-is-better score (10 -> 0, 1 -> 1)."""
    return (RATING_MAX - mean_rating) / (RATING_MAX - RATING_MIN)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def bradley_terry(comparisons: Iterable[Any], *, alpha: float = DEFAULT_ALPHA) -> dict[int, Strength]:
    """Fit Bradley-Terry strengths to pairwise choices (ties = half a win each way).

    Returns a Strength for every run that appears in at least one valid comparison;
    an empty dict when there is none.
    """
    valid = _valid_comparisons(comparisons)
    if not valid:
        return {}
    runs = sorted({c.left_run_id for c in valid} | {c.right_run_id for c in valid})
    index = {run_id: i for i, run_id in enumerate(runs)}
    data: list[tuple[int, int]] = []
    tally: dict[int, Counter[str]] = {run_id: Counter() for run_id in runs}
    for c in valid:
        left, right = index[c.left_run_id], index[c.right_run_id]
        if c.winner == "tie":
            data += [(left, right), (right, left)]
            tally[c.left_run_id]["ties"] += 1
            tally[c.right_run_id]["ties"] += 1
        else:
            winner, loser = (left, right) if c.winner == "left" else (right, left)
            data += [(winner, loser), (winner, loser)]
            tally[runs[winner]]["wins"] += 1
            tally[runs[loser]]["losses"] += 1
    # Every comparison appears twice in `data`, so the penalty is doubled to keep its weight.
    import choix  # here, not at the top: it imports scipy.stats (~2 s), which only a fit needs

    params = np.asarray(choix.opt_pairwise(len(runs), data, alpha=2.0 * alpha), dtype=float)
    params = params - params.mean()
    fisher = 2.0 * alpha * np.identity(len(runs))
    for c in valid:
        a, b = index[c.left_run_id], index[c.right_run_id]
        p = float(_sigmoid(np.array(params[a] - params[b])))
        weight = p * (1.0 - p)
        fisher[a, a] += weight
        fisher[b, b] += weight
        fisher[a, b] -= weight
        fisher[b, a] -= weight
    std_errors = np.sqrt(np.diag(np.linalg.inv(fisher)))
    win = _sigmoid(params[:, None] - params[None, :])
    np.fill_diagonal(win, np.nan)
    win_probability = np.nanmean(win, axis=1) if len(runs) > 1 else np.array([0.5])
    return {
        run_id: Strength(
            strength=float(params[i]),
            std_error=float(std_errors[i]),
            win_probability=float(win_probability[i]),
            comparisons=sum(tally[run_id].values()),
            wins=tally[run_id]["wins"],
            losses=tally[run_id]["losses"],
            ties=tally[run_id]["ties"],
        )
        for i, run_id in enumerate(runs)
    }


def score_human(
    run_ids: Iterable[int],
    ratings: Iterable[Any] = (),
    comparisons: Iterable[Any] = (),
    *,
    alpha: float = DEFAULT_ALPHA,
    rating_weight: float = 1.0,
    pairwise_weight: float = 1.0,
) -> dict[int, JudgeResult]:
    """One human score per run from its ratings and the Bradley-Terry fit of all comparisons."""
    means = mean_ratings(ratings)
    strengths = bradley_terry(comparisons, alpha=alpha)
    results: dict[int, JudgeResult] = {}
    for run_id in run_ids:
        details: dict[str, Any] = {}
        parts: list[tuple[float, float]] = []
        if run_id in means:
            mean, count = means[run_id]
            details.update(mean_rating=mean, ratings=count, rating_score=rating_score(mean))
            parts.append((rating_weight, rating_score(mean)))
        if run_id in strengths:
            s = strengths[run_id]
            details.update(
                bt_strength=s.strength,
                bt_std_error=s.std_error,
                win_probability=s.win_probability,
                comparisons=s.comparisons,
                wins=s.wins,
                losses=s.losses,
                ties=s.ties,
                pairwise_score=1.0 - s.win_probability,
            )
            parts.append((pairwise_weight, 1.0 - s.win_probability))
        total = sum(w for w, _ in parts)
        if not parts or total <= 0:
            results[run_id] = JudgeResult.no_data("no human rating or comparison yet", details)
        else:
            results[run_id] = JudgeResult.scored(sum(w * v for w, v in parts) / total, details)
    return results


def next_pairs(
    run_ids: Sequence[int],
    current_scores: Mapping[int, float | None],
    comparisons: Sequence[Any] = (),
    k: int = 1,
    *,
    pair_penalty: float = 0.2,
    run_penalty: float = 0.05,
    rng: random.Random | None = None,
) -> list[tuple[int, int]]:
    """Up to ``k`` (left, right) pairs worth comparing next, most informative first.

    Cost of a pair = |score difference| + ``pair_penalty`` x times this pair was compared
    + ``run_penalty`` x comparisons the two runs had in total; lowest cost first (a run
    without a score counts as 0.5). The pair compared last is never offered again straight
    away, so with only two runs nothing is offered until another comparison is recorded.
    Sides are shuffled with ``rng`` so neither run is always on the left.
    """
    rng = rng or random.Random()
    valid = _valid_comparisons(comparisons)
    pair_counts: Counter[frozenset[int]] = Counter(frozenset((c.left_run_id, c.right_run_id)) for c in valid)
    run_counts: Counter[int] = Counter()
    for c in valid:
        run_counts[c.left_run_id] += 1
        run_counts[c.right_run_id] += 1
    last = frozenset((valid[-1].left_run_id, valid[-1].right_run_id)) if valid else None
    ids = sorted(set(run_ids))
    candidates = []
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            pair = frozenset((a, b))
            if pair == last:
                continue
            score_a, score_b = current_scores.get(a), current_scores.get(b)
            gap = abs((0.5 if score_a is None else score_a) - (0.5 if score_b is None else score_b))
            cost = gap + pair_penalty * pair_counts[pair] + run_penalty * (run_counts[a] + run_counts[b])
            candidates.append((cost, a, b))
    candidates.sort()
    chosen = []
    for _, a, b in candidates[: max(0, k)]:
        chosen.append((a, b) if rng.random() < 0.5 else (b, a))
    return chosen


def rating_part(results: Mapping[int, JudgeResult]) -> dict[int, JudgeResult]:
    """Per run with a rating: its rating score alone (details kept); the others no data."""
    return {run_id: (JudgeResult.scored(r.details["rating_score"], r.details) if "rating_score" in r.details
                     else JudgeResult.no_data("no human rating yet", r.details))
            for run_id, r in results.items()}


def anchor_pairwise(results: Mapping[int, JudgeResult], anchors: Mapping[int, float],
                    default: float = 0.5) -> dict[int, JudgeResult]:
    """``results`` (from :func:`score_human`) with each compared run's score laid on the rating
    scale: ``anchor + pairwise_score - 0.5`` (clipped to [0, 1]), the anchor being the run's own
    rating score, else ``anchors[run]`` (its estimated human score), else ``default``.
    Runs never compared are returned as they are."""
    out: dict[int, JudgeResult] = {}
    for run_id, result in results.items():
        pairwise = result.details.get("pairwise_score")
        if pairwise is None:
            out[run_id] = result
            continue
        anchor = result.details.get("rating_score", anchors.get(run_id, default))
        out[run_id] = JudgeResult.scored(anchor + float(pairwise) - 0.5, dict(result.details, anchor=anchor))
    return out
