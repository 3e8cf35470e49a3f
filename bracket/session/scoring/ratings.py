"""Recording human scores: ratings (1–10, per run or per prompt) and pairwise choices.

Both are written to the store at once, in one transaction each, and both take effect at
the next read of the scores — the ranking and the next suggestion use them immediately.
"""

from __future__ import annotations

import math

from bracket.errors import BracketError
from bracket.session.store import Store

RATING_MIN, RATING_MAX = 1, 10
WINNERS = ("left", "right", "tie")


class RatingError(BracketError):
    """A rating or comparison that cannot be recorded."""


def _check_run(store: Store, session: str, run_id: int) -> None:
    run = store.get_run(int(run_id))
    if run is None or run["session"] != session:
        raise RatingError(f"Run {run_id} is not part of session {session}; pick a run from the table.")


def record_rating(store: Store, session: str, run_id: int, value: float, prompt_index: int | None = None,
                  step: int | None = None) -> int:
    """Store a 1–10 rating of a run (or of one prompt of it), at the step whose samples were shown."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise RatingError(f"A rating must be a number from {RATING_MIN} to {RATING_MAX}, got {value!r}.") from None
    if not math.isfinite(number) or not RATING_MIN <= number <= RATING_MAX:
        raise RatingError(f"A rating must be from {RATING_MIN} to {RATING_MAX}, got {value!r}.")
    _check_run(store, session, run_id)
    return store.add_rating(session, int(run_id), number, None if prompt_index is None else int(prompt_index),
                            None if step is None else int(step))


def record_comparison(store: Store, session: str, left_run_id: int, right_run_id: int, winner: str) -> int:
    """Store a blind pairwise choice: ``left``, ``right`` or ``tie``."""
    if winner not in WINNERS:
        raise RatingError(f"The choice must be one of {', '.join(WINNERS)}, got {winner!r}.")
    if int(left_run_id) == int(right_run_id):
        raise RatingError("A run cannot be compared with itself; pick two different runs.")
    _check_run(store, session, left_run_id)
    _check_run(store, session, right_run_id)
    return store.add_comparison(session, int(left_run_id), int(right_run_id), winner)
