"""What a rating changed, in one sentence the Compare tab shows after it is saved.

A rating changes the value TPE sees for the rated run's config at once (the person's verdict,
``bracket.session.scoring.sampler_values``), and with it the rank of its config among the search
configs; it also moves the human estimate of unrated configs, most of those
*similar* to the rated one (``bracket.judge.neighbours``, docs/SCORING.md), so a rating can
carry its neighbourhood into or out of TPE's good set. What matters for the search is whether
the config is now among the few best that TPE builds its next proposals on
(:func:`bracket.search.controller.tpe_good_count`).
:func:`rate_and_explain` records a rating through the same path as every rating
(:meth:`Session.add_rating`) and says that, e.g.::

    Run #12 rated 9: its config moved from 6th to 2nd of 14 and is now among the 4 best configs TPE
    builds its next proposals on; it reads: 12 % lower validation loss than your baseline, ± 3 %;
    rated 9/10 by you; 2 similar configs moved with it (search-9: 7th -> 3rd, now among them).

Only ranks are said as movement; what the config achieved is its headline
(``bracket.standings.headline``), the reading every screen uses — never the combined score, which
is relative to the other configs and moves when a rating re-scales them.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import TYPE_CHECKING

from bracket.app.places import ordinal as _ordinal
from bracket.app.places import rank
from bracket.search.controller import tpe_good_count
from bracket.session.scoring.sampler_values import Reading
from bracket.session.store import stored_rows

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session import Session


def search_readings(session: "Session") -> dict[int, Reading]:
    """What TPE sees now of every scored search config, by config id, with its spread: once a run
    is judged, the person's verdict and its prediction for the unrated ones
    (``Scoreboard.readings``, as the sampler's history reads them), else the mean combined score."""
    rows, configs = stored_rows(session)  # read once per store change, as the standings beside it
    runs = [r for r in rows if r["stage"] == "search"]
    configs = [c for c in configs if c["stage"] == "search"]
    return session.scoreboard.readings(runs, session.scores(runs), configs)


def search_standings(session: "Session") -> dict[int, float]:
    """The value TPE sees now for every scored search config, by config id (:func:`search_readings`)."""
    return {cid: reading.value for cid, reading in search_readings(session).items()}


def _rank(values: Mapping[int, float], config_id: int) -> int:
    return rank(values[config_id], values.values())


#: a config "moved with" the rated one when its score moved the same way by this much more than
#: the typical config's (every unrated config shifts a little with the shared estimate)
MOVED_WITH = 0.01


def moved_with(before: Mapping[int, float], after: Mapping[int, float], config_id: int) -> list[int]:
    """Other configs whose score moved with ``config_id``'s (same direction, :data:`MOVED_WITH`
    beyond the median move of the others): the similar configs whose estimate the rating moved;
    the biggest move first."""
    if config_id not in before or config_id not in after:
        return []
    direction = after[config_id] - before[config_id]
    shifts = {c: after[c] - before[c] for c in after if c != config_id and c in before}
    if not shifts or direction == 0:
        return []
    typical = statistics.median(shifts.values())
    sign = 1.0 if direction > 0 else -1.0
    moved = [c for c, shift in shifts.items() if sign * (shift - typical) >= MOVED_WITH]
    return sorted(moved, key=lambda c: -sign * shifts[c])


def describe_rating_effect(before: Mapping[int, float], after: Mapping[int, float], config_id: int | None,
                           run_id: int, value: float, names: Mapping[int, str] | None = None,
                           headline: str = "") -> str:
    """The sentence for a rating of ``value`` on ``run_id`` (of search config ``config_id``);
    ``names``: config id -> name, for the similar configs that moved with it; ``headline``: the
    config's headline after the rating (said as what it reads)."""
    head = f"Run #{run_id} rated {value:g}"
    if config_id is None or config_id not in after:
        return f"{head}: saved; it is not a scored search run, so the search's next proposals do not change."
    count, good = len(after), tpe_good_count(len(after), wide=True)  # a rated session: TPE's wider good set
    new_rank = _rank(after, config_id)
    old_rank = _rank(before, config_id) if config_id in before else None
    moved = (f"its config is now {_ordinal(new_rank)} of {count}" if old_rank is None
             else f"its config stayed {_ordinal(new_rank)} of {count}" if old_rank == new_rank
             else f"its config moved from {_ordinal(old_rank)} to {_ordinal(new_rank)} of {count}")
    best = "the best config" if good == 1 else f"the {good} best configs"
    was_good = config_id in before and _rank(before, config_id) <= tpe_good_count(len(before), wide=True)
    if new_rank <= good and not was_good:
        steer = f"and is now {'' if good == 1 else 'among '}{best} TPE builds its next proposals on"
    elif new_rank > good and was_good:
        steer = f"and has left {best} TPE builds its next proposals on"
    elif new_rank <= good:
        steer = f"and stays {'' if good == 1 else 'among '}{best} TPE builds its next proposals on"
    else:
        steer = f"still outside {best} TPE builds its next proposals on"
    reads = f"; it reads: {headline}" if headline else ""
    return f"{head}: {moved}, {steer}{reads}{_neighbours(before, after, config_id, good, names or {})}."


def _neighbours(before: Mapping[int, float], after: Mapping[int, float], config_id: int, good: int,
                names: Mapping[int, str]) -> str:
    """The similar configs the rating carried along, or "". "Moved" only where a rank changed:
    "; 1 similar config moved with it (search-9: 7th -> 3rd, now among them)"; where no rank
    changed, "; the score of 1 similar config changed with it (search-9: still 3rd)";
    a mix says both ("the scores of 3 similar configs changed with it and 1 of them moved (...)")."""
    carried = moved_with(before, after, config_id)
    if not carried:
        return ""
    reranked = [c for c in carried if _rank(before, c) != _rank(after, c)]
    first = (reranked or carried)[0]
    old, new = _rank(before, first), _rank(after, first)
    was, now = old <= tpe_good_count(len(before), wide=True), new <= good
    change = ", now among them" if now and not was else ", out of them" if was and not now else ""
    count = f"{len(carried)} similar config{'s' * (len(carried) != 1)}"
    scores = f"the score{'s' * (len(carried) != 1)} of {count} changed with it"
    what = (f"{count} moved with it" if len(reranked) == len(carried)
            else f"{scores} and {len(reranked)} of them moved" if reranked else scores)
    how = f"{_ordinal(old)} -> {_ordinal(new)}" if old != new else f"still {_ordinal(new)}"
    return f"; {what} ({names.get(first, f'config {first}')}: {how}{change})"


def rate_and_explain(session: "Session", run_id: int, value: float, prompt_index: int | None = None,
                     step: int | None = None) -> str:
    """Record a rating (as :meth:`Session.add_rating`, at the step shown) and say what it changed."""
    before = search_standings(session)
    session.add_rating(run_id, value, prompt_index, step)
    run = session.store.get_run(int(run_id)) or {}
    config_id = run.get("config_id") if run.get("stage") == "search" else None
    names = {c["id"]: c.get("name") or f"config {c['id']}" for c in session.store.configs(session.name, stage="search")}
    return describe_rating_effect(before, search_standings(session), config_id, int(run_id), float(value), names,
                                  config_headline(session, config_id))


def config_headline(session: "Session", config_id: int | None) -> str:
    """The headline of search config ``config_id`` in the session's standings now ("" without one)."""
    if config_id is None:
        return ""
    from bracket.standings import standings

    board = standings(session).boards.get("search")
    row = next((r for r in (board.rows if board else []) if r.config_id == config_id), None)
    return row.headline.text if row is not None and row.headline is not None else ""
