"""The image judges' real loading and forward code, on tiny random models built in the test.

A 2-layer CLIP (with a local byte-level tokenizer and image processor) and a 2-layer DINOv2 are
saved with ``save_pretrained`` to a temp folder and loaded through the path a user's weights
take (a folder, or a Hugging Face name found in the local cache only); no download, no network.
The figures of random models mean nothing; what is checked is that every judge runs end to end,
gives numbers on its scale, and that a missing or broken weight is one sentence before anything runs.
"""

from __future__ import annotations

import json
import shutil

import pytest
from PIL import Image

from bracket.judge.image_models import TransformersBackbone, WeightsProblem, check_weights, model_folder
from bracket.session.scoring.image_config import ImageJudgeConfig, check_image_judges
from bracket.session.scoring.image_scorer import ImageScorer
from bracket.trainer.prompts import parse_prompt_lines
from tests.judge.tiny_models import tiny_clip, tiny_dinov2

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return tiny_clip(root / "clip"), tiny_dinov2(root / "dino")


def pictures(count: int = 3) -> list[Image.Image]:
    return [Image.new("RGB", (40 + 8 * n, 36), (60 * n, 20, 200 - 50 * n)) for n in range(count)]


def test_every_judge_loads_and_runs_forward_on_tiny_models(models):
    clip, dino = models
    backbone = TransformersBackbone(str(clip), str(dino), device="cpu", batch_size=2)  # batches of 2 of 3
    rows = backbone.image_embeddings(pictures())
    assert len(rows) == 3 and len(rows[0]) == 32  # DINOv2's hidden size, not CLIP's 16
    assert all(abs(sum(v * v for v in row) - 1.0) < 1e-4 for row in rows)  # unit vectors: cosines
    similarity = backbone.prompt_similarity(pictures(), ["zqx in the snow", "zqx, a watercolor", "zqx"])
    assert len(similarity) == 3 and all(-1.0 <= v <= 1.0 for v in similarity)
    quality = backbone.quality(pictures())
    assert len(quality) == 3 and all(0.0 < q < 1.0 for q in quality)
    clip_only = TransformersBackbone(str(clip), None, device="cpu")
    assert len(clip_only.image_embeddings(pictures(1))[0]) == 16  # likeness from CLIP's image tower
    # the same image twice: the same figures (inference is deterministic, batching changes nothing)
    assert backbone.quality(pictures(1) * 2)[0] == pytest.approx(backbone.quality(pictures(1))[0], abs=1e-5)


def test_a_hugging_face_name_is_read_from_the_local_cache_only(models, tmp_path, monkeypatch):
    clip, _ = models
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cache = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    hint = "install.sh --judges fetches the default models; any other: hf download"
    with pytest.raises(WeightsProblem, match="not in the Hugging Face cache.*" + hint):
        model_folder("someone/tiny-clip")
    # laid out as snapshot_download leaves it: models--<owner>--<name>/snapshots/<rev> and refs/main
    repo = cache / "models--someone--tiny-clip"
    shutil.copytree(clip, repo / "snapshots" / "abc123")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123", encoding="utf-8")
    import huggingface_hub.constants as hub

    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(cache))
    assert model_folder("someone/tiny-clip") == repo / "snapshots" / "abc123"
    assert check_weights("someone/tiny-clip", ("clip",), "text-image") == "clip"


def test_a_missing_or_broken_weight_is_one_sentence(models, tmp_path):
    clip, dino = models
    assert check_image_judges(ImageJudgeConfig(text_image=str(clip), likeness=str(dino))) is None
    assert "no such folder" in check_image_judges(ImageJudgeConfig(text_image=str(tmp_path / "nowhere")))
    wrong = check_image_judges(ImageJudgeConfig(text_image=str(dino)))
    assert "is a dinov2" in wrong and "clip or siglip checkpoint" in wrong
    broken = tmp_path / "broken"
    shutil.copytree(clip, broken)
    (broken / "model.safetensors").unlink()
    assert "no safetensors weights file" in check_image_judges(ImageJudgeConfig(text_image=str(broken)))
    (broken / "config.json").write_text("{not json", encoding="utf-8")
    assert "cannot read" in check_image_judges(ImageJudgeConfig(text_image=str(broken)))
    python = check_image_judges(ImageJudgeConfig(text_image=str(clip), python=str(tmp_path / "no-python")))
    assert "BRACKET_JUDGE_PYTHON" in python
    for problem in (wrong, python):
        assert "\n" not in problem


@pytest.mark.slow
def test_the_worker_process_scores_images_and_video_frames_with_the_tiny_models(models, store, tmp_path):
    import imageio.v2 as imageio
    import numpy as np

    from bracket.session.process.execute import sample_record
    from bracket.session.scoring import collect_samples

    clip, dino = models
    sample_dir = tmp_path / "run" / "sample"
    sample_dir.mkdir(parents=True)
    for n, picture in enumerate(pictures(2)):
        picture.save(sample_dir / f"demo_000004_{n:02d}_20261202120000_{n + 1}.png")
    with imageio.get_writer(str(sample_dir / "demo_000004_02_20261202120000_3.mp4"), fps=4) as writer:
        for shade in range(4):
            writer.append_data(np.full((32, 32, 3), 60 * shade, dtype=np.uint8))
    samples = [sample_record(s) for s in collect_samples(sample_dir)]
    run_id = store.add_run("s", kind="search", status="done", run_dir=str(tmp_path / "run"), last_step=4,
                           samples=samples)
    refs = tmp_path / "refs"
    refs.mkdir()
    pictures(1)[0].save(refs / "ref.png")
    prompts = parse_prompt_lines("zqx, a photo --d 1\n# held-out\nzqx in the snow --d 2\nzqx underwater --d 3")
    scorer = ImageScorer(store, "s", tmp_path / "session", ImageJudgeConfig(text_image=str(clip), likeness=str(dino),
                                                                          device="cpu"),
                         prompts, [refs / "ref.png"])
    scorer.submit(run_id)
    scorer.drain(280)
    record = store.get_run(run_id)["judges"]["image"]
    assert "error" not in record, (tmp_path / "session" / "logs" / "image-judges.log").read_text()
    step = record["steps"]["4"]
    assert step["n_images"] == 3 and -1 <= step["likeness"] <= 1 and -1 <= step["prompt_following"] <= 1
    assert 0 < step["image_quality"] < 1
    video = next(v for path, v in record["images"].items() if path.endswith(".mp4"))
    assert video["prompt_kind"] == "held_out" and video["prompt_following"] is not None  # judged from frames
    assert scorer.last_timing["peak_rss_mb"] > 0
    cache = json.loads((tmp_path / "session" / "views" / "image_judges.json").read_text(encoding="utf-8"))
    assert len(cache) == 3
