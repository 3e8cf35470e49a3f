"""An earlier session's search configs as its leaderboard ranks them: what ``--warm-start-from``
and the Setup tab's list of past sessions carry (``bracket.session.past.Ranking``).

It lives here, above the standings, because it reads the status view this package keeps in the
store (:mod:`bracket.status.view`) before it works the standings out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bracket.errors import BracketError
from bracket.standings import figures_text, standings
from bracket.status.view import kept_view, view_key


def past_ranking(folder: Path) -> list[tuple[str, str]]:
    """The search configs of the session in ``folder`` as its leaderboard ranks them now, best
    first (the winner first when it is a search config), each with its raw figures ("val loss
    0.41"): the order ``--warm-start-from`` carries (``bracket.session.past.Ranking``).

    Read from the standings ``python -m bracket status`` keeps in the session's store
    while they are current (``bracket.status.view``: its change key, with only the store
    opened), so the Setup tab's list of many past sessions costs a store query each; worked out
    (the session opened, its standings computed) only when that view is missing or stale."""
    kept = _kept_answer(folder)
    if kept is not None:
        return _ranking(kept)
    from bracket.session import Session

    session = Session.open(folder, validate=False)
    try:
        return _ranking(standings(session).to_dict())
    finally:
        session.close()


def _kept_answer(folder: Path) -> dict[str, Any] | None:
    """The standings (``Standings.to_dict``) of the status view kept in ``folder``, when current."""
    from bracket.session.store import open_session_store

    try:
        store, name = open_session_store(Path(folder))
    except BracketError:
        return None
    try:
        weights = ((store.get_session(name) or {}).get("settings") or {}).get("weights")
        view = kept_view(store, name, view_key(store, name, weights))
        return json.loads(view["table_json"]) if view is not None else None
    except (KeyError, TypeError, ValueError):  # a view of another shape: worked out instead
        return None
    finally:
        store.close()


def _ranking(answer: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, figures) of the search board's ranked configs in ``answer`` (``Standings.to_dict``),
    best first, the winner first when it is one of them."""
    board = (answer.get("stages") or {}).get("search") or {}
    rows = [r for r in board.get("rows") or [] if r.get("rank") is not None]
    winner = (answer.get("winner") or {}).get("config")
    rows.sort(key=lambda r: r["name"] != winner)  # stable: the rest keep the leaderboard's order
    return [(r["name"], figures_text(r.get("figures") or {})) for r in rows]
