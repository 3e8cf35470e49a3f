"""One more rating for tied leaders: when the pick rests on rated configs too close to call.

A person's 1–10 rating is rounded and noisy, so two rated configs often share the top
rating; the pick between them then hangs on one judgement each (docs/BENCHMARKS.md,
section 4, "The ceiling"). This module offers those configs' runs for one more rating,
measured with the same model as :mod:`bracket.judge.informative` (pure functions):

* **who** — the leader of the stage whose leader is the pick (lowest mean combined score),
  when every run of it is rated, and each other config whose runs are all rated and whose
  flip chance ``Φ(-gap / sqrt(u² + u_leader²))`` is at least :data:`RERATE_CHANCE` (0.2:
  one rating point apart with one rating each is 0.24, level is up to 0.5, two points 0.08);
  the leader counts with its largest such chance. Unrated runs are ranked by
  :func:`bracket.judge.informative.rank_unrated`; the good set of TPE is left to them;
* **how much** — the same value as an unrated run's: the config's chance times the share of
  the config's uncertainty (variance) this rating removes. One more judgement of a run
  judged ``j`` times (ratings and comparisons) shrinks its ``u`` to ``u·sqrt(j / (j + 1))``,
  removing ``u² / (j + 1)``: half of it for a second rating, a third for a third. So a tied
  pair (chance ~0.5, share ½) is worth ~0.25 a run, behind an unrated contender with a good
  chance to take the lead and ahead of unrated runs that cannot change the pick;
  :func:`bracket.app.rating_queue.rate_next` merges both lists by that value (unrated first
  on equal value);
* **when to stop** — a run rated :data:`RERATE_CAP` times is not offered again, so a tie that
  stays a tie (the same rating each time) ends there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from bracket.judge.informative import Candidate, Proposal, _beyond, _configs

#: the least flip chance between the leader and a rated rival for both to be offered again
RERATE_CHANCE = 0.2
#: a run rated this often is not offered again (1: never offer a rated run)
RERATE_CAP = 3

_ORDINAL = {1: "a second", 2: "a third"}


def rank_tied_leaders(candidates: Sequence[Candidate], *, leader_stage: str | None = None,
                      cap: int | None = None) -> list[Proposal]:
    """Rated runs of the leader and its close rated rivals, worth one more rating, the most
    valuable first (see the module docstring); empty when the leader is clear or unrated.
    ``cap``: default :data:`RERATE_CAP` (read at call time)."""
    cap = RERATE_CAP if cap is None else cap
    stages = {c.stage for c in candidates}
    leader_stage = leader_stage or ("final" if "final" in stages else "search")
    configs = [c for c in _configs(candidates) if c.stage == leader_stage]
    if len(configs) < 2 or not all(r.rated for r in configs[0].runs):
        return []
    leader = configs[0]
    rivals = [(config, _beyond(config.mean - leader.mean, math.hypot(config.spread, leader.spread)))
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
                ranked.append((-value, run.score, run.run_id, Proposal(run.run_id, value, reason, again=True)))
    return [p for *_, p in sorted(ranked)]


def _reason(groups: list[tuple[Candidate, ...]], cap: int) -> str:
    """One clause for the whole group, e.g. "#12 and #15 are tied at 8/10: a second rating
    separates them" (each config's mean rating, the next rating's ordinal)."""
    runs = [r for runs in groups for r in runs]
    counts = [r.ratings for r in runs if r.ratings < cap]
    which = _ORDINAL.get(min(counts, default=0), "another")
    known = [[r.rating for r in rs if r.rating is not None] for rs in groups]
    if not all(known):
        return f"{_join([f'#{r.run_id}' for r in runs])} are level on the ratings: {which} rating separates them"
    means = [f"{sum(values) / len(values):.1f}".removesuffix(".0") for values in known]
    if len(set(means)) == 1:
        return f"{_join([f'#{r.run_id}' for r in runs])} are tied at {means[0]}/10: {which} rating separates them"
    labels = [f"#{r.run_id} ({mean}/10)" for rs, mean in zip(groups, means) for r in rs]
    return f"{_join(labels)} are too close to call: {which} rating separates them"


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
