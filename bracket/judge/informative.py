"""Which run (or pair) to rate next: where a person's rating could change the answer most.

A rating is worth most where it can change the pick (which config wins) or what TPE learns from
(which configs it counts as "good"). Pure functions of plain data rank the runs nobody rated by
that chance:

* every run's combined score (lower is better) and its **uncertainty**: the spread of the
  parts a rating would replace or sharpen (the estimated human part's predictive spread times
  its weight; :data:`ONE_POINT` per judgement, shrinking with their number, for a run already
  judged; :func:`prior_uncertainty` before anybody rated), less for a run next to a rated
  config (:func:`novelty`, :func:`param_distance` below :data:`NOVELTY_RADIUS`, down to
  :data:`NEAR_FLOOR`);
* a config's **chance to matter**: the larger of *flip* (it could take the lead,
  ``Φ(-gap / sqrt(u_c² + u_leader²))``) and *good set* (it could cross the edge of TPE's good
  set, the best ``ceil(γ n)`` search configs, γ = :data:`GOOD_FRACTION`).

The pick is decided on the standings' scores, TPE's good set on the values the sampler sees: once
a person judged a search run, those are their verdicts and the predictions of them with their
spread (:func:`with_readings`, ``bracket.session.scoring.sampler_values.taste_readings``), so the
*good set* chance is cut on them — an unrated run whose predicted verdict lies near the edge of
the configs TPE builds on, and is unsure, is worth a rating — while *flip* stays on the scores
the standings rank by.

A run's value is its config's chance times its share of that config's uncertainty.
:func:`rank_unrated` orders unrated runs by it, each with a one-line reason
(:attr:`Proposal.reason`); :func:`why_line` joins them into Compare's sentence;
``bracket.judge.pairs`` offers the pair for a blind choice ("Next pair") from the same chances.
docs/SCORING.md, "Which run to rate next", gives the rule with its numbers.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeGuard

from bracket.judge.combine import DEFAULT_WEIGHTS, PRIOR_COUNT, PRIOR_SD, measured_score

#: one rating point on the human judge's [0, 1] scale (a 1–10 rating: 10 → 0, 1 → 1)
ONE_POINT = 1.0 / 9.0
#: TPE's good share once someone rated (``bracket.search.controller.WIDE_GAMMA_FRACTION``)
GOOD_FRACTION = 0.25
#: below this chance a config is not a contender (no flip, no good-set crossing worth a look)
CONTENDER = 0.05
#: distance (:func:`param_distance`) from the nearest rated config of its stage beyond which
#: an unrated run's estimate keeps its full uncertainty (0: off, every unrated run alike;
#: 0.25 chosen with simulated raters, docs/log/2026-12-01-benchmarks.md)
NOVELTY_RADIUS = 0.25
#: the least share of its uncertainty an unrated run keeps right next to a rated config
NEAR_FLOOR = 0.3


@dataclass(frozen=True)
class Candidate:
    """One finished, scored run as this module sees it."""

    run_id: int
    config_id: int
    #: current combined score, lower is better
    score: float
    #: standard deviation of ``score`` that a rating would resolve
    uncertainty: float
    rated: bool = False
    #: the stage it belongs to ("search", "final", ...); the good set is the search's
    stage: str = "search"
    #: its score from what a judge other than the person measured (estimated parts left out;
    #: lower is better), None when unknown: the config with the best is the measured candidate
    measured: float | None = None
    #: its config's place on its stage's leaderboard (0: the top), None when unknown
    place: int | None = None
    #: its config's mean rating on the human judge's scale (lower is better), None when not rated
    rating: float | None = None


@dataclass(frozen=True)
class Proposal:
    """A run worth rating, how much, and why (one short phrase)."""

    run_id: int
    value: float
    reason: str


def _phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def chance_beyond(gap: float, spread: float) -> float:
    """P(a normal error of sd ``spread`` exceeds ``gap`` in one direction)."""
    if spread <= 0.0:
        return 0.5 if gap == 0.0 else 0.0
    return _phi(-gap / spread)


def prior_uncertainty(human_weight: float = DEFAULT_WEIGHTS["human"],
                      other_weight: float = DEFAULT_WEIGHTS["loss"]) -> float:
    """A run's score uncertainty before anybody rated: the human estimate's prior spread
    (``estimate_missing`` with no score) times the human judge's share of the weights."""
    total = human_weight + other_weight
    share = human_weight / total if total > 0 else 0.0
    return share * PRIOR_SD * math.sqrt(1.0 + 1.0 / PRIOR_COUNT)


def run_uncertainty(parts: Iterable[Any], judgements: int = 0) -> float:
    """A run's score uncertainty from its score parts (objects or mappings with ``judge``,
    ``weight``, ``estimated``, ``uncertainty``): estimated parts count with their spread, a
    measured human part with :data:`ONE_POINT` / sqrt(``judgements``)."""
    total = 0.0
    for part in parts:
        get = part.get if isinstance(part, Mapping) else (lambda name, p=part: getattr(p, name, None))
        weight = float(get("weight") or 0.0)
        if get("estimated"):  # what a rating may move it by: the judge's full share, not the estimate's
            total += (float(get("full_weight") or weight) * float(get("uncertainty") or 0.0)) ** 2
        elif get("judge") == "human":
            total += (weight * ONE_POINT / math.sqrt(max(1, judgements))) ** 2
    return math.sqrt(total)


@dataclass(frozen=True)
class ConfigMean:
    """One config's runs in one stage: their mean score and the uncertainty of that mean."""

    config_id: int
    stage: str
    mean: float
    spread: float
    runs: tuple[Candidate, ...]


def config_means(candidates: Sequence[Candidate]) -> list[ConfigMean]:
    """The candidates grouped per (stage, config), best mean first."""
    by: dict[tuple[str, int], list[Candidate]] = {}
    for c in candidates:
        by.setdefault((c.stage, c.config_id), []).append(c)
    configs = []
    for (stage, config_id), runs in by.items():
        n = len(runs)
        configs.append(ConfigMean(config_id, stage, sum(r.score for r in runs) / n,
                               math.sqrt(sum(r.uncertainty ** 2 for r in runs)) / n, tuple(runs)))
    return sorted(configs, key=lambda c: (c.mean, c.config_id))


def config_chances(configs: list[ConfigMean], good_fraction: float, pick: bool = True,
                   seen: list[ConfigMean] | None = None) -> dict[int, tuple[float, str]]:
    """Per config id: (chance to matter, reason), for one stage's configs (best first);
    ``pick``: this stage's leader is the pick (else only TPE's good set counts); ``seen``: the
    same configs as the sampler reads them (best first), on which TPE's good set is cut."""
    chances: dict[int, tuple[float, str]] = {
        c.config_id: (0.0, "far from the leader and from the configs TPE builds on") for c in configs}
    if not configs:
        return chances
    leader = configs[0]
    if pick:
        chances.update(_lead_chances(configs))
    if leader.stage != "search" or good_fraction <= 0:
        return chances
    sampled = seen if seen is not None else configs
    good = min(len(sampled), max(1, math.ceil(good_fraction * len(sampled))))
    if good >= len(sampled):
        return chances
    edge = (sampled[good - 1].mean + sampled[good].mean) / 2.0
    for index, config in enumerate(sampled):
        gap = abs(config.mean - edge)
        chance = chance_beyond(gap, config.spread)
        if chance > chances[config.config_id][0]:
            chances[config.config_id] = (chance, _edge_reason(gap, chance, inside=index < good))
    return chances


def _odds(chance: float) -> str:
    """A chance as a person reads it ("a 30 % chance"); the score gap behind it is internal
    (docs/SCORING.md), so reasons never print it."""
    return f"a {round(100 * chance)} % chance" if chance >= 0.005 else "less than a 1 % chance"


def _level(gap: float) -> bool:
    """Two scores too close to tell apart (they would read the same at three decimals)."""
    return gap < 0.0005


def _edge_reason(gap: float, chance: float, *, inside: bool) -> str:
    """Why a config near the edge of TPE's good set matters, in a trainer's words."""
    if _level(gap):
        return ("is right at the line between the configs TPE builds on and the rest: "
                "a rating decides which side")
    if inside:
        return f"is among the configs TPE builds on, near the line: {_odds(chance)} a rating pushes it out"
    return f"is just short of the configs TPE builds on: {_odds(chance)} a rating brings it in"


def _lead_chances(configs: list[ConfigMean]) -> dict[int, tuple[float, str]]:
    chances: dict[int, tuple[float, str]] = {}
    leader = configs[0]
    for config in configs[1:]:
        gap = config.mean - leader.mean
        chance = chance_beyond(gap, math.hypot(config.spread, leader.spread))
        chances[config.config_id] = (chance, "could overtake the leader: level with it" if _level(gap)
                                     else f"could overtake the leader: {_odds(chance)} it is better")
    if len(configs) > 1:
        runner = configs[1]
        gap = runner.mean - leader.mean
        chance = chance_beyond(gap, math.hypot(runner.spread, leader.spread))
        chances[leader.config_id] = (chance, "the leader: a rating confirms it or lets the runner-up "
                                             f"({'level with it' if _level(gap) else _odds(chance) + ' it is better'}) "
                                             "take over")
    else:
        chances[leader.config_id] = (0.5, "the only scored config: a rating says whether it is any good")
    return chances


def rank_unrated(candidates: Sequence[Candidate], *, leader_stage: str | None = None,
                 good_fraction: float = GOOD_FRACTION, seen: Sequence[Candidate] | None = None) -> list[Proposal]:
    """Every unrated candidate, the most informative rating first (see the module docstring).

    ``leader_stage``: the stage whose leader is the pick ("final" once finals are scored;
    default: "final" if any candidate is a final, else "search"). TPE's good set counts while
    the search stage is the leader's (once finals are scored the search no longer proposes);
    runs of the other stages come last. ``seen``: the same candidates as the sampler reads them
    (:func:`with_readings`); TPE's good set is cut on those, the pick on ``candidates``.
    """
    stages = {c.stage for c in candidates}
    leader_stage = leader_stage or ("final" if "final" in stages else "search")
    chances: dict[tuple[str, int], tuple[float, str]] = {}
    for stage in {leader_stage} & stages:
        configs = [c for c in config_means(candidates) if c.stage == stage]
        sampled = [c for c in config_means(seen) if c.stage == stage] if seen is not None else None
        found = config_chances(configs, good_fraction, pick=stage == leader_stage, seen=sampled)
        for config_id, entry in found.items():
            chances[(stage, config_id)] = entry
    spread = {(c.stage, c.config_id): c for c in config_means(candidates)}
    unconfirmed = measured_candidate(candidates, leader_stage)
    # one run of it comes first (its lowest score): its other seeds wait their turn, so the runs
    # offered beside it are other configs, not the same picture at another seed
    first = min(((c.score, c.run_id) for c in candidates
                 if c.stage == leader_stage and c.config_id == unconfirmed and not c.rated), default=None)
    proposals = []
    for c in candidates:
        if c.rated:
            continue
        chance, reason = chances.get((c.stage, c.config_id),
                                     (0.0, f"a {c.stage} run: it does not change the pick"))
        config = spread[(c.stage, c.config_id)]
        total = sum(r.uncertainty ** 2 for r in config.runs)
        share = c.uncertainty ** 2 / total if total > 0 else 1.0 / len(config.runs)
        if first is not None and c.run_id == first[1]:  # the measured answer: confirm it first
            proposals.append((-math.inf, c.score, c.run_id, Proposal(c.run_id, max(chance * share, CONTENDER),
                                                                     UNCONFIRMED)))
            continue
        proposals.append((-(chance * share), c.score, c.run_id, Proposal(c.run_id, chance * share, reason)))
    return [p for *_, p in sorted(proposals)]


#: why the config the measurements name comes first (:func:`measured_candidate`)
UNCONFIRMED = ("has the best measured score (loss and judges) of all and nobody rated it: "
               "a rating says whether it is the answer")


def measured_candidate(candidates: Sequence[Candidate], stage: str) -> int | None:
    """The config of ``stage`` with the best mean measured score (``Candidate.measured``) when
    none of its runs is rated, else None: what the measurements alone name as the answer, which
    a person should confirm or rule out before any other rating."""
    by: dict[int, list[Candidate]] = {}
    for c in candidates:
        if c.stage == stage and c.measured is not None:
            by.setdefault(c.config_id, []).append(c)
    if not by:
        return None
    best = min(by, key=lambda cid: (sum(float(c.measured or 0.0) for c in by[cid]) / len(by[cid]), cid))
    return None if any(c.rated for c in by[best]) else best


def with_readings(candidates: Sequence[Candidate], readings: Mapping[int, Any],
                  stage: str = "search") -> list[Candidate]:
    """``candidates`` with those of ``stage`` read as the sampler reads their configs: ``readings``
    maps a config id to an object with ``value`` (lower is better), ``spread`` and ``judged``
    (``taste_readings``). Unchanged while no config is judged (the readings are then the combined
    score with no spread), and while a candidate of ``stage`` has no reading (a halving search's
    config paused at a rung: one scale for all or none). A config's spread is its own, whatever
    its number of runs."""
    if not any(getattr(r, "judged", False) for r in readings.values()) \
            or any(c.config_id not in readings for c in candidates if c.stage == stage):
        return list(candidates)
    runs: Counter[int] = Counter(c.config_id for c in candidates if c.stage == stage)
    out = []
    for c in candidates:
        reading = readings.get(c.config_id) if c.stage == stage else None
        if reading is None:
            out.append(c)
            continue
        out.append(replace(c, score=float(reading.value),
                           uncertainty=float(reading.spread) * math.sqrt(runs[c.config_id])))
    return out


def why_line(proposals: Sequence[Proposal], shown: int = 2) -> str:
    """The one line the Compare tab shows: why these runs (the first ``shown`` reasons)."""
    if not proposals:
        return ""
    if all(p.value < CONTENDER / 10 for p in proposals[:shown]):
        return "Why these runs: best score first — no unrated run is close enough to change the pick."
    return "Why these runs: " + "; ".join(f"#{p.run_id} {p.reason}" for p in proposals[:shown]) + "."


def _is_number(value: object) -> TypeGuard[int | float]:
    """An int or float, not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def param_distance(a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    """How far apart two configs are, 0 (same) to 1: the mean over their keys of a per-key
    distance — positive numbers by decades (one decade or more = 1), other numbers relative,
    anything else 0 when equal and 1 when not (a key only one has counts 1)."""
    keys = set(a) | set(b)
    if not keys:
        return 0.0
    total = 0.0
    for key in keys:
        x, y = a.get(key), b.get(key)
        if _is_number(x) and _is_number(y):
            if x > 0 and y > 0:
                total += min(1.0, abs(math.log10(x / y)))
            else:
                total += min(1.0, abs(x - y) / max(abs(x), abs(y), 1e-12))
        else:
            total += 0.0 if x == y and key in a and key in b else 1.0
    return total / len(keys)


def novelty(params: Mapping[str, Any], rated: Sequence[Mapping[str, Any]], radius: float) -> float:
    """The factor on an unrated run's estimate uncertainty: 1 far from every rated config
    (``radius`` or more by :func:`param_distance`), down to :data:`NEAR_FLOOR` at a rated
    config's own params — its estimate already leans on that rating (``bracket.judge.neighbours``),
    so rating it teaches less. 1 with ``radius`` 0 or nothing rated."""
    if radius <= 0 or not rated:
        return 1.0
    nearest = min(param_distance(params, other) for other in rated)
    return max(NEAR_FLOOR, min(1.0, nearest / radius))


def candidates_from_standings(table: Any, scorable: Iterable[int] | None = None, *,
                              radius: float | None = None) -> list[Candidate]:
    """Candidates from a standings table (``boards`` of ``rows`` (with ``params``) of ``runs``
    with ``run_id``, ``config_id``, ``stage``, ``score``, ``rated``, ``ratings``,
    ``comparisons``, ``parts``): every scored run, or only those in ``scorable``. Without any
    estimated or human part (nobody rated yet) unrated runs get :func:`prior_uncertainty`;
    with ``radius`` (default :data:`NOVELTY_RADIUS`) above 0 an unrated run's uncertainty is
    scaled by its :func:`novelty` against the rated configs of its stage (a final run's
    samples are not its search run's)."""
    radius = NOVELTY_RADIUS if radius is None else radius
    allowed = None if scorable is None else set(scorable)
    pairs = [(row, run) for board in (getattr(table, "boards", None) or {}).values() for row in board.rows
             for run in row.runs if run.score is not None and (allowed is None or run.run_id in allowed)]
    spreads = {run.run_id: run_uncertainty(run.parts, run.ratings + run.comparisons) for _, run in pairs}
    prior = prior_uncertainty() if not any(spreads.values()) else 0.0
    rated: dict[str, list[dict[str, Any]]] = {}
    for row, run in pairs:
        if run.rated:
            rated.setdefault(run.stage, []).append(dict(getattr(row, "params", None) or {}))
    places = {id(row): place for board in (getattr(table, "boards", None) or {}).values()
              for place, row in enumerate(board.rows)}
    ratings = {id(row): [float(r.rating) for r in row.runs if getattr(r, "rating", None) is not None]
               for row, _ in pairs}
    candidates = []
    for row, run in pairs:
        spread = spreads[run.run_id] or (0.0 if run.rated else prior)
        if not run.rated:
            spread *= novelty(dict(getattr(row, "params", None) or {}), rated.get(run.stage, []), radius)
        mine = ratings[id(row)]
        candidates.append(Candidate(run.run_id, run.config_id, float(run.score), spread, run.rated, run.stage,
                                    measured=measured_score(run, leave_out="human"), place=places.get(id(row)),
                                    rating=sum(mine) / len(mine) if mine else None))
    return candidates
