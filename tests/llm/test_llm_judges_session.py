"""An LLM search end to end with the task judges: held-out answers, task metrics, LLM-as-judge.

``bracket run --preset axolotl-lora`` runs for real (configs, the fixed eval split, the
post-run ``llm_generate.py`` step, scoring, standings); what cannot run here is faked: the
trainer and the model (the fake Axolotl entry point and the fake ``transformers``, which
answers ``Add X and Y.`` right when the adapter's rank is at least 16 and one too high
below) and the judge model (a stand-in OpenAI-compatible server on localhost). Two runs with
ranks 8 and 16 must come out as: rank 16 matches every reference, rank 8 none; the LLM judge
grades rank 16 higher and its pairwise verdicts give rank 16 the larger Bradley-Terry
strength; the API key is nowhere on disk.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from bracket.cli import main
from bracket.judge.references import ANSWERS_FILE, HELDOUT_SEED, PROMPTS_FILE
from bracket.search.configs import NamedConfig
from bracket.session import Session
from bracket.trainer.llm.axolotl import AxolotlLoRA
from tests.judge import stand_in_server
from tests.llm.llm_helpers import dispatching_python, write_alpaca

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
API_KEY = "sk-judge-e2e-SECRET-31337"


@pytest.fixture(scope="module")
def judged_session(tmp_path_factory):
    """One two-run search (about 20 s on 2 cores), shared by the tests of this module."""
    tmp_path = tmp_path_factory.mktemp("judged")
    server = stand_in_server.start()
    patch = pytest.MonkeyPatch()
    patch.setenv("FAKE_LLM_ANSWERS", "sum")
    patch.setenv("BRACKET_VLM_API_KEY", API_KEY)
    patch.setenv("BRACKET_VLM_BASE_URL", server.url())  # the environment's key goes to its URL only
    # The two runs are the warm start, made to differ only in rank, so which ranks are trained
    # never depends on a sampler's draws.
    base = AxolotlLoRA().baseline_config()
    patch.setattr(AxolotlLoRA, "baseline_config",
                  lambda self: NamedConfig("rank-8", {**base.knobs, "lora_r": 8}, "test"))
    patch.setattr(AxolotlLoRA, "curated_configs",
                  lambda self: [NamedConfig("rank-16", {**base.knobs, "lora_r": 16}, "test")])
    (tmp_path / "model").mkdir()
    fields = {"dataset": str(write_alpaca(tmp_path / "alpaca.jsonl", rows=40)), "base_model": str(tmp_path / "model"),
              "trainer_python": str(dispatching_python(tmp_path)), "device": "cpu", "eval_size": "6",
              "max_new_tokens": "16"}
    args = ["run", "--preset", "axolotl-lora", "--name", "judged", "--out", str(tmp_path / "runs"),
            "--prompts", "Add 2 and 3.", "--budget", "2", "--seeds", "1", "--steps", "4", "--search", "random",
            "--no-lr-bracket", "--bound", "effective_batch=4:4", "--bound", "lora_r=8,16",
            "--seed", "1", "--judge-url", server.url(), "--judge-model", "stand-in", "--judge-repeats", "2",
            "--quiet"]
    for name, value in fields.items():
        args += ["--set", f"{name}={value}"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    assert code == 0, err.getvalue() + out.getvalue()
    session = Session.open(tmp_path / "runs" / "judged", validate=False)
    runs = [r for r in session.store.runs(session.name) if r["kind"] != "setup"]
    scores = session.scores(session.store.runs(session.name))
    yield {"session": session, "runs": runs, "scores": scores, "server": server, "folder": tmp_path / "runs"}
    session.close()
    server.shutdown()
    patch.undo()


def test_llm_session_reports_task_metrics_llm_judge_and_pairwise_strength(judged_session):
    runs, scores = judged_session["runs"], judged_session["scores"]
    ranks = {r["params"]["lora_r"]: r for r in runs}
    assert sorted(ranks) == [8, 16], [r["params"] for r in runs]
    strong, weak = ranks[16], ranks[8]
    for run in runs:
        assert run["status"] == "done", run["failure_reason"]
        folder = Path(run["run_dir"])
        prompts = json.loads((folder / PROMPTS_FILE).read_text())
        eval_rows = [json.loads(line) for line in (folder / "data" / "eval.jsonl").read_text().splitlines()]
        assert [p["reference"] for p in prompts] == [r["output"] for r in eval_rows]  # the held-out split
        assert [p["seed"] for p in prompts] == [HELDOUT_SEED + i for i in range(len(prompts))]
        answers = json.loads(next(folder.glob(f"**/{ANSWERS_FILE}")).read_text())
        assert len(answers) == len(eval_rows) == 6
    # task metrics against the references: rank 16 answers every sum right, rank 8 none
    task = {r["id"]: scores[r["id"]].details["task"] for r in runs}
    assert task[strong["id"]]["exact"] == 1.0 and task[weak["id"]]["exact"] == 0.0
    assert scores[strong["id"]].judges["task"] == pytest.approx(0.0)
    assert scores[weak["id"]].judges["task"] == pytest.approx(1.0)
    # LLM-as-judge rubric from the stand-in: 9/10 for a right answer, 2/10 for a wrong one
    llm = {r["id"]: scores[r["id"]].details["llm_judge"] for r in runs}
    assert llm[strong["id"]]["criteria_means"]["correctness"] == 9
    assert llm[weak["id"]]["criteria_means"]["correctness"] == 2
    # pairwise: the later run was compared with the earlier one on every held-out prompt
    assert llm[strong["id"]]["comparisons"] == llm[weak["id"]]["comparisons"] == 6
    assert llm[strong["id"]]["wins"] == 6 and llm[weak["id"]]["losses"] == 6
    assert llm[strong["id"]]["bt_strength"] > 0 > llm[weak["id"]]["bt_strength"]
    assert scores[strong["id"]].judges["llm_judge"] < scores[weak["id"]].judges["llm_judge"]
    assert scores[strong["id"]].value < scores[weak["id"]].value
    assert {"task", "llm_judge"} <= set(scores[strong["id"]].used)


def test_the_key_reaches_the_server_and_nothing_on_disk(judged_session):
    requests = judged_session["server"].requests
    assert requests and all(r["auth"] == f"Bearer {API_KEY}" for r in requests)
    assert {r["body"]["model"] for r in requests} == {"stand-in"}
    for path in judged_session["folder"].rglob("*"):
        if path.is_file():
            assert API_KEY.encode() not in path.read_bytes(), path


def test_report_and_status_show_the_new_judges(judged_session, capsys):
    folder = judged_session["folder"] / "judged"
    assert main(["report", str(folder)]) == 0
    text = (folder / "report" / "report.md").read_text(encoding="utf-8")
    assert "task" in text and "llm_judge" in text and "rouge-L" in text
    assert main(["status", str(folder)]) == 0
    assert "rouge-L" in capsys.readouterr().out
