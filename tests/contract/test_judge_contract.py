"""Every judge of ``JUDGE_NAMES`` (bracket/judge/combine.py) keeps the judges' contract: it has a
default weight, a scorer that returns ``JudgeResult``s with scores in [0, 1] on small real input,
and a paragraph in docs/JUDGES.md. A judge added to ``JUDGE_NAMES`` without all three fails here."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bracket.judge.base import JudgeResult
from bracket.judge.combine import DEFAULT_WEIGHTS, JUDGE_NAMES

JUDGES = Path(__file__).resolve().parents[2] / "docs" / "JUDGES.md"
CURVES = {1: [(s, 2.0 - 0.01 * s) for s in range(1, 101)], 2: [(s, 2.0 - 0.005 * s) for s in range(1, 101)]}


def _loss() -> Any:
    from bracket.judge.loss import score_loss_runs
    return score_loss_runs(CURVES)


def _eval_loss() -> Any:
    from bracket.judge.eval_loss import score_eval_loss_runs
    return score_eval_loss_runs(CURVES)


def _human() -> Any:
    from bracket.judge.human import score_human
    return score_human([1, 2], [{"run_id": 1, "prompt_index": None, "value": 8.0}],
                       [{"left_run_id": 1, "right_run_id": 2, "winner": "left"}])


def _vlm(tmp_path: Path) -> Any:
    from bracket.judge.server import JudgeServerConfig
    from bracket.judge.vlm import CRITERIA, VlmJudge

    image = tmp_path / "sample.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n")  # only read into a data URL; the fake server answers
    judge = VlmJudge(JudgeServerConfig("http://127.0.0.1:9/v1", "fake-vlm", repeats=2))
    judge.ask = lambda urls, prompt, video=False: dict.fromkeys(CRITERIA, 7.0)  # the server is what cannot run here
    return judge.score_run([(image, "a cat")])


def _task() -> Any:
    from bracket.judge.task import score_task
    return score_task([{"prompt_index": 0, "reference": "Paris", "completion": "Paris"},
                       {"prompt_index": 1, "reference": "4", "completion": "five"}])


def _llm_judge() -> Any:
    from bracket.judge.llm_judge import score_llm_judge
    return score_llm_judge([1, 2], {1: JudgeResult.scored(0.3), 2: None})


def _image(name: str) -> Callable[[], Any]:
    def score() -> Any:
        from bracket.judge.image_judges import score_figures
        return score_figures(name, {1: 0.7, 2: 0.4, 3: None})  # raw figures, as the image-judge worker gives
    return score


def _preference() -> Any:
    from bracket.judge.preference import score_preference
    return score_preference({1: {"a": 21.0, "b": 18.0}, 2: {"a": 20.0}, 3: {"c": 25.0}})  # per run, per prompt


SCORERS: dict[str, Callable[..., Any]] = {"loss": _loss, "eval_loss": _eval_loss, "human": _human, "vlm": _vlm,
                                          "task": _task, "llm_judge": _llm_judge, "likeness": _image("likeness"),
                                          "prompt_following": _image("prompt_following"),
                                          "image_quality": _image("image_quality"), "preference": _preference,
                                          "face_identity": _image("face_identity")}


def contract_problems(names: tuple[str, ...], weights: Mapping[str, float], scorers: Mapping[str, Callable[..., Any]],
                      judges_text: str, tmp_path: Path) -> list[str]:
    """What breaks the judges' contract, one line each."""
    problems = []
    for name in names:
        weight = weights.get(name)
        if not isinstance(weight, int | float) or weight < 0:
            problems.append(f"{name}: no default weight in DEFAULT_WEIGHTS")
        if not re.search(rf"\(`{re.escape(name)}`, `bracket/judge/", judges_text):
            problems.append(f"{name}: no paragraph in docs/JUDGES.md (**Name** (`{name}`, `bracket/judge/...`))")
        scorer = scorers.get(name)
        if scorer is None:
            problems.append(f"{name}: no scorer in this contract")
            continue
        got = scorer(tmp_path) if scorer.__code__.co_argcount else scorer()
        results = list(got.values()) if isinstance(got, Mapping) else [got]
        if not results or not all(isinstance(r, JudgeResult) for r in results):
            problems.append(f"{name}: the scorer returns no JudgeResult")
        elif not any(r.score is not None for r in results):
            problems.append(f"{name}: the scorer scored nothing on scorable input")
        elif not all(r.score is None or 0.0 <= r.score <= 1.0 for r in results):
            problems.append(f"{name}: a score outside [0, 1]")
    return problems


def test_every_judge_keeps_the_contract(tmp_path):
    assert set(SCORERS) == set(JUDGE_NAMES), "each judge of JUDGE_NAMES needs a scorer here"
    assert set(DEFAULT_WEIGHTS) == set(JUDGE_NAMES)
    assert contract_problems(JUDGE_NAMES, DEFAULT_WEIGHTS, SCORERS, JUDGES.read_text(encoding="utf-8"), tmp_path) == []


def test_the_contract_catches_a_judge_that_breaks_it(tmp_path):
    text = JUDGES.read_text(encoding="utf-8")
    assert contract_problems(("ghost",), DEFAULT_WEIGHTS, {}, text, tmp_path) == [
        "ghost: no default weight in DEFAULT_WEIGHTS",
        "ghost: no paragraph in docs/JUDGES.md (**Name** (`ghost`, `bracket/judge/...`))",
        "ghost: no scorer in this contract"]
    assert contract_problems(("loss",), DEFAULT_WEIGHTS, {"loss": lambda: {1: "0.4"}}, text, tmp_path) == [
        "loss: the scorer returns no JudgeResult"]
    assert contract_problems(("loss",), DEFAULT_WEIGHTS, {"loss": lambda: {1: JudgeResult.no_data("x")}}, text,
                             tmp_path) == ["loss: the scorer scored nothing on scorable input"]
