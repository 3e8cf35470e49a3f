"""A halving search of an LLM preset at any effective batch: the rungs are shares of each run's own
length, so a run whose optimizer steps are not the request's (the equal token budget: ``--steps``
is the length at 8 examples a step) pauses at its rung, is read as standing there, is promoted,
resumes to its own full length and is the winner.

``bracket run --preset axolotl-lora --halving`` for real; faked is the trainer (the fake Axolotl,
whose checkpoints and resumes are the HF Trainer's; its training loss falls faster the higher the
rate). The plan is three configs to 1/2 → 1 to full, ``--steps 8``: at effective batch 4 a run has 16
optimizer steps and pauses at 8, at 16 it has 4 and pauses at 2. With the effective batch searched, the
configs of one session have different lengths and still meet at the same rung. Once the first two have
paused and the better is promoted, 1.5 of the 2 full runs are spent or in flight: a third config's first
rung would fit, but an HF Trainer run may train on to its end before the pause's stop lands, so the
budget buys no third config (the plan is redone, said in the notes).
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from bracket.cli import main
from bracket.search.configs import NamedConfig
from bracket.session import Session
from bracket.session.loop.rung_scores import full_runs_spent
from bracket.trainer.llm.axolotl import AxolotlLoRA
from tests.llm.llm_helpers import dispatching_python, write_alpaca

pytestmark = pytest.mark.timeout(300)
STEPS = 8  # request steps: the run's length at the reference effective batch of 8


def warm_start(monkeypatch, batches: tuple[int, int, int]) -> None:
    """The three configs: the fastest rate first (the best loss at the rung), at these effective batches.
    The fake holds after a checkpoint as a real step takes time, so the pause's stop lands at the rung
    (a run that raced to its end would be a full run, charged as one)."""
    monkeypatch.setenv("FAKE_HF_HOLD_SECONDS", "60")
    base = AxolotlLoRA().baseline_config().knobs

    def config(name: str, rate: float, batch: int) -> NamedConfig:
        return NamedConfig(name, {**base, "learning_rate": rate, "effective_batch": batch}, "test")

    monkeypatch.setattr(AxolotlLoRA, "baseline_config", lambda self: config("fast", 4e-4, batches[0]))
    monkeypatch.setattr(AxolotlLoRA, "curated_configs",
                        lambda self: [config("slow", 1e-4, batches[1]), config("slower", 5e-5, batches[2])])


def halving_search(tmp_path: Path, bound: str) -> tuple[int, str, Session]:
    (tmp_path / "model").mkdir(parents=True)
    fields = {"dataset": str(write_alpaca(tmp_path / "alpaca.jsonl", rows=40)), "base_model": str(tmp_path / "model"),
              "trainer_python": str(dispatching_python(tmp_path)), "device": "cpu", "eval_size": "4"}
    args = ["run", "--preset", "axolotl-lora", "--name", "halved", "--out", str(tmp_path / "runs"), "--halving",
            "--eta", "2", "--smallest-rung", "1/2", "--budget", "2", "--steps", str(STEPS), "--confirm", "0",
            "--bound", f"effective_batch={bound}", "--weights", "loss=1,eval_loss=0,task=0", "--seed", "1",
            "--launch-cost", "0"]  # what the budget buys fixed, not measured: the count never depends on the clock
    for name, value in fields.items():
        args += ["--set", f"{name}={value}"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, err.getvalue() + out.getvalue(), Session.open(tmp_path / "runs" / "halved", validate=False)


def rows(session: Session) -> tuple[dict[str, dict], dict[str, dict]]:
    configs = {c["name"]: c for c in session.store.configs(session.name, stage="search")}
    runs = {name: next(r for r in session.store.runs(session.name) if r["config_id"] == c["id"])
            for name, c in configs.items()}
    return configs, runs


def assert_halved(session: Session, lengths: dict[str, int]) -> None:
    """Each config paused at half its own length; ``fast`` was promoted and trained to its full length;
    no third config was bought (it could have raced to its end past the budget)."""
    configs, runs = rows(session)
    assert set(configs) == set(lengths)
    assert configs["fast"]["rung_state"] == "full" and configs["fast"]["rung_note"].startswith("promoted: 1 of 2")
    notes = session.store.get_session(session.name)["notes"]
    assert any("pays for it to train to full length" in note for note in notes), notes
    assert configs["fast"]["status"] == "done" and configs["fast"]["value"] is not None
    for name in set(lengths) - {"fast"}:
        assert configs[name]["rung_state"] == "stopped" and configs[name]["rung"] == 0, configs[name]
        assert configs[name]["rung_note"].startswith("stopped at 1/2:"), configs[name]["rung_note"]
    for name, steps in lengths.items():
        run = runs[name]
        assert run["max_steps"] == steps, (name, run["max_steps"])
        # every run paused at its rung, half its own length: its series reach that step (the winner's go on)
        assert run["launches"] == (2 if name == "fast" else 1)
        assert max(s for s, _ in run["loss"]) == (steps if name == "fast" else steps // 2), name
        assert run["status"] == ("done" if name == "fast" else "paused")
        assert run["pause_step"] == (None if name == "fast" else steps // 2)
    assert sorted(s for s, _ in runs["fast"]["loss"]) == list(range(1, lengths["fast"] + 1))  # resumed, not restarted
    # each run counts as the share of its own length it trained: 1 + 1/2
    search = [r for r in session.store.runs(session.name, with_series=False) if r["stage"] == "search"]
    assert full_runs_spent(search, STEPS) == pytest.approx(1.5)
    scores = session.view().scores
    assert {k for k in scores} == {(c["id"], 0) for c in configs.values()}  # both scored at the rung


@pytest.mark.parametrize("batch", [4, 8, 16])
def test_a_halving_search_pauses_promotes_and_resumes_at_any_effective_batch(tmp_path, monkeypatch, batch):
    warm_start(monkeypatch, (batch, batch, batch))
    code, said, session = halving_search(tmp_path, f"{batch}:{batch}")
    assert code == 0, said
    assert session.store.get_session(session.name)["status"] == "finished"
    steps = STEPS * 8 // batch
    assert_halved(session, dict.fromkeys(("fast", "slow"), steps))
    assert "1.5/2 full runs" in said, said
    session.close()


def test_configs_of_different_effective_batches_meet_at_the_same_rung(tmp_path, monkeypatch):
    warm_start(monkeypatch, (4, 16, 8))
    code, said, session = halving_search(tmp_path, "4,8,16")
    assert code == 0, said
    assert_halved(session, {"fast": 16, "slow": 4})
    session.close()


@pytest.mark.parametrize("steps", [8, 24, 90, 100])
@pytest.mark.parametrize("batch", [4, 8, 16, 32])
def test_the_trainer_pauses_where_the_session_reads_the_rung(steps, batch):
    """An LLM run pauses (``pause_step``) at the step the session reads its rung at, at every batch."""
    from bracket.search.halving import Rungs
    from bracket.session.loop.rung_scores import StepRungs
    from bracket.trainer.base import RunRequest
    from bracket.trainer.llm.checkpoints import pause_step
    from bracket.trainer.llm.shape import equal_budget_steps

    own = equal_budget_steps(steps, batch)
    for rungs in (Rungs(3, 1 / 9), Rungs(3, 1 / 3), Rungs(2, 1 / 4)):
        at = StepRungs(rungs.eta, rungs.steps(steps), rungs.fractions())
        for rung, step in enumerate(at.steps[:-1]):
            request = RunRequest(run_dir=Path("r"), knobs={}, dataset=Path("d"), max_steps=steps, seed=1,
                                 stop_at_step=step)
            paused = pause_step(request, own)
            assert paused == at.step_in(rung, own) and at.rung_of(paused, own) >= rung, (rung, step, own)
        assert at.step_in(len(at.steps) - 1, own) == own and at.rung_of(own, own) == len(at.steps) - 1


def test_runs_are_read_in_their_own_steps():
    """A run of its own length (a torchtune run at batch 16 ends at 4 of ``--steps 8``, one at 4 pauses
    at 8 of 16) stands at the rung its share of that length reaches; the budget counts that share."""
    from bracket.session.launches import launch_steps
    from bracket.session.loop.rung_scores import StepRungs, parked

    rungs = StepRungs(2, (4, 8), (0.5, 1.0))
    runs = [{"id": 1, "config_id": 1, "status": "done", "max_steps": 4, "last_step": 4, "launches": 1},
            {"id": 2, "config_id": 2, "status": "paused", "max_steps": 16, "last_step": 8, "pause_step": 8,
             "launches": 1},
            {"id": 3, "config_id": 3, "status": "paused", "max_steps": 8, "last_step": 4, "pause_step": 4,
             "launches": 1}]
    assert [parked({"id": i}, runs, rungs, 1).reached for i in (1, 2, 3)] == [1, 0, 0]
    assert full_runs_spent(runs, 8) == pytest.approx(2.0)
    assert launch_steps(runs, 8, 0.25) == 2.0  # a fixed share is of the session's length
