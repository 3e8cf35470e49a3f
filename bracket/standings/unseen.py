"""A pick that rests on the person's verdict while configs they have not judged measured clearly better.

The order rule (``evidence``) keeps a judged config above an unjudged one unless the unjudged
one's worst case (its estimated parts at a rating of 1) still beats it: what nobody has seen
could be anything. So a config the person rated 4/10 can be the answer while configs nobody
looked at measured a far lower loss. The rule stays; the answer must not read as settled then.

:func:`unseen_better` writes the one sentence the verdict says instead of its confidence
(``bracket.stats.verdict``'s ``unsettled``), when the stage's first config was judged by the
person and full-length configs nobody judged measured a loss **clearly** lower than its own —
by the headline's rule (``headline.compare_loss``: the same loss figure, outside the seed-noise
half-width, so a difference inside seed noise is a tie and says nothing). The loss is said on
the headline's scale, a percentage against the stage's baseline (against the pick where the
baseline has no comparable loss):

    You rated it 4/10; 8 configs you have not rated measured 48–49 % lower validation loss than
    your baseline, beyond seed noise: rate them (Compare's "Next unrated" offers the best
    measured first) before trusting this answer.

(The "Next unrated" hint only while the stage's best measured config is one of them; else "in Compare".)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bracket.judge.combine import measured_score
from bracket.standings.evidence import human_value
from bracket.standings.headline import LossChange, compare_loss, percent_text, rating_text
from bracket.standings.interval import SeedNoise


def _judged(row: Any) -> bool:
    return any(human_value(run) is not None for run in row.runs)


def _span(changes: Sequence[float], words: str, against: str) -> str:
    """``48–49 % lower validation loss than your baseline`` (``higher`` or both ways where they lie so)."""
    low, high = min(changes), max(changes)
    if high < 0 or low > 0:  # one way: a range of percentages
        ends = sorted({percent_text(100 * abs(low)), percent_text(100 * abs(high))}, key=float)
        return f"{'–'.join(ends)} % {'lower' if high < 0 else 'higher'} {words} {against}"
    return f"from {percent_text(100 * high)} % higher to {percent_text(100 * abs(low))} % lower {words} {against}"


def _best_measured(rows: Sequence[Any]) -> Any:
    """The ranked row with the best mean measured score, the person left out: the config Compare's
    "Next unrated" offers first while nobody rated it (``bracket.judge.informative``)."""
    means = {}
    for row in rows:
        values = [v for run in row.runs if (v := measured_score(run, leave_out="human")) is not None]
        if row.rank is not None and values:
            means[id(row)] = (sum(values) / len(values), row.config_id)
    return min(means, key=means.__getitem__) if means else None


def _verdict_words(pick: Any) -> str:
    line = pick.headline
    if line is not None and line.rated is not None:
        return f"You rated it {rating_text(line.rated)}"
    if line is not None and line.rating is not None and not line.rating_estimated:
        return f"Your blind choices put it at {rating_text(line.rating)}"
    return "It stands first on your verdict"


def unseen_better(rows: Sequence[Any], noise: Mapping[str, SeedNoise]) -> str:
    """The sentence of the module docstring for a stage's ``rows`` (``ConfigRow``, best first, each
    with its runs and headline) and its seed ``noise`` (``headline.seed_noise``); "" when the first
    config was not judged by the person, or no unjudged config measured clearly better."""
    pick = next((row for row in rows if row.rank == 1), None)
    if pick is None or not _judged(pick):
        return ""
    better: list[tuple[Any, LossChange]] = []
    for row in rows:
        if row is pick or row.rank is None or not row.full_length or row.disqualified or _judged(row):
            continue
        change = compare_loss(row.runs, pick.runs, noise)
        if change is not None and not change.tie and change.change is not None and change.change < 0:
            better.append((row, change))
    if not better:
        return ""
    figure, words = better[0][1].figure, better[0][1].words
    better = [(row, change) for row, change in better if change.figure == figure]
    own = [row.headline.loss for row, _ in better if row.headline is not None]
    if len(own) == len(better) and all(loss is not None and loss.change is not None and loss.figure == figure
                                       for loss in own):
        span = _span([loss.change for loss in own if loss is not None and loss.change is not None], words,
                     "than your baseline")
    else:  # no baseline loss to say it against: against the pick itself
        span = _span([change.change for _, change in better if change.change is not None], words, "than it")
    count = f"{len(better)} config{'s' if len(better) != 1 else ''} you have not rated"
    offered = ("Compare's \"Next unrated\" offers the best measured first" if _best_measured(rows)
               in {id(row) for row, _ in better} else "in Compare")
    return (f"{_verdict_words(pick)}; {count} measured {span}, beyond {better[0][1].noise_words}: rate "
            f"{'them' if len(better) != 1 else 'it'} ({offered}) before trusting this answer")
