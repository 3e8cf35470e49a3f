"""The LLM-as-judge against a stand-in OpenAI-compatible server on localhost."""

from __future__ import annotations

import logging
import random

import pytest

from bracket.judge.base import JudgeResult
from bracket.judge.human import bradley_terry
from bracket.judge.llm_judge import LlmJudge, parse_winner, score_llm_judge
from bracket.judge.server import JudgeServerConfig, ReplyError
from tests.judge import stand_in_server

API_KEY = "sk-judge-SECRET-777"
QUESTIONS = [("Add 2 and 3.", "5"), ("Capital of France?", "Paris"), ("Colour of grass?", "green")]


def run_answers(*completions):
    return [{"prompt_index": i, "prompt": q, "reference": ref, "completion": c}
            for i, ((q, ref), c) in enumerate(zip(QUESTIONS, completions))]


@pytest.fixture(scope="module")
def server():
    server = stand_in_server.start()
    yield server
    server.shutdown()


def judge(server, mode="ok", **options):
    config = JudgeServerConfig(server.url(mode), "judge-model", api_key=API_KEY,
                               **{"repeats": 2, "timeout_s": 5, "max_retries": 1, "backoff_s": 0.0, **options})
    return LlmJudge(config, sleep=lambda s: None)


def test_rubric_sends_question_reference_answer_and_scores_right_answers_better(server):
    start = len(server.requests)
    right = judge(server).score_answers(run_answers("5", "paris", "green"))
    wrong = judge(server).score_answers(run_answers("7", "Rome", "green"))
    assert right.score == pytest.approx(0.1)  # 9/10 on everything
    assert wrong.score == pytest.approx(1 - (2 + 2 + 9) / 30)
    assert wrong.details["criteria_means"]["correctness"] == pytest.approx((2 + 2 + 9) / 3)
    sent = server.requests[start:]
    assert len(sent) == 2 * 3 * 2  # two runs x three answers x two repeats
    assert all(r["auth"] == f"Bearer {API_KEY}" for r in sent)
    user = sent[0]["body"]["messages"][1]["content"]
    assert "Question:\nAdd 2 and 3." in user and "Reference answer:\n5" in user and "Model's answer:\n5" in user
    assert right.details["disagreements"] == [] and right.reason == ""


def test_disagreeing_repeats_are_flagged(server):
    result = judge(server, "vary").score_answers(run_answers("5"))
    assert result.details["disagreements"] == [0]
    assert "disagree" in result.reason
    assert result.score == pytest.approx(0.5)


@pytest.mark.parametrize("mode", ["down", "auth", "bad"])
def test_failing_server_leaves_run_unscored_and_never_logs_the_key(server, mode, caplog):
    caplog.set_level(logging.DEBUG)
    result = judge(server, mode).score_answers(run_answers("5", "Paris"))
    assert result.score is None and not result.disqualified
    assert "LLM judge could not grade held-out answer 0" in result.reason
    assert API_KEY not in result.reason and API_KEY not in caplog.text
    assert API_KEY not in repr(judge(server, mode))
    with pytest.raises(RuntimeError):
        judge(server, mode).compare(1, run_answers("5"), 2, run_answers("7"))


def test_pairwise_randomises_order_and_maps_verdicts_back(server):
    good, bad = run_answers("5", "Paris", "green"), run_answers("7", "Rome", "green")
    verdicts = []
    for seed in range(6):
        verdicts += judge(server).compare(10, good, 20, bad, rng=random.Random(seed))
    assert {v["shown_first"] for v in verdicts} == {"left", "right"}  # both orders were shown
    assert all(v["left_run_id"] == 10 and v["right_run_id"] == 20 for v in verdicts)
    by_prompt = {(v["prompt_index"], v["winner"]) for v in verdicts}
    assert by_prompt == {(0, "left"), (1, "left"), (2, "tie")}  # whatever side the good answer was shown on


def test_pairwise_verdicts_feed_the_human_bradley_terry_fit(server):
    runs = {1: run_answers("5", "Paris", "green"), 2: run_answers("5", "Rome", "blue"), 3: run_answers("1", "x", "y")}
    rng = random.Random(3)
    pairs = []
    for left, right in ((1, 2), (2, 3), (1, 3)):
        pairs += judge(server).compare(left, runs[left], right, runs[right], rng=rng)
    rubric = {run_id: judge(server, repeats=1).score_answers(answers) for run_id, answers in runs.items()}
    results = score_llm_judge([1, 2, 3], rubric, pairs)
    strengths = {i: results[i].details["bt_strength"] for i in runs}
    assert strengths[1] > strengths[2] > strengths[3]
    assert results[1].score < results[2].score < results[3].score
    # the same fit as the human judge's, from the same choices
    assert strengths[1] == pytest.approx(bradley_terry(pairs)[1].strength)
    assert (results[1].details["comparisons"] == 6 and results[1].details["wins"] == 5
            and results[1].details["ties"] == 1)


def test_merge_of_rubric_and_pairwise_parts():
    rubric = {1: JudgeResult.scored(0.2, {"criteria_means": {}}), 2: JudgeResult.no_data("server down")}
    pairs = [{"left_run_id": 1, "right_run_id": 2, "winner": "right"}]
    results = score_llm_judge([1, 2, 3], rubric, pairs)
    one = results[1]
    assert one.score == pytest.approx((0.2 + one.details["pairwise_score"]) / 2)
    assert results[2].score == pytest.approx(results[2].details["pairwise_score"])
    assert results[2].reason == "server down"
    assert results[3].score is None
    only_rubric = score_llm_judge([1], rubric, [], pairwise_weight=0.0)[1]
    assert only_rubric.score == pytest.approx(0.2)


def test_parse_winner_rules():
    assert parse_winner('{"winner": "a"}') == "A" and parse_winner('```json\n{"winner": "tie"}\n```') == "tie"
    for text in ('{"winner": "C"}', "A is better", '["A"]'):
        with pytest.raises(ReplyError):
            parse_winner(text)


@pytest.mark.parametrize(("flags", "message"), [
    (["--judge-url", "http://127.0.0.1:1/v1"], "needs a model name"),
    (["--judge-model", "m"], "needs the server's base URL"),
    (["--judge-url", "127.0.0.1:1/v1", "--judge-model", "m"], "must start with http"),
    (["--judge-url", "http://127.0.0.1:1/v1", "--judge-model", "m", "--judge-repeats", "0"], "from 1 to 20"),
    (["--weights", "task=-1"], "negative"),
    (["--weights", "llm_jduge=1"], "cannot read judge weight"),
])
def test_cli_judge_options_refuse_bad_input_with_one_error_line(tmp_path, capsys, flags, message):
    from bracket.cli import main

    code = main(["run", "--preset", "demo-cpu", "--out", str(tmp_path / "runs"), *flags])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error:") and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
