"""The rules around the image judges: prompt kinds, held-out proposals, how figures become scores,
the weights, and the one ``error:`` line at Start and in ``doctor`` when a weight is missing."""

from __future__ import annotations

import contextlib
import io

import pytest

from bracket.judge.combine import DEFAULT_WEIGHTS, JUDGE_NAMES, WeightsError, check_weights_score, parse_weights
from bracket.judge.image_judges import IMAGE_JUDGES, OPTIONAL, score_figures
from bracket.trainer.prompts import format_prompt_block, parse_prompt_lines, write_prompt_file
from bracket.trainer.sample_proposal import held_out_lines


def test_prompt_kinds_follow_the_markers_and_never_reach_the_trainer(tmp_path):
    text = "zqx, a dog --d 1\n# held-out\nzqx on the moon --d 2\nzqx, a sketch\n# in-distribution\nzqx, a cat --d 4"
    prompts = parse_prompt_lines(text)
    assert [p.kind for p in prompts] == ["in", "held_out", "held_out", "in"]
    assert [p.seed for p in prompts] == [1, 2, 1002, 4]  # a marker takes no seed index
    assert parse_prompt_lines(format_prompt_block(prompts)) == prompts  # written back with its markers
    assert [p.kind for p in parse_prompt_lines("# a note\nzqx, a dog")] == ["in"]  # other comments change nothing
    write_prompt_file(tmp_path / "prompts.txt", prompts)
    assert "#" not in (tmp_path / "prompts.txt").read_text(encoding="utf-8")


def test_held_out_prompts_put_the_subject_where_no_caption_goes():
    captions = ["zqx, a dog in the snow", "zqx, a dog reading in a library", "zqx, a watercolor of a dog"]
    lines = held_out_lines(captions, "zqx")
    assert len(lines) == 3 and all(line.startswith("zqx, ") for line in lines)
    words = " ".join(lines).lower()
    assert not any(word in words for word in ("snow", "library", "watercolor"))
    assert [p.seed for p in parse_prompt_lines(lines)] == [101, 102, 103]


def test_figures_become_scores_relative_for_likeness_and_following_absolute_for_quality():
    likeness = score_figures("likeness", {1: 0.80, 2: 0.70, 3: 0.75, 4: None})
    assert (likeness[1].score, likeness[2].score, likeness[3].score) == (0.0, 1.0, 0.5)  # best 0, worst 1
    assert likeness[4].score is None and "in-distribution" in likeness[4].reason
    assert likeness[1].details["raw"] == 0.8
    close = score_figures("likeness", {1: 0.800, 2: 0.798})  # under the 0.01 noise floor: near the middle
    assert 0.35 < close[1].score < 0.5 < close[2].score < 0.65
    following = score_figures("prompt_following", {1: -0.02, 2: 0.03})  # corrected by the base: may be < 0
    assert following[2].score == 0.0 and following[1].score == 1.0
    quality = score_figures("image_quality", {1: 0.9, 2: 0.4})
    assert quality[1].score == pytest.approx(0.1) and quality[2].score == pytest.approx(0.6)  # not moved by others
    assert score_figures("image_quality", {1: 0.9})[1].score == pytest.approx(0.1)


def test_the_image_judges_are_weighted_like_the_others():
    assert set(IMAGE_JUDGES) <= set(JUDGE_NAMES)
    assert all(DEFAULT_WEIGHTS[name] > 0 for name in IMAGE_JUDGES if name not in OPTIONAL)
    assert OPTIONAL == ("face_identity",) and DEFAULT_WEIGHTS["face_identity"] == 0.0  # off by default
    assert parse_weights("likeness=2,image_quality=0")["likeness"] == 2.0
    only_images = {"loss": 0.0, "human": 0.0, "vlm": 0.0, "likeness": 1.0}
    with pytest.raises(WeightsError, match="every judge that can score"):
        check_weights_score(only_images, sample_kind="image", judge_server=False)  # no models: nothing scores
    check_weights_score(only_images, sample_kind="image", judge_server=False, image_judges=True)
    with pytest.raises(WeightsError):
        check_weights_score({**only_images, "eval_loss": 0.0, "task": 0.0}, sample_kind="text", judge_server=False,
                            image_judges=True)


def test_a_missing_weight_is_one_error_line_at_start_and_nothing_is_made(tmp_path, monkeypatch):
    from bracket.cli import main

    monkeypatch.setenv("BRACKET_JUDGE_TEXT_IMAGE", str(tmp_path / "no-clip"))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["run", "--preset", "demo-cpu", "--name", "judged", "--out", str(tmp_path / "runs"),
                     "--budget", "1", "--steps", "4", "--quiet"])
    lines = err.getvalue().strip().splitlines()
    assert code == 2 and len(lines) == 1, err.getvalue()
    assert lines[0].startswith("error: Image judges: ") and "no-clip" in lines[0] and "likeness=0" in lines[0]
    assert not (tmp_path / "runs" / "judged").exists()

    # weighed 0, the image judges need no models: the same start is not refused for them
    from bracket.session.scoring.image_config import image_judges_wanted

    assert not image_judges_wanted({"likeness": 0, "prompt_following": 0, "image_quality": 0}, "image")
    assert not image_judges_wanted({}, "text") and image_judges_wanted({}, "video")


def test_doctor_names_a_missing_weight_in_one_line(tmp_path, monkeypatch):
    from bracket.cli.doctor import run_doctor

    monkeypatch.setenv("BRACKET_JUDGE_TEXT_IMAGE", "someone/not-fetched")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    import huggingface_hub.constants as hub

    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(tmp_path / "hub"))
    report = run_doctor("demo-cpu", {})
    found = [c for c in report.checks if c.name == "image judges"]
    assert len(found) == 1 and not found[0].ok and not report.ok
    assert "someone/not-fetched is not in the Hugging Face cache" in found[0].message
    assert "./install.sh --judges" in found[0].message and "\n" not in found[0].message
    monkeypatch.delenv("BRACKET_JUDGE_TEXT_IMAGE")
    assert not [c for c in run_doctor("demo-cpu", {}).checks if c.name == "image judges"]  # not configured: no line


def test_the_install_option_fetches_each_default_model_once_and_names_it_in_env(tmp_path):
    from bracket.judge.fetch_models import DEFAULT_MODELS, fetch

    env = tmp_path / ".env"
    env.write_text("BRACKET_RUNS_DIR=/big\nBRACKET_JUDGE_LIKENESS=/my/dino", encoding="utf-8")  # no final newline
    asked: list[tuple[str, list[str]]] = []

    def download(repo, allow_patterns):
        asked.append((repo, allow_patterns))
        return str(tmp_path / "hub" / repo)

    said = fetch(env, download)
    assert [repo for repo, _ in asked] == [repo for repo, _ in DEFAULT_MODELS.values()]
    assert all("model.safetensors" in allow and "*.json" in allow for _, allow in asked)
    lines = env.read_text(encoding="utf-8").splitlines()
    assert lines == ["BRACKET_RUNS_DIR=/big", "BRACKET_JUDGE_LIKENESS=/my/dino",
                     "BRACKET_JUDGE_TEXT_IMAGE=laion/CLIP-ViT-B-32-laion2B-s34B-b79K"]  # a set one is kept
    assert any("MIT" in line for line in said) and any("Apache-2.0" in line for line in said)
    fetch(env, download)
    assert env.read_text(encoding="utf-8").splitlines() == lines  # again: nothing added twice


def test_a_step_record_averages_its_samples_and_takes_the_base_models_prompt_following_off(tmp_path):
    from bracket.session.scoring.image_judges import image_parts, scores_at
    from bracket.session.scoring.image_scorer import build_record

    inside, held = parse_prompt_lines("zqx, a dog --d 1\n# held-out\nzqx on the moon --d 2")
    run = {"run_dir": str(tmp_path), "last_step": 8}
    rows = [(0, tmp_path / "s" / "a0.png", held, {"likeness": None, "prompt_following": 0.20, "image_quality": 0.5}),
            (4, tmp_path / "s" / "a4.png", inside, {"likeness": 0.6, "prompt_following": None, "image_quality": 0.4}),
            (4, tmp_path / "s" / "b4.png", held, {"likeness": None, "prompt_following": 0.26, "image_quality": 0.6}),
            (8, tmp_path / "s" / "b8.png", held, {"error": "b8.png: truncated"})]
    record = build_record(run, rows, {"count": 1, "source": "training images"})
    assert record["base"]["prompt_following"] == 0.20 and "0" not in record["steps"]  # the base is no candidate
    step = record["steps"]["4"]
    assert step["prompt_following"] == pytest.approx(0.06) and step["likeness"] == 0.6  # 0.26 less the base's
    assert step["image_quality"] == pytest.approx(0.5) and step["n_images"] == 2
    assert record["images"]["s/b4.png"] == {"likeness": None, "prompt_following": 0.26, "image_quality": 0.6,
                                            "step": 4, "prompt_kind": "held_out"}
    assert record["unreadable"] == ["b8.png: truncated"] and "8" not in record["steps"]
    judged = {**run, "judges": {"image": record}}
    assert list(image_parts(judged)) == [4]
    assert scores_at(judged, 8) == (4, {"likeness": 0.6, "prompt_following": pytest.approx(0.06),
                                       "image_quality": pytest.approx(0.5)})  # nothing readable at 8: the latest before


def test_a_stored_figure_that_is_not_a_finite_number_is_read_as_none_by_every_reader():
    """The image record's readers (``image_parts``) and the standings' figures (``raw_figures``) take
    a stored number one way (``judge.base.finite_number``): text, a bool, NaN and inf are no figure."""
    from bracket.judge.base import finite_number
    from bracket.session.scoring.image_judges import image_parts
    from bracket.standings.parts import raw_figures

    for stored, read in ((0.25, 0.25), (1, 1.0), ("0.5", None), (True, None), (float("nan"), None),
                         (float("inf"), None), (None, None)):
        assert finite_number(stored) == read and type(finite_number(stored)) is type(read)
        run = {"judges": {"image": {"steps": {"4": {"likeness": stored, "image_quality": 0.5, "n_images": 1}}}}}
        assert image_parts(run)[4]["likeness"] == read
        assert raw_figures("likeness", {"raw": stored}).get("likeness") == read
