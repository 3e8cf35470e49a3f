"""The answer of a halving search whose budget paid for no full-length run.

Every launch of a halving search is charged to its budget, a killed one's too; the scheduler keeps
what the best config's way to full length takes (``Halving.keeps_reserve``), but where failures or
kills spent it anyway the search ends with every config stopped at a rung and none at full length.
That is an answer, not an error: the best config at the highest rung any config reached (its rung
score, ``SearchView.scores``, decides among those there), its loss there, and the command that
trains it to full length (``promote --run``: ``bracket.app.stages.train_winner``).
:func:`short_answer` is the one text ``run``, ``resume``, a worker, ``status`` and the app show
(a warning of the standings, ``Standings.budget_short``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bracket.search.halving import share_label
from bracket.standings.rungs import reached_full

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session import Session

#: config states of a search still going (a config trains, or waits at a rung for a promotion)
_OPEN = ("running", "paused")


def short_answer(session: "Session", runs: Sequence[Mapping[str, Any]], configs: Sequence[Mapping[str, Any]]) -> str:
    """The answer of a halving search that ended with no config at full length, "" for any other
    session (no halving, a config at full length, one still open, none at a rung)."""
    search = [c for c in configs if (c.get("stage") or "search") == "search"]
    if session.settings.halving is None or not search:
        return ""
    if any(str(c.get("status")) in _OPEN or reached_full(c) for c in search):
        return ""
    at_rung = [c for c in search if c.get("rung") is not None and int(c["rung"]) >= 0]
    if not at_rung:
        return ""
    view = session.view()
    top = max(int(c["rung"]) for c in at_rung)
    there = [c for c in at_rung if int(c["rung"]) == top]
    ranked = sorted(there, key=lambda c: (_score(view.scores, c["id"], top), c["id"]))
    best = ranked[0]
    own = [r for r in runs if r.get("config_id") == best["id"] and r.get("status") == "paused"]
    if not own:
        return ""
    run = min(own, key=lambda r: int(r.get("seed_index") or 0))
    step = int(run.get("pause_step") or 0)
    series = session.store.series([r["id"] for r in own])
    losses = [value for r in own if (value := _loss_at(series.get(r["id"], {}).get("loss"), step)) is not None]
    loss = f"loss {sum(losses) / len(losses):.4g}, " if losses else ""
    label = share_label(view.rungs.fractions()[top]) if view.rungs is not None else f"rung {top + 1}"
    return (f"no config reached full length within the budget: the best, {best['name']} (run {run['id']}), "
            f"stopped at {label} (step {step} of {run.get('max_steps') or session.settings.steps}; {loss}"
            f"{ranked.index(best) + 1} of {len(ranked)} there); to finish it, train it to full length with "
            f"`python -m bracket promote PATH --run {run['id']}`")


def _score(scores: Mapping[tuple[int, int], float], config_id: int, rung: int) -> float:
    value = scores.get((config_id, rung))
    return value if value is not None and math.isfinite(value) else math.inf


def _loss_at(loss: Any, step: int) -> float | None:
    """The training loss recorded at ``step`` (the last one at or before it), None without one."""
    values = [float(v) for s, v in loss or [] if s <= step and v is not None and math.isfinite(float(v))]
    return values[-1] if values else None
