"""The perfect rater: a session whose objective *is* the rater's taste (the ``oracle`` mode).

The steering benchmark (:mod:`bench.steering`) asks whether ratings steer the search towards
what a simulated person likes. Its ``oracle`` mode is the upper bound of any rating mechanism
for this search: as if a perfect person rated every run the moment it ended, without noise,
and Bracket scored runs by that alone. The runs train on the taste's own surface
(:attr:`bench.raters.Taste.surface`) as their loss landscape, nobody rates, and the session's
loss judge does the rest; the records carry the same figures as the other modes, computed
against the taste (trials to within 5 % of the taste's optimum, the pick's taste ratio).

The landscape trainer reads it through its landscape variable as ``oracle:<taste>``
(:func:`landscape_for`). What the session sees, against :meth:`bench.raters.Taste.value`:

* **divergence**: the same. A run diverges wherever the *loss* landscape diverges (the rater
  sees such a run as broken, ``Taste.value`` gives it the worst value) and wherever the taste's
  surface itself diverges; the session disqualifies it and scores it worst;
* **noise**: none. The surface's seed and per-step noise are set to 0 (a perfect rater);
* **where it differs**: the loss judge scores a run by its *smoothed* final loss (an EMA over
  roughly the last ten steps, :mod:`bracket.judge.loss`), not the last step's value that
  ``Taste.value`` uses, so a run still falling at its end (a too-low rate) scores a little
  worse than its taste value; the order of two configs can differ only where they are that close.
"""

from __future__ import annotations

from dataclasses import replace

from bench.landscape_trainer import Landscape
from bench.raters import TASTES, Taste

PREFIX = "oracle:"


def landscape_name(taste: str) -> str:
    """The landscape variable's value that trains on ``taste``'s own surface."""
    return PREFIX + taste


def oracle_landscape(taste: Taste) -> Landscape:
    """``taste``'s surface as a loss landscape: no noise, and diverging where the loss does too."""
    return replace(taste.surface, name=landscape_name(taste.name), seed_sigma=0.0, step_sigma=0.0,
                   diverges_with=taste.loss)


def landscape_for(name: str) -> Landscape | None:
    """The landscape an ``oracle:<taste>`` name means, None for any other name."""
    taste = TASTES.get(name[len(PREFIX):]) if name.startswith(PREFIX) else None
    return oracle_landscape(taste) if taste is not None else None
