"""Score combination and the statistics over seeds, checked against scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from bracket.errors import BracketError
from bracket.judge.base import JudgeResult
from bracket.judge.combine import DEFAULT_WEIGHTS, check_weights_score, combine_scores, parse_weights, validate_weights
from bracket.stats import ConfigScores, summarise, summarise_config, verdict, welch_test


def test_combine_renormalises_over_judges_with_data():
    per_judge = {"loss": JudgeResult.scored(0.2), "human": JudgeResult.no_data("nobody rated"), "vlm": None,
                 "eval_loss": JudgeResult.scored(0.8)}
    combined = combine_scores(per_judge, {"loss": 1.0, "human": 2.0, "vlm": 1.0, "eval_loss": 3.0})
    assert combined.used == ["loss", "eval_loss"]
    assert combined.weights_used == pytest.approx({"loss": 0.25, "eval_loss": 0.75})
    assert combined.value == pytest.approx(0.25 * 0.2 + 0.75 * 0.8)
    assert not combined.disqualified


def test_combine_zero_weight_judge_is_not_used_and_no_data_gives_none():
    per_judge = {"loss": JudgeResult.scored(0.9), "human": JudgeResult.scored(0.1)}
    assert combine_scores(per_judge, {"loss": 0.0, "human": 1.0}).value == pytest.approx(0.1)
    empty = combine_scores({"human": JudgeResult.no_data("none")}, DEFAULT_WEIGHTS)
    assert empty.value is None and empty.used == [] and "no judge" in empty.reason


def test_combine_disqualification_wins():
    per_judge = {"loss": JudgeResult.disqualify("loss is nan at step 3"), "human": JudgeResult.scored(0.0)}
    combined = combine_scores(per_judge, DEFAULT_WEIGHTS)
    assert combined.disqualified and combined.value is None and "nan" in combined.reason


@pytest.mark.parametrize(
    "weights, message",
    [({"loss": 0.0, "human": 0}, "above 0"), ({"loss": -1.0}, "negative"), ({"loss": "2"}, "number"),
     ({"loss": float("nan")}, "number"), ({}, "above 0")],
)
def test_bad_weights_raise_bracket_error(weights, message):
    with pytest.raises(BracketError, match=message):
        validate_weights(weights)
    with pytest.raises(BracketError):
        combine_scores({"loss": JudgeResult.scored(0.5)}, weights)


def test_weights_that_leave_no_judge_able_to_score_the_session_are_refused():
    """loss=0,human=0 pass the parser (vlm and the LLM judges keep 1) but score nothing on an
    image preset without a judge server: the search would end with no winner."""
    quiet = parse_weights("loss=0,human=0")
    with pytest.raises(BracketError, match="every judge that can score this session weighs 0"):
        check_weights_score(quiet, sample_kind="image", judge_server=False)
    check_weights_score(quiet, sample_kind="image", judge_server=True)  # the VLM judge scores
    check_weights_score(quiet, sample_kind="text", judge_server=False)  # eval loss and task score LLM answers
    with pytest.raises(BracketError, match="human=0"):
        check_weights_score(parse_weights("loss=0,human=0,eval_loss=0,task=0"), sample_kind="text",
                            judge_server=False)
    check_weights_score(parse_weights("loss=0"), sample_kind="video", judge_server=False)  # people rate
    check_weights_score({}, sample_kind="image", judge_server=False)  # a session naming no weights: the defaults


def test_parse_weights():
    assert parse_weights("human=3, vlm=0")["human"] == 3.0
    assert parse_weights("")["loss"] == DEFAULT_WEIGHTS["loss"]
    with pytest.raises(BracketError, match="name=number"):
        parse_weights("beauty=2")
    with pytest.raises(BracketError, match="number"):
        parse_weights("loss=abc")


def test_summary_matches_scipy_t_interval():
    scores = [0.31, 0.27, 0.35, 0.29]
    s = summarise_config(ConfigScores(1, "a", "search", scores + [None, float("nan")]))
    assert s.n == 4 and s.mean == pytest.approx(np.mean(scores))
    assert s.std == pytest.approx(np.std(scores, ddof=1))
    low, high = scipy_stats.t.interval(0.95, df=3, loc=np.mean(scores), scale=scipy_stats.sem(scores))
    assert (s.ci_low, s.ci_high) == (pytest.approx(low), pytest.approx(high))
    one = summarise_config(ConfigScores(2, "b", "search", [0.4]))
    assert one.n == 1 and one.std is None and one.ci_low is None


def test_welch_against_scipy_and_verdict_names_the_significant_winner():
    best = [0.10, 0.12, 0.11, 0.09]
    runner = [0.30, 0.33, 0.29, 0.31]
    base = [0.50, 0.52, 0.49]
    report = summarise([ConfigScores(3, "base", "baseline", base), ConfigScores(1, "good", "search", best),
                        ConfigScores(2, "ok", "curated", runner), ConfigScores(4, "never-ran", "search", [])])
    assert report.best.config_id == 1 and report.runner_up.config_id == 2
    expected = scipy_stats.ttest_ind(best, runner, equal_var=False)
    assert report.vs_runner_up.p_value == pytest.approx(expected.pvalue)
    assert report.vs_runner_up.t == pytest.approx(expected.statistic)
    assert report.vs_runner_up.significant and report.vs_baseline.significant
    assert [s.config_id for s in report.summaries] == [1, 2, 3, 4]
    sentence = verdict(report)
    assert "'good'" in sentence and "significant at 95%" in sentence and "baseline" in sentence
    assert sentence.count(".") >= 1 and "\n" not in sentence


def test_not_significant_and_single_seed_verdicts():
    close = summarise(
        [ConfigScores(1, "a", "search", [0.30, 0.20, 0.40]),
         ConfigScores(2, "b", "search", [0.32, 0.25, 0.41])]
    )
    assert not close.vs_runner_up.significant and "not significantly better" in verdict(close)
    single = summarise([ConfigScores(1, "a", "search", [0.2]), ConfigScores(2, "b", "baseline", [0.3])])
    assert single.vs_runner_up.p_value is None
    assert any("one seed" in note for note in single.notes)
    assert "no significance claim is possible" in verdict(single)
    # a newcomer reads "score 0.200 ... ahead of 'b' (0.300)": the sentence says which way is better
    assert "ahead of 'b' (score 0.300; lower scores are better)" in verdict(single)
    # the standings' reading, the one people see: each config by its headline (issue 43: not a 1–10
    # rescale within the session)
    from types import SimpleNamespace

    from bracket.standings.quality import HeadlineReading

    lines = {1: SimpleNamespace(text="12 % lower validation loss than your baseline, ± 3 %"),
             2: SimpleNamespace(text="your baseline (validation loss 0.1146)")}
    said = verdict(single, reading=HeadlineReading(lines))
    assert ("(12 % lower validation loss than your baseline, ± 3 %; 1 seed), ahead of 'b' "
            "(your baseline (validation loss 0.1146))") in said, said
    assert "no winner" in verdict(summarise([]))


def test_welch_with_no_spread():
    a = summarise_config(ConfigScores(1, "a", "search", [0.1, 0.1]))
    b = summarise_config(ConfigScores(2, "b", "search", [0.2, 0.2]))
    test = welch_test(a, b)
    assert test.significant and test.p_value == 0.0 and math.isfinite(test.p_value)
    assert not welch_test(a, a).significant


def test_a_disqualified_config_ranks_below_a_valid_one_with_the_same_mean():
    from bracket.stats import ConfigScores, summarise

    report = summarise([ConfigScores(1, "diverged", "baseline", [1.0], disqualified=1),
                        ConfigScores(2, "worst-valid", "curated", [1.0]),
                        ConfigScores(3, "good", "curated", [0.2])])
    assert [s.name for s in report.summaries] == ["good", "worst-valid", "diverged"]


def test_interval_is_clipped_to_the_score_range_everywhere():
    low, high = scipy_stats.t.interval(0.95, df=1, loc=0.05, scale=0.05)  # two seeds: t = 12.7
    assert low < 0.0
    s = summarise_config(ConfigScores(1, "a", "search", [0.0, 0.1]))
    assert s.ci_low == 0.0 and s.ci_high == pytest.approx(high)
    top = summarise_config(ConfigScores(2, "b", "search", [0.9, 1.0]))
    assert top.ci_high == 1.0 and 0.0 < top.ci_low < 0.9
    assert "95 % CI 0.000 – " in verdict(summarise([ConfigScores(1, "a", "search", [0.0, 0.1])]))


@pytest.mark.parametrize("seeds", [[0.3], [0.3, 0.3]])
def test_an_exact_tie_is_said_as_a_tie_not_a_win(seeds):
    report = summarise([ConfigScores(1, "a", "search", seeds), ConfigScores(2, "b", "search", list(seeds))])
    said = verdict(report)
    assert "tied with" in said and "ahead of" not in said and "beats" not in said
    apart = verdict(summarise([ConfigScores(1, "a", "search", [0.3]), ConfigScores(2, "b", "search", [0.31])]))
    assert "ahead of 'b'" in apart and "tied with" not in apart


def test_a_config_ranked_first_by_the_person_is_never_said_to_beat_a_better_scored_one():
    """The standings may put first a config the person rated best while its combined score is worse
    (``order``): the sentence then says so, never "beats … significant" (Welch's test is two-sided:
    significant there meant significantly worse) nor "better than the baseline"."""
    rated = ConfigScores(1, "rated", "search", [0.40, 0.41, 0.42])
    scored = ConfigScores(2, "scored", "search", [0.10, 0.11, 0.12])
    base = ConfigScores(3, "base", "baseline", [0.20, 0.21, 0.22])

    def person_first(summaries):
        return sorted(summaries, key=lambda s: s.config_id)

    report = summarise([rated, scored, base], order=person_first)
    assert report.best.name == "rated" and report.vs_runner_up.significant
    said = verdict(report)
    assert "beats" not in said and "significantly better" not in said
    assert "ranked ahead of 'scored'" in said and "by your ratings or choices" in said
    plain = verdict(summarise([rated, scored, base]))  # the score's own order: the claim stands
    assert "it beats the runner-up 'base'" in plain and "significantly better than the baseline" in plain


def test_a_person_ranked_winner_worse_than_the_baseline_says_so():
    rated = ConfigScores(1, "rated", "search", [0.40, 0.41, 0.42])
    base = ConfigScores(3, "base", "baseline", [0.20, 0.21, 0.22])
    other = ConfigScores(2, "other", "search", [0.45, 0.46, 0.47])
    report = summarise([rated, other, base], order=lambda s: sorted(s, key=lambda x: x.config_id))
    said = verdict(report)
    assert "worse than the baseline's" in said and "better than the baseline" not in said
