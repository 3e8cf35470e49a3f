"""Two readings of a score for people.

* :class:`HeadlineReading` — what a config achieved, in words that do not move when other runs
  arrive (``bracket.standings.headline``): the verdict sentence says every config by it, as the
  leaderboards, ``status``, the report and the export header do.
* ``quality`` — the internal combined score (in [0, 1], lower is better, normalised among the
  stage's runs) on a 1–10 scale, higher is better: ``quality = 10 − 9 × score``; the human judge's
  part on the person's own rating scale (``bracket.standings.parts.as_rating``). As the combined
  score it moves when other runs arrive, so the app never shows it as what a config achieved: the
  trial table, the plots, a rating's effect and a proposal's reasons say places
  (``bracket.app.places``) and the headline.
"""

from __future__ import annotations

from typing import Any, Callable

from bracket.standings.interval import PairReading

#: the scale's ends: the worst and the best quality (the 1–10 rating scale)
QUALITY_MIN, QUALITY_MAX = 1.0, 10.0


def quality(score: float) -> float:
    """A lower-is-better score in [0, 1] as a quality on the 1–10 scale, higher is better."""
    return QUALITY_MAX - score * (QUALITY_MAX - QUALITY_MIN)


class HeadlineReading:
    """The reading the standings pass :func:`bracket.stats.verdict`: each config said by its
    headline (``bracket.standings.headline``), never by a number that moves with other runs."""

    name = "headline"
    better = ""

    def __init__(self, lines: "dict[int, Any]", pair: Callable[[Any, Any], PairReading | None] | None = None) -> None:
        self.lines = lines
        self._pair = pair

    def _text(self, summary: Any) -> str:
        line = self.lines.get(summary.config_id)
        return line.text if line is not None else "not scored yet"

    def describe(self, summary: Any) -> str:
        seeds = f"{summary.n} seed{'s' if summary.n != 1 else ''}"
        return f"{self._text(summary)}; {seeds}"

    def brief(self, summary: Any) -> str:
        return self._text(summary)

    def pair(self, a: Any, b: Any) -> PairReading | None:
        """Whether ``a`` and ``b`` (summaries, ``a`` ranked first) are level, by the headline's one
        rule (``headline.pair_reading``, which the standings pass: an ``interval.PairReading``); None
        when they cannot be compared."""
        return self._pair(a, b) if self._pair is not None else None
