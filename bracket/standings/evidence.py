"""The order of a stage's configs once a person has judged some of them: evidence first.

The combined score (``bracket.judge.combine``) mixes measured parts with **estimates** — for a
run nobody rated, a guess of its rating from the ratings of similar configs — so the sampler
sees every config on the same judges. A leaderboard must not let such a guess decide: a
config the person never looked at is not "better looking" than one they rated because its
neighbours were rated well. So, as soon as a run of the stage has a **measured human part**
(a rating or a blind choice; ``judged`` below), the stage is ordered by these rules:

* **Among judged configs, the person's own ratings decide**: they rank by their mean rating
  (a config only compared, by its blind choices laid on the rating scale). A tie goes to the
  config the **blind choices** favour (the human part), then to what was measured (the loss,
  judge models); never to similar configs' ratings (an estimate). A
  config goes above one rated better only when it won :data:`OVERTURN_WINS` more blind choices
  than it lost *between the two* and its human part is the better (docs/SCORING.md).
* **An unjudged config ranks above a judged one only on measured evidence**: its estimated
  parts are taken at their worst (a rating of 1: what nobody has seen could be anything), and
  it goes above a judged config only when that worst case still beats the judged config's
  score — and the score of every judged config below it (so the order stays one order).
  Unjudged configs among themselves rank by the same worst case, which rests on what was
  measured of them (their loss, a judge model) and so does not move when a rating arrives.

Without any human judgement in the stage the order is the combined score's, as before.
Pure functions of :class:`~bracket.standings.board.RunStanding`-like objects (``parts`` with
``judge``, ``value``, ``estimated``, ``weight``, ``full_weight``; ``score``).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bracket.judge.combine import measured_score
from bracket.standings.parts import score_parts

#: the judge whose measured part is a person's verdict
HUMAN = "human"
#: how many more blind choices between two configs one must win than lose to go above a config
#: rated better: one choice is about as noisy as a rating point (the simulated rater of
#: ``bench/preset_steering.py`` chooses the better of two configs 6 % apart 65 % of the time)
OVERTURN_WINS = 2.0
#: the worst value a part can take (lower is better): what an estimated part is counted as
WORST = 1.0


def own_verdict(score: Any) -> float | None:
    """A run's verdict from the person alone (normalised, lower is better), from its ``RunScore``:
    its human part when it has a rating (the rating moved by its blind choices); for a run only
    compared, its plain pairwise score — the choices laid on "no opinion" (5.5), never on the
    estimate from similar configs the combined score anchors them to; None when not judged."""
    details = ((getattr(score, "details", None) or {}).get("human") or {})
    part = next((p for p in score_parts(score) if p.judge == HUMAN), None)
    if part is None or part.estimated or part.value is None or not part.weight > 0:  # the judge does not count
        return None
    if "rating_score" in details:
        return float(part.value)
    if "pairwise_score" in details:
        return float(details["pairwise_score"])
    return None


def own_rating(score: Any) -> float | None:
    """A run's mean rating alone (normalised like its human part, lower is better; blind choices
    left out), from its ``RunScore``; None when nobody rated it (or the human judge does not count)."""
    details = ((getattr(score, "details", None) or {}).get("human") or {})
    part = next((p for p in score_parts(score) if p.judge == HUMAN), None)
    if part is None or part.estimated or not part.weight > 0 or "rating_score" not in details:
        return None
    return float(details["rating_score"])


def config_duels(comparisons: Sequence[Mapping[str, Any]], config_of: Mapping[int, int]
                 ) -> dict[tuple[int, int], float]:
    """(winner config, loser config) -> how many more blind choices between the two configs' runs
    the first won than lost (a tie half each way; only pairs with a positive balance)."""
    wins: dict[tuple[int, int], float] = {}
    for comparison in comparisons:
        left, right = (config_of.get(run_id) if isinstance(run_id := comparison.get(side), int) else None
                       for side in ("left_run_id", "right_run_id"))
        if left is None or right is None or left == right:
            continue
        share = {"left": 1.0, "right": 0.0, "tie": 0.5}.get(str(comparison.get("winner")))
        if share is None:
            continue
        wins[(left, right)] = wins.get((left, right), 0.0) + share
        wins[(right, left)] = wins.get((right, left), 0.0) + 1.0 - share
    return {pair: wins[pair] - wins.get((pair[1], pair[0]), 0.0) for pair in wins
            if wins[pair] > wins.get((pair[1], pair[0]), 0.0)}


def human_value(run: Any) -> float | None:
    """The run's verdict from the person (:func:`own_verdict`, kept as ``run.verdict``), else its
    measured human part (normalised, lower is better); None when it has none."""
    if getattr(run, "verdict", None) is not None:
        return float(run.verdict)
    if hasattr(run, "verdict"):  # a standings run: judged only by its own verdict
        return None
    for part in getattr(run, "parts", ()) or ():
        if part.judge == HUMAN and not part.estimated and part.value is not None and part.weight > 0:
            return float(part.value)
    return None


def worst_case(run: Any) -> float | None:
    """The run's combined score with every estimated part counted as :data:`WORST`, each part at
    the weight it gets once its judge has seen the run (``full_weight``); the score itself when
    nothing was estimated. None for an unscored run."""
    score = getattr(run, "score", None)
    if score is None:
        return None
    parts = [p for p in getattr(run, "parts", ()) or () if p.value is not None and p.weight > 0]
    if not any(p.estimated for p in parts):
        return float(score)
    weights = [(p.full_weight if p.full_weight is not None else p.weight) for p in parts]
    total = sum(weights)
    if total <= 0:
        return float(score)
    return sum(w * (WORST if p.estimated else float(p.value)) for w, p in zip(weights, parts)) / total


def _mean(values: Sequence[float | None]) -> float | None:
    found = [v for v in values if v is not None]
    return statistics.fmean(found) if found else None


def _first(*values: float | None) -> float:
    return next(v for v in values if v is not None)


def _choices_say_otherwise(judged: list[Any], verdicts: Mapping[int, float],
                           duels: Mapping[tuple[int, int], float]) -> list[Any]:
    """``judged`` with each config moved above the highest config it beat in blind choices
    between the two (:func:`config_duels`) when its human part is the better."""
    if not duels:
        return judged
    order = list(judged)
    for _ in range(len(order) ** 2):  # each move fixes a pair the choices decided; bounded all the same
        move = next(((j, i) for j in range(len(order)) for i in range(j)
                     if duels.get((order[j].config_id, order[i].config_id), 0.0) >= OVERTURN_WINS
                     and verdicts[order[j].config_id] < verdicts[order[i].config_id]), None)
        if move is None:
            break
        j, i = move
        order.insert(i, order.pop(j))
    return order


def evidence_order(runs_of: Mapping[int, Sequence[Any]],
                   duels: Mapping[tuple[int, int], float] | None = None) -> Callable[[list[Any]], list[Any]]:
    """An ``order`` for :func:`bracket.stats.summarise`: the scored summaries (``config_id``,
    ``mean``, ``disqualified``, ``n``) in the order of the module docstring; ``runs_of`` maps a
    config id to its runs, ``duels`` the blind choices between two configs (:func:`config_duels`)."""
    def order(scored: list[Any]) -> list[Any]:
        human = {s.config_id: _mean([human_value(r) for r in runs_of.get(s.config_id, ())]) for s in scored}
        if all(h is None for h in human.values()):
            return scored

        def tail(s: Any) -> tuple[Any, ...]:
            return (s.mean, s.disqualified, -s.n, s.config_id)
        verdicts = {cid: h for cid, h in human.items() if h is not None}
        rating = {cid: _mean([getattr(r, "rating", None) for r in runs_of.get(cid, ())]) for cid in verdicts}
        measured = {cid: _mean([measured_score(r) for r in runs_of.get(cid, ())]) for cid in verdicts}
        judged = sorted((s for s in scored if human[s.config_id] is not None),
                        key=lambda s: (round(_first(rating[s.config_id], verdicts[s.config_id]), 9),
                                       round(verdicts[s.config_id], 9),
                                       _first(measured[s.config_id], s.mean), *tail(s)))
        judged = _choices_say_otherwise(judged, verdicts, duels or {})
        worst = {s.config_id: _mean([worst_case(r) for r in runs_of.get(s.config_id, ())]) for s in scored}
        unjudged = sorted((s for s in scored if human[s.config_id] is None),
                          key=lambda s: (worst[s.config_id] if worst[s.config_id] is not None else s.mean, *tail(s)))
        # the lowest score from each judged place down: an unjudged config must beat all of them
        floor = [s.mean for s in judged]
        for i in range(len(floor) - 2, -1, -1):
            floor[i] = min(floor[i], floor[i + 1])
        merged, i = [], 0
        for s in unjudged:
            bound = worst[s.config_id] if worst[s.config_id] is not None else s.mean
            while i < len(judged) and not bound < floor[i]:
                merged.append(judged[i])
                i += 1
            merged.append(s)
        return merged + judged[i:]
    return order
