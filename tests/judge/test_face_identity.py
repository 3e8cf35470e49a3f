"""The optional face-identity judge: OpenCV's bundled face detector on faces drawn in the test, face
crops embedded by the real loading and forward code (a tiny random DINOv2 saved in the test) or a
deterministic stand-in, samples without a face noted, faces more like the reference ranked first,
off by default, and its pieces checked at Start and in ``doctor``."""

from __future__ import annotations

import contextlib
import io
import json
import math
import shutil
import sys

import pytest

from bracket.judge.combine import DEFAULT_WEIGHTS, check_weights_score
from bracket.judge.faces import NO_FACE, NO_REFERENCE_FACE, FaceDetector, detector_problem
from bracket.judge.image_worker import embed_references, load_backbone, run, score_images
from bracket.report.image_table import image_rows, image_section
from bracket.session.scoring import score_runs
from bracket.session.scoring.image_config import ImageJudgeConfig, check_image_judges, face_check, image_judge_config
from bracket.session.scoring.image_judges import image_results, scores_at
from bracket.session.scoring.image_scorer import build_record
from bracket.trainer.prompts import parse_prompt_lines
from tests.judge.drawn_faces import drawn_face, face_scene, faceless
from tests.judge.tiny_models import tiny_clip, tiny_dinov2

pytestmark = pytest.mark.timeout(300)

SKIN = (225, 185, 160)  # the subject's
OTHER = (120, 160, 220)  # another "person": the far end of the planted fade
GREEN, RED = (40, 160, 60), (200, 60, 60)


def blend(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> tuple[int, int, int]:
    return tuple(round(x + (y - x) * t) for x, y in zip(a, b))  # type: ignore[return-value]


class MeanColour:
    """A deterministic stand-in embedding: the mean colour of an image's middle third (where a face
    crop has the face), centred and made unit length."""

    def __init__(self, **spec):
        self.spec = spec

    def image_embeddings(self, images):
        rows = []
        for image in images:
            w, h = image.size
            middle = image.convert("RGB").crop((w // 3, h // 3, w - w // 3, h - h // 3))
            pixels = list(middle.get_flattened_data())
            centred = [sum(p[c] for p in pixels) / len(pixels) / 255.0 - 0.5 for c in range(3)]
            norm = math.sqrt(sum(v * v for v in centred)) or 1.0
            rows.append([v / norm for v in centred])
        return rows

    def prompt_similarity(self, images, texts):
        return [0.0 for _ in images]

    def quality(self, images):
        return [0.5 for _ in images]


def test_the_bundled_detector_finds_a_drawn_face_where_it_is_and_none_in_a_faceless_picture():
    assert detector_problem() is None  # opencv-python-headless 4.x ships the cascade: nothing to fetch
    detector = FaceDetector()
    boxes = detector.boxes(face_scene(SKIN, GREEN, at=(300, 40)))
    assert len(boxes) == 1
    x, y, w, h = boxes[0]
    assert 300 <= x <= 300 + 160 and 40 <= y <= 40 + 160 and 80 <= w <= 200  # the face, not the background
    crop = detector.largest_face(face_scene(SKIN, GREEN, at=(300, 40)))
    assert crop is not None and crop.width > w and crop.width < 512  # the face with a margin, not the picture
    assert detector.boxes(faceless(GREEN)) == [] and detector.largest_face(faceless(RED)) is None


def test_faces_more_like_the_reference_rank_first_whatever_the_background(tmp_path):
    # The subject's skin fades into another's over runs 1..4 while the background moves from red to
    # the reference's green: the whole picture grows more like the reference as the face grows less.
    references = [face_scene(SKIN, GREEN), face_scene(SKIN, GREEN, at=(60, 200))]
    fades = [0.0, 0.35, 0.7, 1.0]
    prompts = parse_prompt_lines("zqx, a portrait --d 1\nzqx, a photo --d 2\n# held-out\nzqx on the moon --d 3")
    runs = []
    for run_id, fade in enumerate(fades, start=1):
        folder = tmp_path / f"run{run_id}"
        folder.mkdir()
        pictures = [face_scene(blend(SKIN, OTHER, fade), blend(RED, GREEN, fade)),
                    faceless(blend(RED, GREEN, fade)),  # an in-distribution sample that lost the face
                    face_scene(blend(SKIN, OTHER, fade), (90, 110, 140))]  # held out: not judged for faces
        rows = []
        for n, (prompt, picture) in enumerate(zip(prompts, pictures)):
            path = folder / f"s_000004_{n:02d}.png"
            picture.save(path)
            rows.append((4, path, prompt))
        detector = FaceDetector()
        scored = score_images(MeanColour(), embed_references(MeanColour(), references, detector),
                              [{"path": str(p), "prompt": q.text, "kind": q.kind} for _, p, q in rows], 3, detector)
        first, lost, held = (scored[str(p)] for _, p, _ in rows)
        assert first["face"] == "found" and -1.0 <= first["face_identity"] <= 1.0
        assert lost["face"] == NO_FACE and lost["face_identity"] is None  # noted, not a 0
        assert "face" not in held and "face_identity" not in held
        record = build_record({"run_dir": str(folder)}, [(s, p, q, scored[str(p)]) for s, p, q in rows],
                              {"count": 2, "source": "held-out images"})
        assert record["steps"]["4"]["faces"] == "1 of 2"
        assert record["images"]["s_000004_01.png"]["face"] == NO_FACE
        runs.append({"id": run_id, "config_id": run_id, "stage": "search", "kind": "search", "status": "done",
                     "last_step": 4, "run_dir": str(folder), "loss": [(s, 0.5) for s in range(1, 5)], "params": {},
                     "judges": {"image": record}})
    faces = [scores_at(r)[1]["face_identity"] for r in runs]
    likeness = [scores_at(r)[1]["likeness"] for r in runs]
    assert faces == sorted(faces, reverse=True) and len(set(faces)) == 4  # the planted order
    assert likeness == sorted(likeness)  # the whole pictures rank the other way: the crop is what is judged
    results = image_results(runs)["face_identity"]
    assert [results[i].score for i in (1, 4)] == [0.0, 1.0]
    assert [results[i].score for i in (1, 2, 3, 4)] == sorted(results[i].score for i in (1, 2, 3, 4))
    plain = score_runs(runs)  # off by default: no part in the score
    assert DEFAULT_WEIGHTS["face_identity"] == 0.0 and all("face_identity" not in s.used for s in plain.values())
    weighed = score_runs(runs, weights={"loss": 0.0, "human": 0.0, "image_quality": 0.0, "likeness": 0.0,
                                        "prompt_following": 0.0, "face_identity": 1.0})
    assert [weighed[i].value for i in (1, 2, 3, 4)] == sorted(weighed[i].value for i in (1, 2, 3, 4))
    assert weighed[1].value == 0.0 and weighed[4].value == 1.0
    section = image_section(image_rows([type("Row", (), {"name": "c1", "best_step": 4, "step_images": {4: {
        "likeness": 0.5, "image_quality": 0.5, "face_identity": faces[0]}}})()]))
    assert "face identity" in section[0][1][0][1]
    check_weights_score({name: 0.0 for name in DEFAULT_WEIGHTS} | {"face_identity": 1.0}, sample_kind="image",
                        judge_server=False, image_judges=True)  # alone it can score a session


def test_no_face_in_the_references_leaves_every_sample_without_a_figure_and_says_why(tmp_path):
    path = tmp_path / "s.png"
    face_scene(SKIN, GREEN).save(path)
    detector = FaceDetector()
    scored = score_images(MeanColour(), embed_references(MeanColour(), [faceless(GREEN)], detector),
                          [{"path": str(path), "prompt": "zqx", "kind": "in"}], 3, detector)
    assert scored[str(path)]["face"] == NO_REFERENCE_FACE and scored[str(path)]["face_identity"] is None
    assert scored[str(path)]["likeness"] is not None  # the other judges go on
    record = build_record({"run_dir": str(tmp_path)}, [(4, path, parse_prompt_lines("zqx")[0], scored[str(path)])],
                          {"count": 1})
    result = image_results([{"id": 1, "last_step": 4, "judges": {"image": record}}])["face_identity"][1]
    assert result.score is None and "face" in result.reason


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    return (tiny_clip(folder / "clip", seed=5), tiny_dinov2(folder / "face", seed=6),
            tiny_dinov2(folder / "dino", seed=7))


def test_a_face_model_embeds_the_crops_through_the_workers_loading_path(models, tmp_path):
    clip, face, dino = models
    backbone = load_backbone({"text_image": str(clip), "likeness": str(dino), "face": str(face), "device": "cpu",
                              "batch_size": 2})
    crops = [drawn_face(64, SKIN, GREEN), drawn_face(64, OTHER, RED), drawn_face(48, SKIN, RED)]
    rows = backbone.face_embeddings(crops)
    assert len(rows) == 3 and all(len(r) == 32 and abs(sum(v * v for v in r) - 1.0) < 1e-4 for r in rows)
    assert rows != backbone.image_embeddings(crops)  # the face model's, not the likeness model's
    assert backbone.face_embeddings(crops[:1])[0] == pytest.approx(rows[0], abs=1e-5)  # batching changes nothing
    plain = load_backbone({"text_image": str(clip), "likeness": str(dino), "device": "cpu"})
    assert plain.face_model is None
    same = zip(plain.face_embeddings(crops), plain.image_embeddings(crops))
    assert all(a == pytest.approx(b, abs=1e-5) for a, b in same)  # without one: the likeness model on the crop

    reference, sample, lost = tmp_path / "ref.png", tmp_path / "a.png", tmp_path / "b.png"
    face_scene(SKIN, GREEN).save(reference)
    face_scene(SKIN, RED).save(sample)
    faceless(RED).save(lost)
    result = run({"backbone": {"text_image": str(clip), "face": str(face), "faces": True, "device": "cpu"},
                  "references": [str(reference)],
                  "images": [{"path": str(sample), "prompt": "zqx", "kind": "in"},
                             {"path": str(lost), "prompt": "zqx", "kind": "in"}]})
    figures = result["images"]
    assert figures[str(sample)]["face"] == "found" and -1.0 <= figures[str(sample)]["face_identity"] <= 1.0
    assert figures[str(lost)]["face"] == NO_FACE and figures[str(lost)]["face_identity"] is None
    off = run({"backbone": {"text_image": str(clip), "device": "cpu"}, "references": [str(reference)],
               "images": [{"path": str(sample), "prompt": "zqx", "kind": "in"}]})
    assert "face_identity" not in off["images"][str(sample)]  # off: no detector, no figure


def test_start_and_doctor_check_its_pieces_only_when_it_is_on(models, tmp_path, monkeypatch):
    clip, face, _ = models
    monkeypatch.setenv("BRACKET_JUDGE_TEXT_IMAGE", str(clip))
    monkeypatch.delenv("BRACKET_JUDGE_BACKBONE", raising=False)
    monkeypatch.setenv("BRACKET_JUDGE_FACE", str(face))
    assert image_judge_config({"face_identity": 1.0}).faces and not image_judge_config({}).faces
    assert image_judge_config().face == str(face)
    assert check_image_judges(ImageJudgeConfig(text_image=str(clip), faces=True, face=str(face))) is None
    broken = tmp_path / "broken"
    shutil.copytree(face, broken)
    (broken / "model.safetensors").unlink()
    problem = check_image_judges(ImageJudgeConfig(text_image=str(clip), faces=True, face=str(broken)))
    assert "BRACKET_JUDGE_FACE" in problem and "no safetensors weights file" in problem and "\n" not in problem
    assert check_image_judges(ImageJudgeConfig(text_image=str(clip), face=str(broken))) is None  # off: not checked
    ok, message, warning = face_check(ImageJudgeConfig(text_image=str(clip), face=str(broken)))
    assert not ok and "BRACKET_JUDGE_FACE" in message  # doctor: a named face model that is broken fails
    assert face_check(ImageJudgeConfig(text_image=str(clip)))[0:3:2] == (True, False)

    monkeypatch.setitem(sys.modules, "cv2", None)  # OpenCV not installed: importing it fails
    problem = check_image_judges(ImageJudgeConfig(text_image=str(clip), faces=True))
    assert problem.startswith("the face-identity judge needs OpenCV") and "opencv-python-headless" in problem
    assert check_image_judges(ImageJudgeConfig(text_image=str(clip))) is None  # off: nothing to install
    ok, message, warning = face_check(ImageJudgeConfig(text_image=str(clip)))
    assert ok and warning and "opencv-python-headless" in message  # doctor: a warning while it is off



def test_start_refuses_in_one_line_and_doctor_names_the_face_pieces(models, tmp_path, monkeypatch):
    from bracket.cli import main
    from bracket.cli.doctor import run_doctor

    clip, face, _ = models
    monkeypatch.setenv("BRACKET_JUDGE_TEXT_IMAGE", str(clip))
    monkeypatch.delenv("BRACKET_JUDGE_BACKBONE", raising=False)
    monkeypatch.setenv("BRACKET_JUDGE_FACE", str(tmp_path / "no-face-model"))
    checks = {c.name: c for c in run_doctor("demo-cpu", {}).checks}
    assert checks["image judges"].ok and not checks["face identity"].ok  # a named face model that is not there
    assert "no-face-model" in checks["face identity"].message
    monkeypatch.setenv("BRACKET_JUDGE_FACE", str(face))
    checks = {c.name: c for c in run_doctor("demo-cpu", {}).checks}
    assert checks["face identity"].ok and str(face) in checks["face identity"].message

    monkeypatch.delenv("BRACKET_JUDGE_FACE")
    monkeypatch.setitem(sys.modules, "cv2", None)  # OpenCV not installed
    checks = {c.name: c for c in run_doctor("demo-cpu", {}).checks}
    assert checks["face identity"].ok and checks["face identity"].warning  # the judge is off unless weighted
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["run", "--preset", "demo-cpu", "--name", "faces", "--out", str(tmp_path / "runs"),
                     "--budget", "1", "--steps", "4", "--quiet", "--weights", "face_identity=1"])
    lines = err.getvalue().strip().splitlines()
    assert code == 2 and len(lines) == 1, err.getvalue()
    assert lines[0].startswith("error: Image judges: the face-identity judge needs OpenCV")
    assert "opencv-python-headless" in lines[0] and lines[0].endswith(",face_identity=0).")
    assert not (tmp_path / "runs" / "faces").exists()


def test_a_worker_whose_python_lacks_opencv_ends_with_one_error_line(tmp_path, monkeypatch, capsys):
    from bracket.judge.image_worker import main

    sample = tmp_path / "a.png"
    face_scene(SKIN, GREEN).save(sample)
    job = {"backbone": {"module": "tests.judge.test_face_identity:MeanColour", "faces": True},
           "references": [str(sample)], "images": [{"path": str(sample), "prompt": "zqx", "kind": "in"}]}
    (tmp_path / "job.json").write_text(json.dumps(job), encoding="utf-8")
    assert main([str(tmp_path / "job.json"), str(tmp_path / "result.json")]) == 0
    scored = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))["images"][str(sample)]
    assert scored["face"] == "found" and scored["face_identity"] == pytest.approx(1.0)  # the reference itself
    monkeypatch.setitem(sys.modules, "cv2", None)
    assert main([str(tmp_path / "job.json"), str(tmp_path / "other.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: image judges: the face-identity judge needs OpenCV")
    assert not (tmp_path / "other.json").exists()


def test_the_session_scorer_asks_for_faces_only_when_weighed_and_never_scores_a_sample_twice(tmp_path, monkeypatch):
    from bracket.session.scoring.image_scorer import ImageScorer

    monkeypatch.setenv("BRACKET_JUDGE_BACKBONE", "tests.judge.test_face_identity:MeanColour")
    monkeypatch.delenv("BRACKET_JUDGE_TEXT_IMAGE", raising=False)
    monkeypatch.delenv("BRACKET_JUDGE_FACE", raising=False)
    on, off = image_judge_config({"face_identity": 0.5}), image_judge_config({"likeness": 1.0})
    assert on.backbone()["faces"] and "faces" not in off.backbone() and on.digest() != off.digest()
    reference = tmp_path / "ref.png"
    face_scene(SKIN, GREEN).save(reference)
    prompts = parse_prompt_lines("zqx, a portrait --d 1\nzqx, a photo --d 2")
    run_dir = tmp_path / "run"
    (run_dir / "sample").mkdir(parents=True)
    samples = []
    for step, skin in ((2, OTHER), (4, SKIN)):
        for index, picture in enumerate((face_scene(skin, RED), faceless(RED))):
            path = run_dir / "sample" / f"s_{step:06d}_{index:02d}.png"
            picture.save(path)
            samples.append({"kind": "image", "step": step, "prompt_index": index, "path": str(path)})
    run_row = {"id": 1, "run_dir": str(run_dir), "last_step": 4, "samples": samples}
    scorer = ImageScorer(None, "s", tmp_path / "session", on, prompts, [reference])  # type: ignore[arg-type]
    record = scorer.record(run_row)  # the real worker process, the stand-in embedding
    assert record["steps"]["4"]["faces"] == "1 of 2"
    assert record["steps"]["4"]["face_identity"] == pytest.approx(1.0, abs=1e-3)  # the same face, another background
    assert record["steps"]["2"]["face_identity"] < record["steps"]["4"]["face_identity"]  # the face came in at 4
    assert record["images"]["sample/s_000004_01.png"]["face"] == NO_FACE
    monkeypatch.setattr(scorer, "_run_worker", lambda items: pytest.fail("scored twice"))
    assert scorer.record(run_row) == record  # every figure from the cache
    plain = ImageScorer(None, "s", tmp_path / "session", off, prompts, [reference])  # type: ignore[arg-type]
    assert "face_identity" not in plain.record(run_row)["steps"]["4"]  # off: no face figures, another cache key
    scorer.drain(30)
    plain.drain(30)  # each ends its worker process
