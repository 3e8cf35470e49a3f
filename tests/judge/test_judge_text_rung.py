"""The text judges on LLM runs paused at a rung: which runs need answers there, their answers
scored and kept for that step (the LLM judge's pairs against the other runs' answers at the
same step), waited for, and left out of the run's final answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bracket.judge.references import ANSWERS_FILE, PROMPTS_FILE
from bracket.judge.server import JudgeServerConfig
from bracket.session.scoring import TextJudges
from bracket.session.scoring.run_scores import verdicts_at
from bracket.session.scoring.text_judges import final_answers, rung_folder
from tests.judge import stand_in_server

REFERENCES = ["3", "5"]


@pytest.fixture
def server():
    server = stand_in_server.start()
    yield server
    server.shutdown()


def write_answers(folder: Path, completions: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    answers = [{"prompt_index": i, "prompt": f"Q{i}", "seed": 7000 + i, "reference": ref, "completion": answer}
               for i, (ref, answer) in enumerate(zip(REFERENCES, completions))]
    (folder / ANSWERS_FILE).write_text(json.dumps(answers))
    return folder


def paused_run(store, tmp_path, name: str) -> int:
    run_dir = tmp_path / name
    run_dir.mkdir()
    (run_dir / PROMPTS_FILE).write_text("[]")
    return store.add_run("s", kind="search", status="paused", pause_step=4, run_dir=str(run_dir),
                         loss=[(s, 1.0) for s in range(1, 5)])


def test_only_a_weighed_in_judge_asks_for_answers_and_only_once(store, tmp_path):
    run_id = paused_run(store, tmp_path, "a")
    without_server, with_server = TextJudges(store, "s", None), TextJudges(store, "s", JudgeServerConfig("u", "m"))
    run = store.get_run(run_id)
    assert without_server.needs_answers(run, 4, {"task": 1})
    assert not without_server.needs_answers(run, 4, {"task": 0, "llm_judge": 5})  # no server: no LLM judge
    assert with_server.needs_answers(run, 4, {"task": 0, "llm_judge": 5})
    assert not with_server.needs_answers(run, 4, {"task": 0, "llm_judge": 0})
    (tmp_path / "a" / PROMPTS_FILE).unlink()  # no references (completion datasets): nothing to judge
    assert not without_server.needs_answers(store.get_run(run_id), 4, {"task": 1})
    (tmp_path / "a" / PROMPTS_FILE).write_text("[]")

    without_server.judge_rung(run_id, 4, tmp_path / "nowhere", failure="generate answers at step 4 failed: exit 1")
    kept = verdicts_at(store.get_run(run_id), 4)["task"]
    assert kept["score"] is None and kept["reason"] == "generate answers at step 4 failed: exit 1"
    assert without_server.needs_answers(store.get_run(run_id), 4, {"task": 1})  # no score yet: asked again
    without_server.judge_rung(run_id, 4, write_answers(rung_folder(tmp_path / "a", 4), ["3", "5"]))
    assert verdicts_at(store.get_run(run_id), 4)["task"]["score"] == pytest.approx(0.0)
    assert not without_server.needs_answers(store.get_run(run_id), 4, {"task": 1})  # judged there: kept
    assert not without_server.rungs_pending() and without_server.wait_rungs(0)


def test_rung_answers_are_judged_against_the_same_steps_answers(server, store, tmp_path):
    judges = TextJudges(store, "s", JudgeServerConfig(server.url(), "m", repeats=1, timeout_s=5))
    right, wrong = paused_run(store, tmp_path, "right"), paused_run(store, tmp_path, "wrong")
    write_answers(tmp_path / "wrong" / "output" / "sample", ["3", "5"])  # a final answer of another launch
    judges.judge_rung(wrong, 4, write_answers(rung_folder(tmp_path / "wrong", 4), ["4", "6"]))
    assert judges.wait_rungs(60)
    judges.judge_rung(right, 4, write_answers(rung_folder(tmp_path / "right", 4), ["3", "5"]))
    assert judges.wait_rungs(60) and not judges.rungs_pending()
    at_rung = {run_id: verdicts_at(store.get_run(run_id), 4) for run_id in (right, wrong)}
    assert at_rung[right]["task"]["score"] == pytest.approx(0.0) and at_rung[wrong]["task"]["score"] > 0.5
    assert at_rung[right]["llm_judge"]["details"]["criteria_means"]["correctness"] == 9
    assert at_rung[wrong]["llm_judge"]["details"]["criteria_means"]["correctness"] == 2
    assert at_rung[wrong]["llm_pairs"] == []  # judged first: nobody at the step to compare with
    pairs = at_rung[right]["llm_pairs"]
    assert len(pairs) == 2 and all(p["winner"] == "left" and p["right_run_id"] == wrong for p in pairs)
    assert "llm_judge" not in store.get_run(right)["judges"]  # the run's own verdicts wait for its end
    # a finished run's answers are its final ones, never those of its rungs
    assert final_answers(tmp_path / "right") == []
    assert [a["completion"] for a in final_answers(tmp_path / "wrong")] == ["3", "5"]
    judges.drain(10)
