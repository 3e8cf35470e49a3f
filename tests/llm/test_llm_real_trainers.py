"""End to end on the CPU: Axolotl, torchtune and Unsloth really train the tiny Llama.

Each test runs ``python -m bracket run --preset <id>`` (Bracket's own commands and configs,
``device=cpu`` through the preset's field), then reads back what a person would see: the
run's loss (and eval-loss) tags, the generations of the post-run step, and the Compare grid
built from them. The trainer venvs come from ``./install.sh --llm-trainers``; without one,
its test skips and says so. The tiny model is built once per pytest session (``tiny_llm``).

Each search also runs the task judges: the run answers the held-out rows of the eval split
(task metrics against their references) and a stand-in judge model (an OpenAI-compatible
server on localhost, ``tests/judge/stand_in_server.py``) grades the answers; the Axolotl
search makes two runs, so its runs are also compared pairwise (Bradley-Terry strengths).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bracket.app.manager import SessionManager
from bracket.session.scoring import read_scalars
from tests.judge import stand_in_server
from tests.llm import tiny_model
from tests.llm.llm_helpers import trainer_venv_python, write_alpaca

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = ("Add 2 and 3.", "Name a colour.")
#: 4 steps at the reference batch of 8 = 8 optimizer steps of 2 x 2
RUN_ARGS = ("--seeds", "1", "--steps", "4", "--search", "random", "--no-warm-start",
            "--no-lr-bracket", "--bound", "optimizer=adamw_torch", "--bound", "effective_batch=4:4",
            "--bound", "lora_r=8:8", "--quiet")


def _python_or_skip(name: str) -> Path:
    python = trainer_venv_python(name)
    if python is None:
        pytest.skip(f"vendor/{name}/.venv is missing: run ./install.sh --llm-trainers to test {name} "
                    "for real")
    return python


def _run_search(tmp_path: Path, preset: str, fields: dict[str, str], budget: int = 1) -> dict:
    """``budget`` real runs through the CLI, judged by the stand-in judge server; returns the
    last run's record, every run's score and the manager."""
    runs_dir = tmp_path / "runs"
    judge = stand_in_server.start()
    data = write_alpaca(tmp_path / "alpaca.jsonl", rows=40)
    sets = [f"{k}={v}" for k, v in {"dataset": str(data), "device": "cpu", "sequence_len": "256",
                                     "eval_size": "8", "max_new_tokens": "12", **fields}.items()]
    command = [sys.executable, "-m", "bracket", "run", "--preset", preset, "--name", "e2e",
               "--prompts", "\n".join(PROMPTS), "--budget", str(budget), *RUN_ARGS,
               "--judge-url", judge.url(), "--judge-model", "stand-in", "--judge-repeats", "1"]
    for item in sets:
        command += ["--set", item]
    env = dict(os.environ, BRACKET_RUNS_DIR=str(runs_dir), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    try:
        result = subprocess.run(command, cwd=ROOT, env=env, timeout=1500 * budget, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    finally:
        judge.shutdown()
    logs = "\n".join(p.read_text(errors="replace")[-4000:] for p in sorted(runs_dir.glob("e2e/**/*.log")))
    assert result.returncode == 0, result.stdout[-3000:] + logs
    manager = SessionManager(runs_dir)
    manager.open(runs_dir / "e2e")
    runs = [r for r in manager.snapshot().runs if r["kind"] != "setup"]
    assert len(runs) == budget
    for run in runs:
        assert run["status"] == "done", f"{run['failure_reason']}\n{result.stdout[-3000:]}\n{logs}"
        assert run["score"] is not None
    session = manager.session
    scores = session.scores(session.store.runs(session.name))
    return {"run": runs[-1], "runs": runs, "manager": manager, "scores": scores}


def _assert_task_judges(found: dict, pairwise: bool = False) -> None:
    """Held-out answers measured against the eval split's references, graded by the stand-in."""
    for run in found["runs"]:
        folder = Path(run["run_dir"])
        held = [json.loads(line) for line in (folder / "data" / "eval.jsonl").read_text().splitlines()]
        answers = json.loads(next(folder.glob("**/heldout_answers.json")).read_text())
        assert [a["reference"] for a in answers] == [r["output"] for r in held]
        assert all(isinstance(a["completion"], str) for a in answers)
        score = found["scores"][run["id"]]
        task = score.details["task"]
        assert task["answers"] == len(held) and 0.0 <= task["rouge_l"] <= 1.0
        assert score.judges["task"] == pytest.approx(1.0 - task["quality"])
        llm = score.details["llm_judge"]
        assert 2 <= llm["criteria_means"]["correctness"] <= 9  # the stand-in gives 9 (matches) or 2
        assert score.judges["llm_judge"] is not None
        if pairwise:
            assert llm["comparisons"] == len(held) and "bt_strength" in llm


def _assert_losses(run: dict, loss_tag: str, eval_tag: str | None) -> None:
    scalars = read_scalars(Path(run["run_dir"]) / "logs" / "tb", "**/events.out.tfevents.*")
    losses = [value for _, value in scalars[loss_tag]]
    assert len(losses) >= 4 and all(math.isfinite(v) and v > 0 for v in losses), scalars.get(loss_tag)
    # a random 2-layer model on a vocabulary of a few hundred tokens starts near ln(V)
    assert losses[0] < 2 * math.log(1000)
    if eval_tag:
        evals = scalars[eval_tag]
        assert len(evals) >= 2 and all(math.isfinite(v) for _, v in evals), evals


def _assert_answers_reach_compare(found: dict) -> None:
    run, manager = found["run"], found["manager"]
    generations = json.loads(next(Path(run["run_dir"]).glob("**/generations.json")).read_text())
    assert [g["prompt"] for g in generations] == list(PROMPTS)
    grid = manager.compare.grid([run["id"]])
    assert grid.sample_kind == "text" and grid.prompts == list(PROMPTS)
    cells = [row[0] for row in grid.rows]
    assert [c.kind for c in cells] == ["text", "text"]
    assert [c.text for c in cells] == [g["completion"] for g in generations]
    assert [c.seed for c in cells] == [g["seed"] for g in generations]
    assert any(c.text.strip() for c in cells), cells


@pytest.mark.slow
def test_axolotl_trains_the_tiny_model_on_cpu(tmp_path, tiny_llm):
    _python_or_skip("axolotl")
    found = _run_search(tmp_path, "axolotl-lora", {"base_model": str(tiny_llm)}, budget=2)
    _assert_losses(found["run"], "train/loss", "eval/loss")
    _assert_task_judges(found, pairwise=True)
    config = (Path(found["run"]["run_dir"]) / "axolotl.yml").read_text()
    assert "bf16: false" in config and "lora_mlp_kernel: false" in config
    _assert_answers_reach_compare(found)


@pytest.mark.slow
def test_torchtune_trains_the_tiny_model_on_cpu(tmp_path, tiny_llm):
    _python_or_skip("torchtune")
    recipe = tiny_model.torchtune_config(tiny_llm, tmp_path / "tiny_lora.yaml")
    found = _run_search(tmp_path, "torchtune-lora",
                        {"base_model": str(tiny_llm), "torchtune_config": str(recipe)})
    _assert_losses(found["run"], "loss", None)
    _assert_task_judges(found)
    _assert_answers_reach_compare(found)


@pytest.mark.slow
def test_unsloth_trains_the_tiny_model_on_cpu(tmp_path, tiny_llm):
    _python_or_skip("unsloth")
    found = _run_search(tmp_path, "unsloth-lora", {"base_model": str(tiny_llm), "quantize_base": "none"})
    _assert_losses(found["run"], "train/loss", "eval/loss")
    _assert_task_judges(found)
    _assert_answers_reach_compare(found)
