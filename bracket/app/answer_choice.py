"""What a person decides about a session's answer after it ran: the judges' weights and the pick.

* :func:`set_weights` — new judge weights for a session (``vlm=0``: the one click on Results for
  a judge that agrees with the person no better than chance, and ``python -m bracket weights``):
  read by the one weights parser (``bracket.judge.combine.parse_weights``) over the session's
  weights, refused like Start refuses them when no judge that can score the session is left,
  then stored in the session's settings. Scores are recomputed from the store on every read,
  so the leaderboard, the winner, ``status``, the report and the next proposals follow at once.
* :func:`set_pick` — a config on the front of fidelity against flexibility as the answer
  (``bracket.standings.front``; ``python -m bracket pick``), or the winner again; stored in the
  session's settings (``SearchSettings.pick``), so ``status``, the report, ``export`` and
  ``promote`` follow it.

Both write the session row only (its settings), never a run; a read-only store refuses them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bracket.errors import BracketError
from bracket.judge.combine import check_weights_score, parse_weights
from bracket.session.scoring import effective_weights

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session import Session


def _store(session: "Session", **changes: Any) -> None:
    """Store ``changes`` in ``session``'s settings and put them on its live settings object (which
    the running search's scoreboard shares)."""
    import dataclasses

    session.store.require_writable()
    changed = dataclasses.replace(session.settings, **changes)
    session.store.update_session(session.name, settings=changed.to_dict())
    for name, value in changes.items():
        setattr(session.settings, name, value)


def set_weights(session: "Session", given: str | dict[str, Any]) -> dict[str, float]:
    """Lay ``given`` (``"vlm=0"`` or judge -> weight) over ``session``'s weights and store them;
    returns the weights now in force."""
    weights = parse_weights(given, base=effective_weights(session.settings.weights))
    check_weights_score(weights, sample_kind=session.trainer.sample_kind,
                        judge_server=bool((session.settings.vlm or {}).get("base_url")))
    _store(session, weights=weights)
    return weights


def set_pick(session: "Session", config: str | int | None) -> str:
    """Make ``config`` (a name or id) the answer — it must stand on the front of fidelity against
    flexibility now — or, with None, "" or the winner's own name, the winner again. Returns what
    the answer is now, in one sentence."""
    from bracket.standings import standings

    table = standings(session)
    front = table.front
    if config in (None, ""):
        _store(session, pick=None)
        return "The answer is the winner by combined score again."
    if front is None:
        raise BracketError("No config has likeness and prompt-following scores yet, so there is no front to pick "
                           "from; the answer is the winner.")
    wanted = str(config)
    point = next((p for p in front.points if p.name == wanted or str(p.config_id) == wanted), None)
    if point is None:
        names = ", ".join(p.name for p in front.on_front)
        raise BracketError(f"{wanted!r} is not a config of the {front.stage} stage with both scores; pick one on "
                           f"the front: {names}.")
    if not point.on_front:
        raise BracketError(f"{point.name!r} is not on the front: {', '.join(point.beaten_by)} beat it on both "
                           f"likeness and prompt-following; pick one on the front: "
                           f"{', '.join(p.name for p in front.on_front)}.")
    if point.config_id == front.best_id:
        _store(session, pick=None)
        return f"The answer is the winner {point.name!r} again."
    _store(session, pick=point.config_id)
    return (f"The answer is now {point.name!r} (likeness {point.fidelity:.3g}, prompt-following "
            f"{point.flexibility:.3g}); status, the report and export follow it.")
