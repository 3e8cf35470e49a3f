"""The task judge (answers vs held-out references) and the held-out prompts it reads."""

from __future__ import annotations

import json

import pytest

from bracket.judge import references
from bracket.judge.task import answer_metrics, normalise, score_task
from bracket.trainer.llm import base as llm


def answers(*pairs):
    return [{"prompt_index": i, "reference": ref, "completion": out} for i, (out, ref) in enumerate(pairs)]


def test_exact_and_normalised_match():
    assert normalise("  The Answer: Paris! ") == "answer paris"
    figures = answer_metrics("Paris.", "paris")
    assert figures["exact"] == 0.0 and figures["normalised"] == 1.0
    assert answer_metrics("7", "7")["exact"] == 1.0
    assert answer_metrics("It is 7.", "7")["normalised"] == 0.0  # saying more is not a match


def test_token_f1_and_rouge_l_follow_the_reference():
    # unigram overlap 4 of 5 tokens each way -> F1 0.8; LCS "the cat sat mat" 4 -> 0.8 too
    same_words = answer_metrics("the cat sat on mat", "the cat sat under mat")
    assert same_words["token_f1"] == pytest.approx(0.8)
    assert same_words["rouge_l"] == pytest.approx(0.8)
    # the same words in reverse order: full unigram F1, but the longest common subsequence is 1 word
    reversed_words = answer_metrics("mat the on sat cat", "cat sat on the mat")
    assert reversed_words["token_f1"] == pytest.approx(1.0)
    assert reversed_words["rouge_l"] == pytest.approx(0.2)
    # words of any script count (rouge-score's own tokenizer would drop these)
    assert answer_metrics("größe straße", "größe straße")["token_f1"] == pytest.approx(1.0)
    assert answer_metrics("", "something")["token_f1"] == 0.0


def test_a_run_that_answers_better_scores_lower():
    good = score_task(answers(("5", "5"), ("Paris", "Paris."), ("a red apple", "a red apple")))
    half = score_task(answers(("5", "5"), ("Rome", "Paris."), ("a green pear", "a red apple")))
    bad = score_task(answers(("9", "5"), ("Rome", "Paris."), ("xyz", "a red apple")))
    assert good.score == pytest.approx(0.0)
    assert good.score < half.score < bad.score
    assert bad.score == pytest.approx(1.0)
    assert half.details["normalised"] == pytest.approx(1 / 3)
    assert half.details["answers"] == 3 and not half.details["structured"]
    assert [a["prompt_index"] for a in half.details["per_answer"]] == [0, 1, 2]


def test_structured_output_adherence():
    ref = json.dumps({"name": "Ada", "age": 36})
    result = score_task(answers(
        ('{"name": "Ada", "age": 36}', ref),                 # parses, has the keys
        ('```json\n{"name": "Bob", "age": 1, "x": 2}\n```', ref),  # fenced, extra key is fine
        ('{"name": "Ada"}', ref),                            # parses, misses "age"
        ("name: Ada, age: 36", ref),                         # does not parse
    ))
    assert result.details["structured"] is True
    assert result.details["json_valid"] == pytest.approx(0.75)
    assert result.details["json_keys"] == pytest.approx(0.5)
    quality = (result.details["normalised"] + result.details["token_f1"] + result.details["rouge_l"] + 0.5) / 4
    assert result.score == pytest.approx(1 - quality)


def test_no_references_is_no_data_not_an_error():
    assert score_task([]).score is None
    assert score_task([{"prompt_index": 0, "completion": "x", "reference": " "}]).score is None


def test_heldout_entries_per_format():
    alpaca = [{"instruction": "Add 1 and 2.", "input": "show work", "output": "3"},
              {"instruction": "No answer", "output": ""}, {"instruction": "Say hi", "output": "hi"}]
    entries = references.heldout_entries(alpaca, "alpaca")
    assert entries == [
        {"prompt_index": 0, "seed": references.HELDOUT_SEED, "prompt": "Add 1 and 2.", "input": "show work",
         "reference": "3"},
        {"prompt_index": 1, "seed": references.HELDOUT_SEED + 1, "prompt": "Say hi", "reference": "hi"}]
    chat = [{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "2+2?"},
                          {"role": "assistant", "content": "4"}, {"role": "user", "content": "and 3+3?"},
                          {"role": "assistant", "content": "6"}]}]
    (entry,) = references.heldout_entries(chat, "chat")
    assert entry["reference"] == "6" and entry["prompt"] == "and 3+3?"
    assert [m["content"] for m in entry["messages"]] == ["be brief", "2+2?", "4", "and 3+3?"]
    share = [{"conversations": [{"from": "human", "value": "hi?"}, {"from": "gpt", "value": "hello"}]}]
    (entry,) = references.heldout_entries(share, "sharegpt")
    assert entry["messages"] == [{"role": "user", "content": "hi?"}] and entry["reference"] == "hello"
    assert references.heldout_entries([{"text": "plain"}], "completion") == []
    assert len(references.heldout_entries([{"instruction": "q", "output": "a"}] * 40, "alpaca", limit=5)) == 5


def test_file_names_match_the_trainer_generation_step():
    assert (references.PROMPTS_FILE, references.ANSWERS_FILE) == (llm.HELDOUT_PROMPTS, llm.HELDOUT_ANSWERS)


def test_write_and_read_back(tmp_path):
    split = tmp_path / "eval.jsonl"
    split.write_text("".join(json.dumps({"instruction": f"q{i}", "output": f"a{i}"}) + "\n" for i in range(3)))
    written = references.write_heldout_prompts(split, "alpaca", tmp_path)
    assert written == tmp_path / references.PROMPTS_FILE
    assert [e["reference"] for e in json.loads(written.read_text())] == ["a0", "a1", "a2"]
    assert references.write_heldout_prompts(tmp_path / "missing.jsonl", "alpaca", tmp_path / "x") is None
    (tmp_path / "out" / "sample").mkdir(parents=True)
    (tmp_path / "out" / "sample" / references.ANSWERS_FILE).write_text(json.dumps([{"completion": "a0"}]))
    assert references.read_answers(tmp_path) == [{"completion": "a0"}]
    (tmp_path / "out" / "sample" / references.ANSWERS_FILE).write_text("{broken")
    assert references.read_answers(tmp_path) == []
