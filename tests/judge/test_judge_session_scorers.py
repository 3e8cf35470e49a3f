"""The session's judge scorers on stored runs: a video preset's .mp4 samples through the VLM
scorer, and LLM runs' held-out answers through the text judges, down to the combined score."""

from __future__ import annotations

import json
import logging

import pytest

from bracket.judge.references import ANSWERS_FILE
from bracket.judge.server import JudgeServerConfig
from bracket.session.process.execute import sample_record
from bracket.session.scoring import TextJudges, VlmScorer, collect_samples, score_runs
from bracket.trainer.prompts import parse_prompt_lines
from tests.judge import stand_in_server
from tests.judge.test_judge_vlm_video import BLUE, GREEN, RED, write_mp4

API_KEY = "sk-session-SECRET-99"
LOSS = [(1, 1.0), (2, 0.9), (3, 0.8)]


@pytest.fixture(scope="module")
def server():
    server = stand_in_server.start()
    yield server
    server.shutdown()


def add_run(store, run_dir, **values):
    return store.add_run("s", kind="search", status="done", run_dir=str(run_dir), loss=LOSS, finished_at=1.0,
                         **values)


def test_a_video_presets_samples_are_scored_from_their_frames(server, store, tmp_path):
    prompts = parse_prompt_lines("a green field --d 11\na green door --d 12")
    frames = {"steady": [[GREEN] * 9, [GREEN] * 9], "flicker": [[RED] * 3 + [GREEN] * 3 + [BLUE] * 3] * 2}
    ids = {}
    for name, clips in frames.items():
        sample_dir = tmp_path / name / "output" / "sample"
        sample_dir.mkdir(parents=True)
        for index, (prompt, colours) in enumerate(zip(prompts, clips)):
            write_mp4(sample_dir / f"wan_{20:06d}_{index:02d}_20261129120000_{prompt.seed}.mp4", colours)
        samples = [sample_record(s) for s in collect_samples(sample_dir)]
        assert {s["kind"] for s in samples} == {"video"}
        ids[name] = add_run(store, tmp_path / name, samples=samples)
    scorer = VlmScorer(store, "s", JudgeServerConfig(server.url(), "vlm", repeats=1, timeout_s=5), prompts)
    for run_id in ids.values():
        scorer.submit(run_id)
    scorer.drain(timeout=60)
    scores = score_runs(store.runs("s"))
    steady, flicker = scores[ids["steady"]], scores[ids["flicker"]]
    assert steady.details["vlm"]["criteria_means"]["temporal_consistency"] == 10
    assert flicker.details["vlm"]["criteria_means"]["temporal_consistency"] == 1
    assert [i["frames"] for i in steady.details["vlm"]["images"]] == [3, 3]  # first, middle, last
    assert steady.judges["vlm"] < flicker.judges["vlm"] and steady.value < flicker.value


def write_answers(folder, completions, references=("5", "Paris")):
    sample_dir = folder / "output" / "sample"
    sample_dir.mkdir(parents=True)
    answers = [{"prompt_index": i, "prompt": f"q{i}", "seed": 7000 + i, "reference": ref, "completion": c}
               for i, (c, ref) in enumerate(zip(completions, references))]
    (sample_dir / ANSWERS_FILE).write_text(json.dumps(answers))


def test_text_judges_score_runs_and_a_failing_server_never_fails_them(server, store, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    write_answers(tmp_path / "good", ["5", "paris"])
    write_answers(tmp_path / "bad", ["6", "Rome"])
    (tmp_path / "none").mkdir()
    good, bad, none = (add_run(store, tmp_path / n) for n in ("good", "bad", "none"))
    told: list[int] = []  # on_scored (``Session.changed``): once per judged run, after its record is stored

    def judged() -> None:
        told.append(sum(1 for r in store.runs("s") if "llm_judge" in (r.get("judges") or {})))

    down = TextJudges(store, "s", JudgeServerConfig(server.url("down"), "m", api_key=API_KEY, max_retries=1,
                                                    backoff_s=0.0, timeout_s=5), on_scored=judged)
    for run_id in (good, bad, none):
        down.after_run(run_id)
    down.drain(timeout=60)
    assert told == [1, 2]  # a failed judging is recorded and told too; the run without answers is not judged
    scores = score_runs(store.runs("s"))
    assert scores[good].judges["task"] == pytest.approx(0.0) and scores[bad].judges["task"] == pytest.approx(1.0)
    assert "task" not in scores[none].details  # no held-out answers: no data, not a failure
    assert scores[good].judges["llm_judge"] is None and "HTTP 500" in scores[good].details["llm_judge"]["reason"]
    assert "llm_judge" not in scores[good].used and scores[good].value is not None
    assert API_KEY not in caplog.text and API_KEY not in json.dumps(store.runs("s"))

    up = TextJudges(store, "s", JudgeServerConfig(server.url(), "m", repeats=1, timeout_s=5), pairs_per_run=1)
    for run_id in (good, bad):
        up.after_run(run_id)
    up.drain(timeout=60)
    scores = score_runs(store.runs("s"))
    # each run, when judged, was compared with the other on both prompts: 4 verdicts, all for "good"
    assert scores[good].details["llm_judge"]["wins"] == 4 and scores[bad].details["llm_judge"]["losses"] == 4
    assert scores[good].judges["llm_judge"] < scores[bad].judges["llm_judge"]
    assert scores[good].details["llm_judge"]["rubric_score"] == pytest.approx(0.1)
