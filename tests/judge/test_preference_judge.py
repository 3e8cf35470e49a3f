"""The optional preference judge: a PickScore-style CLIP, compared only within one prompt.

Its figures come from the real loading and forward code (``TransformersBackbone`` through the
worker's ``load_backbone``) on a tiny random CLIP saved in the test, go through the image scorer's
record, and are scored run against run prompt by prompt; it is off by default (weight 0)."""

from __future__ import annotations

import shutil

import pytest
from PIL import Image

from bracket.judge.combine import DEFAULT_WEIGHTS, WeightsError, check_weights_score
from bracket.judge.image_worker import ReferenceEmbeddings, load_backbone, score_images
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
        scored = score_images(backbone, ReferenceEmbeddings(),
                              [{"path": str(p), "prompt": q.text, "kind": q.kind} for _, p, q in rows], 3)
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


def _judged_run(run_id: int, config_id: int, figures: dict[int, dict[str, float]]) -> dict:
    """A finished run whose record holds preference figures per step and prompt (and one image each)."""
    steps = {str(s): {"likeness": 0.5, "prompt_following": None, "image_quality": 0.5, "n_images": 1} for s in figures}
    images = {f"sample/r{run_id}_{s:06d}.png": {"likeness": 0.5, "prompt_following": None, "image_quality": 0.5,
                                                "step": s, "prompt_kind": "in", "preference": next(iter(p.values()))}
              for s, p in figures.items()}
    return {"id": run_id, "config_id": config_id, "stage": "search", "kind": "search", "status": "done",
            "last_step": max(figures), "run_dir": f"/runs/r{run_id}", "loss": [(s, 0.5) for s in range(1, 9)],
            "samples": [{"step": s, "prompt_index": 0, "kind": "image", "path": f"/runs/r{run_id}/sample/x.png"}
                        for s in figures],
            "judges": {"image": {"steps": steps, "images": images, "scales": {},
                                 "preference": {str(s): p for s, p in figures.items()}}}}


def test_the_per_step_table_shows_each_configs_same_prompt_wins_at_that_step():
    from types import SimpleNamespace

    from bracket.report.image_table import image_rows, image_section
    from bracket.session.scoring.best_step import step_curves
    from bracket.session.scoring.image_judges import image_steps, preference_steps

    # config 1 wins "easy" at step 4 and loses it at 8; "hard" scores low for everyone (never compared across)
    runs = [_judged_run(1, 1, {4: {"easy": 30.0, "hard": 5.0}, 8: {"easy": 20.0, "hard": 6.0}}),
            _judged_run(2, 2, {4: {"easy": 25.0, "hard": 4.0}, 8: {"easy": 26.0, "hard": 7.0}}),
            _judged_run(3, 2, {4: {"easy": 24.0}})]  # config 2's second seed, step 4 only
    shares = preference_steps(runs)
    assert shares[1] == {4: 1.0, 8: 0.0}  # step 4: beats 2 and 3 on both prompts; step 8: loses both to run 2
    assert shares[2] == {4: 0.25, 8: 1.0} and shares[3] == {4: 0.0}  # easy: beats 3, loses to 1; hard: loses
    weighed = {"loss": 1.0, "preference": 5.0}
    curves = step_curves(runs, weights=weighed)
    assert curves[1].per_judge["preference"] == {4: 1.0, 8: 0.0}
    assert curves[2].per_judge["preference"] == {4: 0.125, 8: 1.0}  # the mean over its seeds
    assert curves[1].best_step == step_curves(runs, weights={"loss": 1.0})[1].best_step  # no part in the best step
    steps = image_steps(curves[1])
    assert steps[4]["preference"] == 1.0 and steps[4]["image_quality"] == 0.5
    rows = [SimpleNamespace(name=f"search-{c}", best_step=curves[c].best_step, step_images=image_steps(curves[c]))
            for c in (1, 2)]
    table = image_rows(rows)
    assert table[0][0] == "search-1" and table[0][-1] == "1.000" and table[1][-1] == "0.000"
    (title, blocks), = image_section(table)
    assert blocks[0][1][-1] == "preference" and "same prompt" in blocks[1][1]
    plain = [SimpleNamespace(name="a", best_step=4, step_images={4: {"likeness": 0.5}})]
    assert image_section(image_rows(plain))[0][1][0][1] == ["config", "step", "likeness"]  # no figure: no column


def test_compare_shows_each_images_preference_figure_with_its_other_scores():
    from bracket.app.judge_text import scores_text
    from bracket.session.scoring.image_judges import image_scores

    run = _judged_run(1, 1, {4: {"easy": 30.5}})
    scores = image_scores(run, "/runs/r1/sample/r1_000004.png")
    assert scores == {"likeness": 0.5, "image_quality": 0.5, "preference": 30.5}
    assert scores_text(scores) == "likeness 0.5 · quality 0.5 · preference 30.5"
    del run["judges"]["image"]["images"]["sample/r1_000004.png"]["preference"]
    assert "preference" not in image_scores(run, "/runs/r1/sample/r1_000004.png")
