"""An experiment, not in the app: one more rating for tied rated leaders (variant ``@again``).

A person's 1–10 rating is rounded and noisy, so two rated configs often share the top
rating; the pick between them then hangs on one judgement each (docs/BENCHMARKS.md,
section 4, "The ceiling"). This module lets "Next unrated" offer those configs' runs again,
measured with the same model as :mod:`bracket.judge.informative` (it reuses that module's
config grouping and flip chance):

* **who** — the leader of the stage whose leader is the pick (lowest mean combined score),
  when every run of it is rated, and each other config whose runs are all rated and whose
  flip chance ``Φ(-gap / sqrt(u² + u_leader²))`` is at least :data:`RERATE_CHANCE` (0.2:
  one rating point apart with one rating each is 0.24, level is up to 0.5, two points 0.08);
  the leader counts with its largest such chance. Unrated runs are ranked by the app's
  :func:`bracket.judge.informative.rank_unrated`; the good set of TPE is left to them;
* **how much** — the same value as an unrated run's: the config's chance times the share of
  the config's uncertainty (variance) this rating removes. One more judgement of a run
  judged ``j`` times (ratings and comparisons) shrinks its ``u`` to ``u·sqrt(j / (j + 1))``,
  removing ``u² / (j + 1)``: half of it for a second rating, a third for a third. So a tied
  pair (chance ~0.5, share ½) is worth ~0.25 a run, behind an unrated contender with a good
  chance to take the lead and ahead of unrated runs that cannot change the pick;
  :func:`rate_next_again` merges both lists by that value (unrated first on equal value);
* **when to stop** — a run rated :data:`RERATE_CAP` times is not offered again, so a tie that
  stays a tie (the same rating each time) ends there.

Measured in docs/BENCHMARKS.md, section 4, run N (``rated@again`` beside ``rated``): no
measurable gain in the pick for ~1.4–2.2 more ratings a session, with re-ratings drawn as
independent noise (a real person's second look at the same images is correlated with the
first, so it would tell even less). The app never offers a rated run while unrated ones
remain. :func:`patch` swaps :meth:`bracket.app.manager.SessionManager.rate_next` for
:func:`rate_next_again` in a benchmark worker; ``undo=True`` puts the app's own back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

from bench import patching
from bracket.judge.informative import (
    Candidate, Proposal, chance_beyond, config_means, candidates_from_standings, rank_unrated, why_line)

#: the least flip chance between the leader and a rated rival for both to be offered again
RERATE_CHANCE = 0.2
#: a run rated this often is not offered again (1: never offer a rated run)
RERATE_CAP = 3

_ORDINAL = {1: "a second", 2: "a third"}


@dataclass(frozen=True)
class Judged(Candidate):
    """A candidate with how often it was rated and compared, and its mean 1-10 rating."""

    ratings: int = 0
    comparisons: int = 0
    rating: float | None = None


@dataclass(frozen=True)
class Again(Proposal):
    """A rated run offered again: ``reason`` is a whole clause, shared by its group."""


def judged_candidates(table: Any, scorable: Set[int]) -> list[Judged]:
    """The app's candidates (:func:`~bracket.judge.informative.candidates_from_standings`) with
    each run's ``ratings``, ``comparisons`` and mean rating (a measured human part's
    ``figures["rating"]``) from the same standings table."""
    runs = {run.run_id: run for board in (getattr(table, "boards", None) or {}).values()
            for row in board.rows for run in row.runs}
    judged = []
    for c in candidates_from_standings(table, scorable):
        run = runs[c.run_id]
        measured = [p for p in run.parts
                    if _get(p, "judge") == "human" and not _get(p, "estimated") and _get(p, "figures")]
        rating = _get(measured[0], "figures").get("rating") if measured else None
        judged.append(Judged(c.run_id, c.config_id, c.score, c.uncertainty, c.rated, c.stage,
                             run.ratings, run.comparisons, rating))
    return judged


def _get(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def rank_tied_leaders(candidates: Sequence[Judged], *, leader_stage: str | None = None,
                      cap: int | None = None) -> list[Again]:
    """Rated runs of the leader and its close rated rivals, worth one more rating, the most
    valuable first (see the module docstring); empty when the leader is clear or unrated.
    ``cap``: default :data:`RERATE_CAP` (read at call time)."""
    cap = RERATE_CAP if cap is None else cap
    stages = {c.stage for c in candidates}
    leader_stage = leader_stage or ("final" if "final" in stages else "search")
    configs = [c for c in config_means(candidates) if c.stage == leader_stage]
    if len(configs) < 2 or not all(r.rated for r in configs[0].runs):
        return []
    leader = configs[0]
    rivals = [(config, chance_beyond(config.mean - leader.mean, math.hypot(config.spread, leader.spread)))
              for config in configs[1:] if all(r.rated for r in config.runs)]
    rivals = [(config, chance) for config, chance in rivals if chance >= RERATE_CHANCE]
    if not rivals:
        return []
    group = [(leader, max(chance for _, chance in rivals)), *rivals]
    reason = _reason([config.runs for config, _ in group], cap)
    ranked = []
    for config, chance in group:
        total = sum(r.uncertainty ** 2 for r in config.runs)
        for run in config.runs:
            if run.ratings >= cap or total <= 0:
                continue
            value = chance * run.uncertainty ** 2 / (run.ratings + run.comparisons + 1) / total
            if value > 0:
                ranked.append((-value, run.score, run.run_id, Again(run.run_id, value, reason)))
    return [p for *_, p in sorted(ranked)]


def _reason(groups: list[tuple[Candidate, ...]], cap: int) -> str:
    """One clause for the whole group, e.g. "#12 and #15 are tied at 8/10: a second rating
    separates them" (each config's mean rating, the next rating's ordinal)."""
    runs = [r for runs in groups for r in runs]
    counts = [r.ratings for r in runs if r.ratings < cap]
    which = _ORDINAL.get(min(counts, default=0), "another")
    known = [[r.rating for r in rs if r.rating is not None] for rs in groups]
    names = _join([f"#{r.run_id}" for r in runs])
    if not all(known):
        return f"{names} are level on the ratings: {which} rating separates them"
    means = [f"{sum(values) / len(values):.1f}".removesuffix(".0") for values in known]
    if len(set(means)) == 1:
        return f"{names} are tied at {means[0]}/10: {which} rating separates them"
    labels = [f"#{r.run_id} ({mean}/10)" for rs, mean in zip(groups, means) for r in rs]
    return f"{_join(labels)} are too close to call: {which} rating separates them"


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def why_line_again(proposals: Sequence[Proposal], shown: int = 2) -> str:
    """The app's :func:`~bracket.judge.informative.why_line`, with a tied group's clause said
    once (its runs share it) instead of after each run's number."""
    if not any(isinstance(p, Again) for p in proposals[:shown]):
        return why_line(proposals, shown)
    texts = [p.reason if isinstance(p, Again) else f"#{p.run_id} {p.reason}" for p in proposals[:shown]]
    return "Why these runs: " + "; ".join(dict.fromkeys(texts)) + "."


def rate_next_again(table: Any, scorable: Set[int], k: int = 4) -> tuple[list[int], str]:
    """:func:`bracket.app.rating_queue.rate_next` with tied leaders offered again: unrated runs
    and rated runs of tied leaders by one value; when nothing is worth a rating and every run
    is rated, the best rated runs again (finals first), with no why."""
    candidates = judged_candidates(table, scorable)
    stage = table.winner.stage if table and table.winner else None
    proposals = [*rank_unrated(candidates, leader_stage=stage),
                 *rank_tied_leaders(candidates, leader_stage=stage)]
    proposals = sorted(proposals, key=lambda p: -p.value)[:max(k, 0)]  # stable: unrated first on equal value
    if proposals:
        return [p.run_id for p in proposals], why_line_again(proposals)
    best = sorted(candidates, key=lambda c: (c.stage != "final", c.score, c.run_id))
    return [c.run_id for c in best][:max(k, 0)], ""


def patch(undo: bool = False) -> None:
    """Make :meth:`SessionManager.rate_next <bracket.app.manager.SessionManager.rate_next>`
    offer tied leaders again (:func:`rate_next_again`) in this process; ``undo`` restores
    the app's own."""
    from bracket.app.manager import SessionManager

    if undo:
        patching.restore(SessionManager, "rate_next")
        return

    def again(self: Any, k: int = 4) -> tuple[list[int], str]:
        self.require()
        return rate_next_again(self.standings(), {r["id"] for r in self.scorable_runs()}, k)

    patching.replace(SessionManager, "rate_next", again)
