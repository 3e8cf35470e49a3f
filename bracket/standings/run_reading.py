"""One run's reading: its side of its config's headline, without an interval.

A headline's ``±`` (``bracket.standings.headline``) is the interval of a **config's** mean over
its seeds against the baseline; the same formula over one run gives a wider number (``± 14 %`` per
seed where the config reads ``± 12 %``), and two numbers for one config read as two intervals of
one thing. So a run says what its own seed measured against the baseline and no interval:
``this seed: 3.1 % lower validation loss than your baseline; rated 8/10 by you``; the interval,
and whether the difference is a tie, are its config's (the leaderboard row, ``status``'s
best-step line, the report). Everything else in the run's headline (ratings, judges) reads as it
does there.
"""

from __future__ import annotations

from bracket.standings.headline import Headline

#: what opens a run's loss comparison: it is one seed's, not the config's
SEED_WORDS = "this seed:"


def _percent(value: float) -> str:
    """Two significant places, as a headline writes a percentage (``12``, ``3.4``)."""
    return f"{value:.0f}" if abs(value) >= 9.5 else f"{value:.1f}"


def run_reading(line: Headline | None) -> str:
    """A run's headline ``line`` with its loss comparison said as its own seed's, without the
    ``±`` and tie that belong to its config ("" without a headline)."""
    if line is None:
        return ""
    loss = line.loss
    if loss is None or loss.change is None or loss.margin is None or loss.is_baseline:
        return line.text  # no interval in it: the baseline's own loss, or a loss without a baseline
    rest = line.text.split("; ", 1)[1] if "; " in line.text else ""  # the loss comparison comes first
    if loss.change == 0:
        own = f"{SEED_WORDS} {loss.words} equal to your baseline's"
    else:
        word = "lower" if loss.change < 0 else "higher"
        own = f"{SEED_WORDS} {_percent(100 * abs(loss.change))} % {word} {loss.words} than your baseline"
    return "; ".join(t for t in (own, rest) if t)
