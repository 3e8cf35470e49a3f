"""The image judges rank runs and steps in an order planted by construction.

The fake trainer (``BRACKET_FAKE_PLANTED=1``) draws each sample as a subject that fades in with
the run's progress — slower for a rate below the optimum — and, for a held-out prompt, a context
that over-fitting erases from half-way on — faster for a higher rate (``tests/fakes/fake_outputs.planted``).
Three runs: a rate too low (1e-4: the subject only half there, the context kept), the optimum
(3e-4) and one too high (2e-3: the subject there, the context erased by step 6 of 8). Their
samples go through the real pipeline — the session's image scorer, the worker process, the
cache, the stored figures, the run scores and the best step — with the deterministic stand-in
backbone (``tests/fakes/image_backbone.py``) in place of the models.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from bracket.session.process.execute import sample_record
from bracket.session.scoring import collect_samples, score_runs, step_curves
from bracket.session.scoring.image_config import ImageJudgeConfig
from bracket.session.scoring.image_judges import image_parts
from bracket.session.scoring.image_scorer import ImageScorer
from bracket.trainer.prompts import parse_prompt_lines
from tests.fakes import FAKE_TRAINER

pytestmark = pytest.mark.timeout(300)

PROMPTS = "zqx, a red square --d 1\n# held-out\nzqx, standing on a snowy mountain top at dawn --d 2\n"
RATES = {"low": 1e-4, "optimum": 3e-4, "high": 2e-3}
STAND_IN = ImageJudgeConfig(module="tests.fakes.image_backbone:Backbone")


def references(folder: Path) -> list[Path]:
    folder.mkdir(parents=True)
    paths = []
    for n in range(3):
        image = Image.new("RGB", (32, 32), (128, 128, 128))
        image.paste((255, 0, 0), (8, 8, 24, 24))
        image.save(folder / f"ref{n}.png")
        paths.append(folder / f"ref{n}.png")
    return paths


def train(folder: Path, lr: float) -> list[dict]:
    """The fake trainer's 8 steps at ``lr``, sampling every 2; the run's sample records."""
    folder.mkdir(parents=True)
    (folder / "prompts.txt").write_text(PROMPTS.replace("# held-out\n", ""), encoding="utf-8")
    subprocess.run([sys.executable, str(FAKE_TRAINER), "--output_dir", str(folder), "--learning_rate", str(lr),
                    "--max_train_steps", "8", "--sample_prompts", str(folder / "prompts.txt"),
                    "--sample_every_n_steps", "2", "--seed", "1"],
                   env={"BRACKET_FAKE_PLANTED": "1", "PATH": "/usr/bin:/bin"}, check=True,
                   stdout=subprocess.DEVNULL)
    return [sample_record(s) for s in collect_samples(folder / "sample")]


@pytest.fixture
def judged(store, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    runs = {}
    for config_id, (name, lr) in enumerate(RATES.items(), start=1):
        run_dir = tmp_path / name
        runs[name] = store.add_run("s", kind="search", status="done", config_id=config_id, run_dir=str(run_dir),
                                   last_step=8, max_steps=8, loss=[(s, 0.5) for s in range(1, 9)],
                                   samples=train(run_dir, lr), params={"learning_rate": lr})
    scorer = ImageScorer(store, "s", tmp_path / "session", STAND_IN, parse_prompt_lines(PROMPTS),
                         references(tmp_path / "refs"))
    for run_id in runs.values():
        scorer.submit(run_id)
    scorer.drain(240)
    return store, runs, scorer


def test_the_judges_rank_runs_and_steps_in_the_planted_order(judged):
    store, runs, _ = judged
    rows = {name: store.get_run(run_id) for name, run_id in runs.items()}
    parts = {name: image_parts(row) for name, row in rows.items()}
    assert all(sorted(p) == [2, 4, 6, 8] for p in parts.values()), parts
    record = rows["high"]["judges"]["image"]
    kinds = {Path(path).name.split("_")[1]: image["prompt_kind"] for path, image in record["images"].items()}
    assert kinds == {"00": "in", "01": "held_out"}  # the kind of every sample's prompt is known
    assert record["references"]["source"] == "training images" and record["references"]["count"] == 3

    # fidelity: the low rate's subject has only half faded in at the end; the others' fully
    final = {name: p[8] for name, p in parts.items()}
    assert final["low"]["likeness"] < final["optimum"]["likeness"] - 0.1
    assert abs(final["optimum"]["likeness"] - final["high"]["likeness"]) < 0.02
    # flexibility: over-fitting erased the high rate's context, half the optimum's, little of the low's
    assert final["low"]["prompt_following"] > final["optimum"]["prompt_following"] > final["high"]["prompt_following"]
    assert parts["high"][4]["prompt_following"] > 0.9 > 0.1 > parts["high"][6]["prompt_following"]

    rows_list = list(rows.values())
    weights = {"loss": 0.0, "human": 0.0, "vlm": 0.0, "image_quality": 0.0}
    likeness_only = score_runs(rows_list, weights={**weights, "prompt_following": 0.0})
    following_only = score_runs(rows_list, weights={**weights, "likeness": 0.0})
    by = {name: run_id for name, run_id in runs.items()}
    assert likeness_only[by["low"]].value == 1.0 and likeness_only[by["optimum"]].value < 0.1
    assert following_only[by["low"]].value < following_only[by["optimum"]].value < following_only[by["high"]].value
    part = following_only[by["high"]].parts["prompt_following"]
    assert part.raw == pytest.approx(final["high"]["prompt_following"], abs=1e-4) and not part.estimated

    # the best step: the high rate at step 4, before over-fitting erased its context (not its last, 8)
    curves = step_curves(rows_list, weights={**weights, "likeness": 1.0, "prompt_following": 1.0})
    high = curves[rows["high"]["config_id"]]
    assert high.best_step == 4 and high.final_step == 8 and "prompt_following" in high.basis
    assert set(high.per_judge) >= {"likeness", "prompt_following"}


def test_figures_are_cached_per_image_and_nothing_is_scored_twice(judged, tmp_path):
    store, runs, scorer = judged
    cached = dict(scorer.cache.figures)
    assert len(cached) == 3 * 2 * 4  # three runs, two prompts, four steps
    again = ImageScorer(store, "s", tmp_path / "session", STAND_IN, scorer.prompts,
                        [Path(p) for p in scorer.references])
    asked: list = []
    again._run_worker = lambda items: asked.append([path.name for path, _ in items]) or {}
    again.submit(runs["low"])
    again.drain(60)
    assert asked == []  # every figure came from the cache file the first scorer wrote
    assert store.get_run(runs["low"])["judges"]["image"]["steps"]["8"]["n_images"] == 2

    changed = Path(store.get_run(runs["low"])["samples"][0]["path"])
    changed.write_bytes(changed.read_bytes())  # rewritten: a new modification time
    again = ImageScorer(store, "s", tmp_path / "session", STAND_IN, scorer.prompts,
                        [Path(p) for p in scorer.references])
    again._run_worker = lambda items: asked.append([path.name for path, _ in items]) or {}
    again.submit(runs["low"])
    again.drain(60)
    assert asked == [[changed.name]]  # only the image that changed is scored again
