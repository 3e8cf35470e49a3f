"""How sure are we that the best config is really best? Statistics over seeds with scipy.

Input is plain data: one :class:`ConfigScores` per config (id, name, kind, and the combined
scores of its runs, one per seed; lower is better). Output:

* :class:`ConfigSummary` per config: n, mean, sample standard deviation and a 95 % confidence
  interval of the mean from Student's t (``scipy.stats.t.interval``), None where n < 2,
  clipped to [0, 1] where scores live (:func:`clip_interval`) — so the app, ``status``, the
  report and the verdict show the same interval, written by :func:`interval_text`;
* Welch's t-test (``scipy.stats.ttest_ind(equal_var=False)``, two-sided) of the best config
  against the runner-up and against the baseline; :func:`verdict` says it only for a pair its
  ``reading`` cannot compare: the standings' reading decides tie vs ahead by the headline's one
  rule (``HeadlineReading.pair``), so the verdict never calls "level" what the headline calls ahead,
  or the reverse;
* :func:`verdict`: one sentence a person can act on, with its confidence. Where its reading
  cannot compare a pair and each config ran one seed it says plainly that no significance claim is
  possible (:data:`ONE_SEED_NOTE`); where it can, the reading's caveat says what the ± rests on.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

DEFAULT_CONFIDENCE = 0.95
#: the note of a report whose configs each ran one seed (the standings say what their ± rests on instead)
ONE_SEED_NOTE = "each config ran with one seed: no significance claim is possible"
#: combined scores live in [0, 1] (docs/SCORING.md): an interval never reaches past them
SCORE_RANGE = (0.0, 1.0)


@dataclass(frozen=True)
class ConfigScores:
    """The input for one config: its combined scores across seeds (None/NaN are ignored)."""

    config_id: int
    name: str
    kind: str
    scores: Sequence[float | None]
    #: runs a judge disqualified (NaN, divergence): they carry the worst score, 1.0, and a
    #: config with more of them ranks below one that merely scored as badly
    disqualified: int = 0


@dataclass(frozen=True)
class ConfigSummary:
    config_id: int
    name: str
    kind: str
    n: int
    mean: float | None
    std: float | None
    ci_low: float | None
    ci_high: float | None
    scores: tuple[float, ...] = ()
    disqualified: int = 0


@dataclass(frozen=True)
class WelchTest:
    """Welch's t-test of config ``a`` (the best) against config ``b``; p is two-sided."""

    a: ConfigSummary
    b: ConfigSummary
    t: float | None
    p_value: float | None
    significant: bool
    statement: str


@dataclass(frozen=True)
class StatsReport:
    summaries: list[ConfigSummary]
    best: ConfigSummary | None
    runner_up: ConfigSummary | None
    vs_runner_up: WelchTest | None
    vs_baseline: WelchTest | None
    confidence: float
    notes: list[str] = field(default_factory=list)


def clip_interval(low: float, high: float) -> tuple[float, float]:
    """``(low, high)`` clipped to :data:`SCORE_RANGE`: with two seeds Student's t interval is wide
    (t = 12.7) and would reach below 0 or above 1, where no score can be."""
    bottom, top = SCORE_RANGE
    return min(max(low, bottom), top), max(min(high, top), bottom)


def interval_text(low: float | None, high: float | None) -> str:
    """``"0.000 – 0.121"``, the one way an interval is shown (clipped as in the summaries);
    "" when there is none (one seed)."""
    if low is None or high is None:
        return ""
    low, high = clip_interval(low, high)
    return f"{low:.3f} – {high:.3f}"


def summarise_config(item: ConfigScores, confidence: float = DEFAULT_CONFIDENCE) -> ConfigSummary:
    """Mean, standard deviation (ddof=1) and t confidence interval (clipped to [0, 1]) of one config's scores."""
    values = tuple(float(v) for v in item.scores if v is not None and math.isfinite(v))
    n = len(values)
    mean = statistics.fmean(values) if n else None
    std = statistics.stdev(values) if n >= 2 else None
    ci_low = ci_high = None
    if n >= 2 and mean is not None and std is not None:
        if std == 0.0:
            ci_low = ci_high = mean
        else:
            from scipy import stats as scipy_stats  # here: importing it costs ~2 s, one seed needs none

            low, high = scipy_stats.t.interval(confidence, df=n - 1, loc=mean, scale=std / math.sqrt(n))
            ci_low, ci_high = clip_interval(float(low), float(high))
    return ConfigSummary(item.config_id, item.name, item.kind, n, mean, std, ci_low, ci_high, values,
                         item.disqualified)


def welch_test(a: ConfigSummary, b: ConfigSummary, alpha: float = 1 - DEFAULT_CONFIDENCE) -> WelchTest:
    """Welch's t-test of ``a`` against ``b``; needs two scores on each side."""
    if a.n < 2 or b.n < 2:
        statement = (
            f"{a.name!r} vs {b.name!r}: fewer than 2 seeds on a side, so no significance claim is possible"
        )
        return WelchTest(a, b, None, None, False, statement)
    if a.std == 0.0 and b.std == 0.0:  # no spread on either side: the t statistic is undefined
        if a.mean != b.mean:
            statement = (
                f"{a.name!r} vs {b.name!r}: every seed gave the same score on each side; "
                "the difference is exact"
            )
            return WelchTest(a, b, None, 0.0, True, statement)
        statement = f"{a.name!r} and {b.name!r} scored exactly the same on every seed"
        return WelchTest(a, b, None, 1.0, False, statement)
    from scipy import stats as scipy_stats

    result = scipy_stats.ttest_ind(a.scores, b.scores, equal_var=False)
    t, p = float(result.statistic), float(result.pvalue)
    significant = p < alpha
    word = "significant" if significant else "not significant (could be seed noise)"
    statement = f"{a.name!r} vs {b.name!r}: p = {p:.3g}, {word} at the {1 - alpha:.0%} level"
    return WelchTest(a, b, t, p, significant, statement)


def summarise(items: Iterable[ConfigScores], confidence: float = DEFAULT_CONFIDENCE, *,
              order: Callable[[list[ConfigSummary]], list[ConfigSummary]] | None = None) -> StatsReport:
    """Summaries sorted best first, and the best config tested against the runner-up and baseline.

    ``order`` may re-order the scored summaries (sorted by mean) — the standings pass the rule
    that a person's own judgement outranks an estimate (``bracket.standings.evidence``)."""
    summaries = [summarise_config(item, confidence) for item in items]
    scored = sorted((s for s in summaries if s.n), key=lambda s: (s.mean, s.disqualified, -s.n, s.config_id))
    if order is not None:
        scored = list(order(scored))
    unscored = [s for s in summaries if not s.n]
    notes: list[str] = []
    if unscored:
        notes.append(f"{len(unscored)} config(s) have no finished score and are not ranked")
    best = scored[0] if scored else None
    runner_up = scored[1] if len(scored) > 1 else None
    alpha = 1 - confidence
    vs_runner_up = welch_test(best, runner_up, alpha) if best and runner_up else None
    baselines = [s for s in scored if s.kind == "baseline"]
    vs_baseline = None
    if best and baselines and best.kind != "baseline":
        vs_baseline = welch_test(best, baselines[0], alpha)
    if scored and all(s.n < 2 for s in scored):
        notes.append(ONE_SEED_NOTE)
    return StatsReport(scored + unscored, best, runner_up, vs_runner_up, vs_baseline, confidence, notes)


class ScoreReading:
    """How :func:`verdict` writes a score: the internal one (lower is better, three decimals).
    The standings pass the reading people see (``bracket.standings.quality.HeadlineReading``)."""

    name = "score"
    better = "lower scores are better"

    @staticmethod
    def number(score: float) -> str:
        return f"{score:.3f}"

    @staticmethod
    def interval(low: float | None, high: float | None) -> str:
        return interval_text(low, high)


def _describe(s: ConfigSummary, reading: Any = ScoreReading) -> str:
    if hasattr(reading, "describe"):  # a reading that words a config itself (the standings' headline)
        return f"({reading.describe(s)})"
    if s.ci_low is not None:
        return (f"(mean {reading.name} {reading.number(s.mean)}, {s.n} seeds, "
                f"95 % CI {reading.interval(s.ci_low, s.ci_high)})")
    return f"({reading.name} {reading.number(s.mean)}, {s.n} seed{'s' if s.n != 1 else ''})"


def _brief(s: ConfigSummary, reading: Any) -> str:
    """The runner-up's figure in the verdict: ``quality 7.5; higher is better`` or the reading's own words."""
    if hasattr(reading, "brief"):
        return reading.brief(s)
    return f"{reading.name} {reading.number(s.mean)}; {reading.better}"


def steps_text(step: int | None, steps: int | None) -> str:
    """Where in its run the best config is best: " at step 16 of 20" (a best step before the end),
    " at 20 steps" (its run's last step), or "" when the step count is unknown."""
    if step is not None and steps is not None and step < steps:
        return f" at step {step} of {steps}"
    return f" at {steps} steps" if steps is not None else ""


def _worse(a: ConfigSummary, b: ConfigSummary) -> bool:
    """Whether ``a``'s mean combined score is worse (higher) than ``b``'s; False where either has none."""
    return a.mean is not None and b.mean is not None and a.mean > b.mean


def verdict(report: StatsReport, *, step: int | None = None, steps: int | None = None,
            reading: Any = ScoreReading, alone: str = "it is the only scored config, so it was compared with nothing",
            unsettled: str = "") -> str:
    """One sentence: which config is best, at which step, and how confident that is.

    ``steps`` is the winning run's step count and ``step`` its best step (``bracket.standings``
    passes both), so the sentence is the whole answer: this config, at this many steps, this sure.
    ``reading`` writes the numbers (:class:`ScoreReading`: the internal score; the standings pass
    the headline people read). ``alone``: what is said of a best config with no runner-up (a
    halving search says the others stand at a lower rung). ``unsettled``: why the order cannot be
    trusted yet (the standings: configs the person has not judged measured clearly better than a
    pick that rests on their verdict, ``bracket.standings.unseen``); it then takes the place of
    the confidence, so the answer never reads as settled.
    """
    best = report.best
    if best is None:
        return "No config has a finished score yet, so there is no winner."
    # scores live in [0, 1], lower is better (docs/SCORING.md)
    head = f"Best config is {best.name!r}{steps_text(step, steps)} {_describe(best, reading)}"
    if report.runner_up is None:
        return f"{head}; {alone}."
    if unsettled:
        return f"{head}, ranked ahead of {report.runner_up.name!r} ({_brief(report.runner_up, reading)}). {unsettled}."
    runner = report.runner_up
    test = report.vs_runner_up
    if best.mean == runner.mean and best.disqualified == runner.disqualified:
        return (head + f", tied with {runner.name!r} ({_brief(runner, reading)}): "
                "they score exactly the same, so nothing measured puts one ahead; either is the answer, "
                "or rerun both with more seeds (or rate their samples) to choose.")
    pair = getattr(reading, "pair", None)  # the headline's one tie rule (the standings' reading)
    said = pair(best, runner) if pair is not None else None
    if _worse(best, runner):  # ranked first by the person's verdicts, not by the score
        return (head + f", ranked ahead of {runner.name!r} ({_brief(runner, reading)}) by your ratings or choices"
                + _by_verdict(said, test) + "; rate or compare the two again to settle it"
                + _seed_caveat(best, said) + ".")
    if said is not None:
        tail = _pair_runner_up(runner.name, said)
    elif best.n < 2 and any(s.n >= 2 for s in report.summaries):
        return (
            head + f", ahead of {runner.name!r} ({_brief(runner, reading)}); "
            f"the winner was measured "
            "with one seed only (not confirmed), so treat it as a candidate: rerun it with more seeds."
        )
    elif test is None or test.p_value is None:
        return (
            head + f", ahead of {runner.name!r} ({_brief(runner, reading)}); "
            f"with fewer than "
            "2 seeds per config no significance claim is possible: rerun the top configs with more seeds."
        )
    elif test.significant:
        tail = (
            f"; it beats the runner-up {runner.name!r} "
            f"(p = {test.p_value:.3g}, significant at {report.confidence:.0%})"
        )
    else:
        tail = (
            f"; it is not significantly better than the runner-up {runner.name!r} "
            f"(p = {test.p_value:.3g} at {report.confidence:.0%}), so treat them as tied or add seeds"
        )
    base = next((s for s in report.summaries if s.kind == "baseline" and s.n), None)
    against = pair(best, base) if pair is not None and base is not None and best.kind != "baseline" else None
    if against is not None:
        tail += ", the baseline itself" if base is runner else _pair_baseline(against)
    elif report.vs_baseline is not None and report.vs_baseline.p_value is not None:
        base = report.vs_baseline.b
        if _worse(best, base):
            tail += f", though its combined score is worse than the baseline's (p = {report.vs_baseline.p_value:.3g})"
        else:
            word = "significantly" if report.vs_baseline.significant else "not significantly"
            tail += f", and is {word} better than the baseline (p = {report.vs_baseline.p_value:.3g})"
    elif best.kind == "baseline":
        tail += ", and it is the baseline itself"
    return head + tail + _seed_caveat(best, said, against) + "."


def _by_verdict(said: Any, test: WelchTest | None) -> str:
    """What the loss says of a best config the person's verdicts put ahead of a runner-up whose
    combined score is better: the headline's rule where the two share a loss figure (``said``),
    never a p that could read otherwise; Welch's p on the combined score only where they do not."""
    if said is None:
        p = f" (p = {test.p_value:.3g})" if test is not None and test.p_value is not None else ""
        return f", although its combined score is worse{p}"
    if said.tie:
        return f"; on {said.words} the two are level ({said.apart}: inside {said.noise})"
    if said.lower:
        return f"; its {said.words} is lower too, beyond {said.noise} ({said.apart})"
    return f", though its {said.words} is higher beyond {said.noise} ({said.apart})"


def _seed_caveat(best: ConfigSummary, *pairs: Any) -> str:
    """What the verdict adds of seeds: the reading's own caveat where a ± of a pair it read is the
    noise floor alone (nothing measured), else that a one-seed winner is not confirmed; "" otherwise."""
    caveat = next((said.caveat for said in pairs if said is not None and said.caveat), "")
    if caveat:
        return f"; {caveat}"
    if best.n < 2:
        return "; the winner was measured with one seed only (not confirmed): rerun it with more seeds"
    return ""


def _pair_runner_up(name: str, said: Any) -> str:
    """The verdict's words for the best config against the runner-up ``name``, decided by a
    reading's ``pair`` (``bracket.standings.interval.PairReading``: tie or ahead, the loss's words,
    ``"6.3 % apart, ± 10 %"``, what a tie lies inside)."""
    if said.tie:
        return (f"; it is level with the runner-up {name!r} on {said.words} ({said.apart}: inside {said.noise}), "
                "so treat them as tied or add seeds")
    if said.lower:
        return f"; it beats the runner-up {name!r} beyond {said.noise} ({said.words} {said.apart})"
    return (f"; it is ranked ahead of the runner-up {name!r} on its other parts, though its {said.words} is higher "
            f"beyond {said.noise} ({said.apart})")


def _pair_baseline(said: Any) -> str:
    """The verdict's words for the best config against the baseline, as :func:`_pair_runner_up`."""
    if said.tie:
        return f", and is level with the baseline on {said.words} ({said.apart}: inside {said.noise})"
    if said.lower:
        return f", and its {said.words} is lower than the baseline's beyond {said.noise} ({said.apart})"
    return f", though its {said.words} is higher than the baseline's beyond {said.noise} ({said.apart})"
