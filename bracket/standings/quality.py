"""Two readings of a score for people.

* :class:`HeadlineReading` — what a config achieved, in words that do not move when other runs
  arrive (``bracket.standings.headline``): the verdict sentence says every config by it, as the
  leaderboards, ``status``, the report and the export header do.
* ``quality`` — the internal combined score (in [0, 1], lower is better, normalised among the
  stage's runs) on a 1–10 scale, higher is better: ``quality = 10 − 9 × score``. It moves when
  other runs arrive, so it is shown only where a score's *movement* is the point — what a rating
  changed (``bracket.app.rating_effect``), why a config was proposed, the Search tab's trial table
  and the score plots — never as what a config achieved.
"""

from __future__ import annotations

from typing import Any

#: the scale's ends: the worst and the best quality (the 1–10 rating scale)
QUALITY_MIN, QUALITY_MAX = 1.0, 10.0
#: how a table header or an axis names the reading
QUALITY_LABEL = "quality (1–10, higher is better)"


def quality(score: float) -> float:
    """A lower-is-better score in [0, 1] as a quality on the 1–10 scale, higher is better."""
    return QUALITY_MAX - score * (QUALITY_MAX - QUALITY_MIN)


def quality_text(score: float | None, empty: str = "") -> str:
    """``"7.35"``: a score as a person reads it (two decimals: 0.0022 of a score); ``empty`` for none."""
    return empty if score is None else f"{quality(score):.2f}"


def quality_interval(low: float | None, high: float | None, empty: str = "") -> str:
    """A score interval (clipped to [0, 1] where scores live) as a quality interval, lower end
    first: the score interval ``0.180 – 0.240`` reads ``7.84 – 8.38``."""
    if low is None or high is None:
        return empty
    low, high = max(0.0, min(1.0, low)), max(0.0, min(1.0, high))
    return f"{quality(high):.2f} – {quality(low):.2f}"


class QualityReading:
    """The reading :func:`bracket.stats.verdict` writes its numbers in (passed by the standings)."""

    name = "quality"
    better = "higher is better"

    @staticmethod
    def number(score: float) -> str:
        return quality_text(score)

    @staticmethod
    def interval(low: float | None, high: float | None) -> str:
        return quality_interval(low, high)


class HeadlineReading:
    """The reading the standings pass :func:`bracket.stats.verdict`: each config said by its
    headline (``bracket.standings.headline``), never by a number that moves with other runs."""

    name = "headline"
    better = ""

    def __init__(self, lines: "dict[int, Any]") -> None:
        self.lines = lines

    def _text(self, summary: Any) -> str:
        line = self.lines.get(summary.config_id)
        return line.text if line is not None else "not scored yet"

    def describe(self, summary: Any) -> str:
        seeds = f"{summary.n} seed{'s' if summary.n != 1 else ''}"
        return f"{self._text(summary)}; {seeds}"

    def brief(self, summary: Any) -> str:
        return self._text(summary)
