"""The optional preference judge: a PickScore-style CLIP, compared only within one prompt.

Its figures come from the real loading and forward code (``TransformersBackbone`` through the
worker's ``load_backbone``) on a tiny random CLIP saved in the test, go through the image scorer's
record, and are scored run against run prompt by prompt; it is off by default (weight 0)."""

from __future__ import annotations

import shutil

import pytest
from PIL import Image

from bracket.judge.combine import DEFAULT_WEIGHTS, WeightsError, check_weights_score
from bracket.judge.image_worker import load_backbone, score_images
from bracket.judge.preference import score_preference, win_shares
from bracket.session.scoring import score_runs
from bracket.session.scoring.image_config import ImageJudgeConfig, check_image_judges
from bracket.session.scoring.image_judges import image_results, preference_at
from bracket.session.scoring.image_scorer import build_record
from bracket.trainer.prompts import parse_prompt_lines
from tests.judge.tiny_models import tiny_clip

pytestmark = pytest.mark.timeout(300)


def test_runs_are_compared_only_on_the_same_prompt():
    # "easy" gets high figures from every run, "hard" low ones: across prompts the figures say nothing
    figures = {1: {"easy": 30.0, "hard": 10.0}, 2: {"easy": 29.0, "hard": 12.0}, 3: {"easy": 31.0, "hard": 5.0},
               4: {"alone": 99.0}}  # run 4 met nobody on its prompt: no data, however high its figure
    shares = win_shares(figures)
    assert shares[1] == (0.5, 2)  # easy: beats 2, loses to 3; hard: beats 3, loses to 2
    assert shares[2] == (0.5, 2) and shares[3] == (0.5, 2) and 4 not in shares
    results = score_preference(figures)
    assert results[1].score == pytest.approx(0.5) and results[4].score is None
    # one prompt only: the order of that prompt's figures; a tie is half a win each way
    ranked = score_preference({1: {"p": 3.0}, 2: {"p": 2.0}, 3: {"p": 2.0}})
    assert ranked[1].score == 0.0 and ranked[2].score == ranked[3].score == pytest.approx(0.75)
    assert ranked[1].details["raw"] == 1.0 and ranked[1].details["prompts"] == 1


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    return tiny_clip(tmp_path_factory.mktemp("models") / "clip", seed=3)


def test_the_preference_model_loads_and_scores_through_the_worker_path(clip, tmp_path):
    backbone = load_backbone({"text_image": str(clip), "preference": str(clip), "device": "cpu", "batch_size": 2})
    pictures = [Image.new("RGB", (32, 32), (70 * n, 30, 200 - 60 * n)) for n in range(3)]
    figures = backbone.preference(pictures, ["zqx in the snow", "zqx, a watercolor", "zqx"])
    scale = float(backbone.preference_model.logit_scale.detach().exp())
    assert len(figures) == 3 and all(-scale - 1e-4 <= f <= scale + 1e-4 for f in figures)
    assert backbone.preference(pictures[:1], ["zqx in the snow"])[0] == pytest.approx(figures[0], abs=1e-4)
    plain = load_backbone({"text_image": str(clip), "device": "cpu"})
    assert plain.preference(pictures, ["a", "b", "c"]) is None  # no preference model: no figures

    prompts = parse_prompt_lines("zqx, a photo --d 1\n# held-out\nzqx in the snow --d 2")
    records = {}
    for run_id, shade in ((1, 40), (2, 220)):
        folder = tmp_path / f"run{run_id}"
        folder.mkdir()
        rows = []
        for n, prompt in enumerate(prompts):
            path = folder / f"s_000004_{n:02d}.png"
            Image.new("RGB", (32, 32), (shade, 90 + 50 * n, 30)).save(path)
            rows.append((4, path, prompt))
        scored = score_images(backbone, [], [{"path": str(p), "prompt": q.text, "kind": q.kind}
                                             for _, p, q in rows], 3)
        run = {"id": run_id, "run_dir": str(folder), "last_step": 4}
        record = build_record(run, [(s, p, q, scored[str(p)]) for s, p, q in rows], {"count": 0})
        assert set(record["preference"]["4"]) == {q.text for q in prompts}  # every sample, both kinds
        records[run_id] = {**run, "judges": {"image": record}}
    assert preference_at(records[1]) == records[1]["judges"]["image"]["preference"]["4"]
    results = image_results(list(records.values()))["preference"]
    shares = win_shares({i: preference_at(r) for i, r in records.items()})
    assert {i: r.score for i, r in results.items()} == {i: pytest.approx(1 - s[0]) for i, s in shares.items()}
    assert results[1].score + results[2].score == pytest.approx(1.0)  # two runs, one wins each comparison


def test_it_is_off_by_default_and_enters_the_score_when_weighed():
    record = {"steps": {"4": {"likeness": None, "prompt_following": None, "image_quality": 0.5, "n_images": 1}},
              "images": {}, "scales": {}}
    runs = [{"id": i, "config_id": i, "stage": "search", "kind": "search", "status": "done", "last_step": 4,
             "loss": [(s, 0.5) for s in range(1, 5)], "params": {},
             "judges": {"image": {**record, "preference": {"4": {"zqx": figure}}}}}
            for i, figure in ((1, 22.0), (2, 25.0))]
    assert DEFAULT_WEIGHTS["preference"] == 0.0
    plain = score_runs(runs)
    assert all("preference" not in s.used for s in plain.values())
    weighed = score_runs(runs, weights={"loss": 0.0, "human": 0.0, "image_quality": 0.0, "preference": 1.0})
    assert weighed[2].value == 0.0 and weighed[1].value == 1.0  # run 2 wins its one same-prompt comparison


def test_a_broken_preference_weight_is_one_sentence_and_alone_it_needs_its_model(clip, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(clip, broken)
    (broken / "model.safetensors").unlink()
    problem = check_image_judges(ImageJudgeConfig(text_image=str(clip), preference=str(broken)))
    assert "preference model" in problem and "no safetensors weights file" in problem and "\n" not in problem
    assert check_image_judges(ImageJudgeConfig(text_image=str(clip), preference=str(clip))) is None
    alone = {name: 0.0 for name in DEFAULT_WEIGHTS} | {"preference": 1.0}
    with pytest.raises(WeightsError):
        check_weights_score(alone, sample_kind="image", judge_server=False, image_judges=True)
    check_weights_score(alone, sample_kind="image", judge_server=False, image_judges=True, preference=True)
