"""The image judges' models chosen per session (Setup's judges fields, ``run --judge-*``), SigLIP as
the text-image model, and models read as data only.

The models a session chooses travel in its settings (``SearchSettings.image_models``): through the
form and back, through the store, into Start's check (one ``error:`` line before anything is made),
``doctor`` and the scorer, each one not chosen falling back to ``.env``. Tiny random CLIP and SigLIP
checkpoints built in the test are loaded through the same path a user's weights take.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil

import pytest
from PIL import Image

from bracket.app.form_values import IMAGE_MODEL_BOXES, form_values
from bracket.app.forms import settings_from_form
from bracket.judge.image_models import TransformersBackbone, check_weights
from bracket.session import SearchSettings, SettingsError
from bracket.session.scoring.image_config import ImageJudgeConfig, check_image_judges, image_judge_config
from tests.judge.tiny_models import tiny_clip, tiny_siglip

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("chosen")
    return tiny_clip(root / "clip"), tiny_siglip(root / "siglip")


def pictures(count: int = 3) -> list[Image.Image]:
    return [Image.new("RGB", (40 + 8 * n, 36), (60 * n, 20, 200 - 50 * n)) for n in range(count)]


def test_chosen_models_go_through_the_form_the_store_and_back(models):
    clip, siglip = models
    settings = settings_from_form(budget=2, steps=10, seeds=1, judge_text_image=f"  {siglip} ",
                                  judge_likeness=str(clip), judge_preference="")
    assert settings.image_models == {"text_image": str(siglip), "likeness": str(clip)}  # blank: .env's
    values = form_values("demo-cpu", {}, settings)
    assert {name: values[name] for name in IMAGE_MODEL_BOXES} == {
        "judge_text_image": str(siglip), "judge_likeness": str(clip), "judge_preference": ""}
    again = settings_from_form(budget=2, steps=10, seeds=1, **{name: values[name] for name in IMAGE_MODEL_BOXES})
    assert again.to_dict() == settings.to_dict()
    stored = SearchSettings.from_dict(json.loads(json.dumps(settings.to_dict())))
    assert stored.image_models == settings.image_models and SearchSettings.stored_problem(settings.to_dict()) is None
    assert "image_models" in SearchSettings.stored_problem({**settings.to_dict(), "image_models": "x"})
    for bad in ({"python": "/usr/bin/python3"}, {"text_image": "a\nb"}, {"text_image": 3}):
        with pytest.raises(SettingsError, match="image judges' models|text-image model"):
            SearchSettings(image_models=bad).validate()


def test_a_chosen_model_overrides_env_and_the_rest_fall_back_to_it(models, monkeypatch):
    clip, siglip = models
    monkeypatch.setenv("BRACKET_JUDGE_TEXT_IMAGE", "/nowhere/clip")
    monkeypatch.setenv("BRACKET_JUDGE_LIKENESS", str(clip))
    monkeypatch.setenv("BRACKET_JUDGE_PYTHON", "")
    config = image_judge_config(models={"text_image": str(siglip)})
    assert (config.text_image, config.likeness, config.preference) == (str(siglip), str(clip), "")
    assert check_image_judges(config) is None
    assert image_judge_config().text_image == "/nowhere/clip"  # no session's choice: .env's
    assert "no such folder" in check_image_judges(image_judge_config())
    monkeypatch.delenv("BRACKET_JUDGE_TEXT_IMAGE")
    assert image_judge_config() is None and image_judge_config(models={"text_image": str(clip)}).text_image == str(clip)


def _run(args: list[str]) -> tuple[int, list[str]]:
    from bracket.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, err.getvalue().strip().splitlines()


def test_start_refuses_a_bad_chosen_model_with_one_line_before_anything_is_made(models, tmp_path, monkeypatch):
    clip, _ = models
    monkeypatch.setenv("BRACKET_JUDGE_TEXT_IMAGE", str(clip))  # .env is fine; the session's choice is not
    broken = tmp_path / "broken"
    shutil.copytree(clip, broken)
    (broken / "model.safetensors").unlink()
    (broken / "pytorch_model.bin").write_bytes(b"a pickle")
    code, lines = _run(["run", "--preset", "demo-cpu", "--name", "judged", "--out", str(tmp_path / "runs"),
                        "--budget", "1", "--steps", "4", "--quiet", "--judge-text-image", str(broken)])
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith("error: Image judges: text-image model ") and str(broken) in lines[0]
    assert "pickled pytorch_model.bin is not read" in lines[0]
    assert not (tmp_path / "runs" / "judged").exists()
    code, lines = _run(["run", "--preset", "demo-cpu", "--name", "judged", "--out", str(tmp_path / "runs"),
                        "--budget", "1", "--steps", "4", "--quiet", "--judge-likeness", str(tmp_path / "no-dino")])
    assert code == 2 and len(lines) == 1 and "likeness model" in lines[0] and "no such folder" in lines[0], lines
    assert not (tmp_path / "runs" / "judged").exists()


def test_the_web_form_start_refuses_a_bad_chosen_model_in_one_line(models, runs_dir, monkeypatch):
    from bracket.app.manager import SessionManager
    from ui import setup_tab

    clip, _ = models
    monkeypatch.setenv("BRACKET_JUDGE_TEXT_IMAGE", str(clip))
    message, *_ = setup_tab.start_search(SessionManager(), preset_id="demo-cpu", fields={}, budget=1, steps=4,
                                         seeds=1, prompts="zqx, a photo --d 1", judge_text_image="/nowhere/siglip")
    assert message.startswith("⚠ Image judges: text-image model /nowhere/siglip") and "\n" not in message
    assert list(runs_dir.iterdir()) == []  # nothing made


def test_doctor_checks_the_models_run_would_use(models, tmp_path, monkeypatch):
    from bracket.cli.doctor import run_doctor

    clip, siglip = models
    monkeypatch.delenv("BRACKET_JUDGE_TEXT_IMAGE", raising=False)
    assert not [c for c in run_doctor("demo-cpu", {}).checks if c.name == "image judges"]
    found = [c for c in run_doctor("demo-cpu", {}, image_models={"text_image": str(siglip)}).checks
             if c.name == "image judges"]
    assert len(found) == 1 and found[0].ok and str(siglip) in found[0].message
    bad = [c for c in run_doctor("demo-cpu", {}, image_models={"text_image": str(siglip),
                                                               "preference": str(tmp_path / "none")}).checks
           if c.name == "image judges"]
    assert len(bad) == 1 and not bad[0].ok and "preference model" in bad[0].message and "\n" not in bad[0].message


def test_siglip_is_a_text_image_model_through_the_users_path(models):
    clip, siglip = models
    assert check_weights(str(siglip), ("clip", "siglip"), "text-image") == "siglip"
    backbone = TransformersBackbone(str(siglip), str(clip), device="cpu", batch_size=2, preference=str(siglip))
    assert backbone.kind == "siglip" and type(backbone.model).__name__ == "SiglipModel"
    similarity = backbone.prompt_similarity(pictures(), ["zqx in the snow", "zqx, a watercolor", "zqx"])
    assert len(similarity) == 3 and all(-1.0 <= v <= 1.0 for v in similarity)
    assert len(set(round(v, 6) for v in similarity)) == 3  # the images and prompts reach the model
    quality = backbone.quality(pictures())
    assert len(quality) == 3 and all(0.0 < q < 1.0 for q in quality)
    rows = backbone.image_embeddings(pictures())  # likeness from a CLIP's image tower (16-dim)
    assert len(rows[0]) == 16 and all(abs(sum(v * v for v in row) - 1.0) < 1e-4 for row in rows)
    assert len(TransformersBackbone(str(siglip), device="cpu").image_embeddings(pictures(1))[0]) == 32
    preference = backbone.preference(pictures(2), ["zqx", "zqx"])
    assert len(preference) == 2 and preference[0] != preference[1]


def test_a_model_folder_is_read_as_data_never_run(models, tmp_path):
    clip, _ = models
    planted = tmp_path / "planted"
    shutil.copytree(clip, planted)
    marker = tmp_path / "ran"
    (planted / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n"
                                     "from transformers import CLIPModel as Evil\n", encoding="utf-8")
    config = json.loads((planted / "config.json").read_text(encoding="utf-8"))
    config["auto_map"] = {"AutoModel": "evil.Evil", "AutoConfig": "evil.Evil"}
    (planted / "config.json").write_text(json.dumps(config), encoding="utf-8")
    processor = json.loads((planted / "processor_config.json").read_text(encoding="utf-8"))
    processor["auto_map"] = {"AutoProcessor": "evil.Evil"}
    (planted / "processor_config.json").write_text(json.dumps(processor), encoding="utf-8")
    backbone = TransformersBackbone(str(planted), device="cpu")
    assert type(backbone.model).__name__ == "CLIPModel" and len(backbone.quality(pictures(1))) == 1
    assert not marker.exists()  # the checkpoint's own code was never imported
    assert check_image_judges(ImageJudgeConfig(text_image=str(planted))) is None


def test_the_scorer_of_a_session_uses_its_chosen_model_not_envs(models, tmp_path, monkeypatch):
    from bracket.session.create import create_session
    from bracket.session.scoring.image_scorer import session_image_scorer

    _, siglip = models
    monkeypatch.setenv("BRACKET_JUDGE_TEXT_IMAGE", str(siglip))  # Start checks .env's too, where nothing is chosen
    chosen = SearchSettings(budget=1, steps=4, sample_prompts="zqx, a photo --d 1\n# held-out\nzqx in snow --d 2",
                            image_models={"text_image": str(siglip), "likeness": str(siglip)})
    parts = create_session("demo-cpu", {}, chosen, out_dir=tmp_path / "runs", name="chosen")
    monkeypatch.setenv("BRACKET_JUDGE_TEXT_IMAGE", "/nowhere/clip")  # .env changed since: the session keeps its own
    scorer = session_image_scorer(parts)
    assert scorer.config.text_image == str(siglip) and scorer.config.likeness == str(siglip)
    stored = SearchSettings.from_dict(parts.store.get_session("chosen")["settings"])
    assert stored.image_models == chosen.image_models  # a resumed session reads the same
    parts.store.close()


@pytest.mark.slow
def test_the_worker_scores_with_the_chosen_siglip(models, store, tmp_path, monkeypatch):
    from bracket.session.process.execute import sample_record
    from bracket.session.scoring import collect_samples
    from bracket.session.scoring.image_scorer import ImageScorer
    from bracket.trainer.prompts import parse_prompt_lines

    _, siglip = models
    monkeypatch.setenv("BRACKET_JUDGE_TEXT_IMAGE", "/nowhere/clip")
    sample_dir = tmp_path / "run" / "sample"
    sample_dir.mkdir(parents=True)
    for n, picture in enumerate(pictures(2)):
        picture.save(sample_dir / f"demo_000004_{n:02d}_20261202120000_{n + 1}.png")
    run_id = store.add_run("s", kind="search", status="done", run_dir=str(tmp_path / "run"), last_step=4,
                           samples=[sample_record(s) for s in collect_samples(sample_dir)])
    pictures(1)[0].save(tmp_path / "ref.png")
    config = image_judge_config(models={"text_image": str(siglip)})
    scorer = ImageScorer(store, "s", tmp_path / "session", config,
                         parse_prompt_lines("zqx, a photo --d 1\n# held-out\nzqx in the snow --d 2"),
                         [tmp_path / "ref.png"])
    scorer.submit(run_id)
    scorer.drain(280)
    record = store.get_run(run_id)["judges"]["image"]
    assert "error" not in record, (tmp_path / "session" / "logs" / "image-judges.log").read_text()
    step = record["steps"]["4"]
    assert -1 <= step["likeness"] <= 1 and -1 <= step["prompt_following"] <= 1 and 0 < step["image_quality"] < 1
