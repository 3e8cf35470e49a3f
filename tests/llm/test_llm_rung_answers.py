"""The text judges at a rung of a halving search: a paused LLM run answers its held-out prompts
from the paused adapter, and the task judge's and the LLM-as-judge's verdicts there take part
in the promotion.

``bracket run --preset axolotl-lora --halving`` for real (the fixed eval split, the held-out
prompts, the real ``llm_generate.py`` at the rung and after the run, scoring, promotion); faked
is what cannot run here: the trainer (the fake Axolotl, whose checkpoints are the HF Trainer's
and whose training loss falls faster the higher the rate), the model (the fake ``transformers``:
an adapter of rank 16 or more answers ``Add X and Y.`` right, a lower rank one too high) and the
judge model (the stand-in server: 9/10 for an answer equal to the reference, 2 otherwise).

Planned: three configs to 1/2 → 1 to full; the third is not bought (once the better of the first two
goes on, an HF Trainer run could race to its end past the budget). The first two to pause are
``fast-r8`` (rate 4e-4: the lower loss, wrong answers) and ``slow-r16`` (1e-4: the higher loss, right
answers); one goes on. On the loss alone ``fast-r8`` does, and no answers are made at the rung (no
text judge weighs in); with the LLM judge weighted above the loss ``slow-r16`` does, because its rung
verdicts (answers made from ``checkpoint-<step>``) are in before the promotion is decided. A
generation that fails at the rung leaves the runs without answers there and the loss decides.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bracket.search.configs import NamedConfig
from bracket.session import Session
from bracket.trainer.llm.axolotl import AxolotlLoRA
from tests.fakes.cli_search import cli_search, configs_by_name, run_of
from tests.judge import stand_in_server
from tests.llm.llm_helpers import dispatching_python, write_alpaca

pytestmark = pytest.mark.timeout(300)
RUNG = 4  # of 8 steps at the reference batch: the trainer's own steps are the request's


@pytest.fixture
def judge():
    server = stand_in_server.start()
    yield server
    server.shutdown()


@pytest.fixture
def three_configs(monkeypatch):
    """The warm start: the two configs the judges and the loss disagree on, then one both rank last."""
    base = AxolotlLoRA().baseline_config().knobs

    def config(name: str, rate: float, rank: int) -> NamedConfig:
        return NamedConfig(name, {**base, "learning_rate": rate, "lora_r": rank}, "test")

    monkeypatch.setattr(AxolotlLoRA, "baseline_config", lambda self: config("fast-r8", 4e-4, 8))
    monkeypatch.setattr(AxolotlLoRA, "curated_configs",
                        lambda self: [config("slow-r16", 1e-4, 16), config("slower-r8", 5e-5, 8)])
    monkeypatch.setenv("FAKE_LLM_ANSWERS", "sum")
    monkeypatch.setenv("FAKE_HF_HOLD_SECONDS", "60")  # a real step takes time: the pause's stop lands at the rung


def halving_search(tmp_path: Path, weights: str, *judge_args: str, fail_at_rungs: bool = False) -> Session:
    (tmp_path / "model").mkdir(parents=True)
    fields = {"dataset": str(write_alpaca(tmp_path / "alpaca.jsonl", rows=40)), "base_model": str(tmp_path / "model"),
              "trainer_python": str(dispatching_python(tmp_path, fail_at_rungs=fail_at_rungs)), "device": "cpu",
              "eval_size": "4", "max_new_tokens": "8"}
    args = ["run", "--preset", "axolotl-lora", "--name", "halved", "--out", str(tmp_path / "runs"), "--halving",
            "--eta", "2", "--smallest-rung", "1/2", "--budget", "2", "--steps", "8", "--sample-every", str(RUNG),
            "--confirm", "0", "--prompts", "Add 2 and 3.", "--bound", "effective_batch=8:8", "--weights", weights,
            "--seed", "1", "--launch-cost", "0", "--quiet", *judge_args]
    return cli_search(args, fields, tmp_path / "runs" / "halved")


def test_the_llm_judges_verdict_at_the_rung_decides_the_promotion(tmp_path, judge, three_configs):
    loss_only = halving_search(tmp_path / "loss", "loss=1,eval_loss=0,task=0")
    configs = configs_by_name(loss_only)
    assert configs["fast-r8"]["rung_state"] == "full"  # the loss alone promotes the faster rate
    assert configs["slow-r16"]["rung_state"] == "stopped"
    for config in configs.values():  # no judge weighs in: no generation at the rung
        run = run_of(loss_only, config)
        assert not (Path(run["run_dir"]) / "rungs").exists() and "at_step" not in (run["judges"] or {})
    loss_only.close()

    judge.delay_s = 0.3  # the verdicts land after the run paused: the promotion waits for them
    session = halving_search(tmp_path / "judged", "loss=1,eval_loss=0,task=0,llm_judge=5", "--judge-url",
                             judge.url(), "--judge-model", "stand-in", "--judge-repeats", "1")
    configs = configs_by_name(session)
    # a third config is not bought: it could race to its end past the budget (tests/session/test_budget_bound.py)
    assert set(configs) == {"fast-r8", "slow-r16"}
    assert configs["slow-r16"]["rung_state"] == "full" and configs["slow-r16"]["rung_note"].startswith("promoted")
    assert configs["fast-r8"]["rung_state"] == "stopped"
    rung = {name: run_of(session, c)["judges"]["at_step"][str(RUNG)] for name, c in configs.items()}
    # each run answered at the rung (its generation logged beside the run's) and was judged there
    for name, config in configs.items():
        folder = Path(run_of(session, config)["run_dir"]) / "rungs" / f"step-{RUNG}"
        assert (folder.parents[1] / "logs" / f"rung-{RUNG}-0.log").is_file()
        assert json.loads((folder / "generations.json").read_text())[0]["prompt"] == "Add 2 and 3."
        assert len(json.loads((folder / "heldout_answers.json").read_text())) == 4
        assert rung[name]["task"]["details"]["exact"] == (1.0 if name == "slow-r16" else 0.0)
        assert rung[name]["llm_judge"]["details"]["criteria_means"]["correctness"] == (9 if name == "slow-r16" else 2)
    strong = run_of(session, configs["slow-r16"])["id"]  # its answers win every pair at the rung, r8 pairs tie
    paired = [p for verdicts in rung.values() for p in verdicts["llm_pairs"]]
    assert any(strong in (p["left_run_id"], p["right_run_id"]) for p in paired)
    for pair in paired:
        winner = "tie" if strong not in (pair["left_run_id"], pair["right_run_id"]) else \
            "left" if pair["left_run_id"] == strong else "right"
        assert pair["winner"] == winner, pair
    # the promoted run finished and was judged on its final answers; the rung's verdicts are kept
    full = run_of(session, configs["slow-r16"])
    assert full["status"] == "done" and full["last_step"] == 8
    assert full["judges"]["task"]["details"]["exact"] == 1.0
    assert full["judges"]["at_step"][str(RUNG)] == rung["slow-r16"]
    # the scores at the rung read the rung verdicts, also of the config that has gone on
    scores = session.view().scores
    at_rung = {name: scores[(c["id"], 0)] for name, c in configs.items()}
    assert at_rung["slow-r16"] < at_rung["fast-r8"], at_rung
    session.close()


def test_a_failing_generation_at_the_rung_leaves_the_promotion_to_the_loss(tmp_path, three_configs):
    session = halving_search(tmp_path, "loss=1,eval_loss=0,task=5", fail_at_rungs=True)
    assert session.store.get_session(session.name)["status"] == "finished"
    configs = configs_by_name(session)
    assert configs["fast-r8"]["rung_state"] == "full" and configs["slow-r16"]["rung_state"] == "stopped"
    for config in configs.values():
        verdict = run_of(session, config)["judges"]["at_step"][str(RUNG)]["task"]
        assert verdict["score"] is None, verdict
        assert verdict["reason"].startswith(f"generate answers at step {RUNG} failed: exit code 1"), verdict
    full = run_of(session, configs["fast-r8"])  # its generation after the run went well: judged as always
    assert full["status"] == "done" and full["judges"]["task"]["score"] is not None
    session.close()
