"""The judge worker embeds a search's reference images once: its ``Models`` keep their embeddings
(likeness and faces) from job to job while the models and the reference files (path, mtime, size)
are the same. Real loading and forward code on a tiny random CLIP and DINOv2 built in the test,
OpenCV's bundled face detector on drawn faces; no download."""

from __future__ import annotations

import os

import pytest

from bracket.judge.image_models import TransformersBackbone
from bracket.judge.image_worker import Models, run
from tests.judge.drawn_faces import face_scene
from tests.judge.tiny_models import tiny_clip, tiny_dinov2

pytestmark = pytest.mark.timeout(300)

SKIN, GREEN, BLUE = (225, 185, 160), (40, 160, 60), (60, 90, 200)


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {"text_image": str(tiny_clip(root / "clip")), "likeness": str(tiny_dinov2(root / "dino")),
            "device": "cpu", "batch_size": 4, "faces": True}


def test_the_references_are_embedded_once_for_every_job_while_their_files_stay_the_same(spec, tmp_path,
                                                                                        monkeypatch):
    references = [tmp_path / "ref1.png", tmp_path / "ref2.png"]
    face_scene(SKIN, GREEN).save(references[0])
    face_scene(SKIN, BLUE, at=(60, 200)).save(references[1])
    sample = tmp_path / "s_000004_00.png"
    face_scene(SKIN, (200, 60, 60)).save(sample)
    held_out = tmp_path / "s_000004_01.png"
    face_scene(SKIN, BLUE).save(held_out)
    job = {"backbone": spec, "references": [str(p) for p in references], "video_frames": 1,
           "images": [{"path": str(sample), "prompt": "zqx, a portrait", "kind": "in"},
                      {"path": str(held_out), "prompt": "zqx on the moon", "kind": "held_out"}]}
    embedded: list[int] = []  # images per embedding call (likeness and face crops: no face model)
    image_embeddings = TransformersBackbone.image_embeddings
    monkeypatch.setattr(TransformersBackbone, "image_embeddings",
                        lambda self, images: embedded.append(len(images)) or image_embeddings(self, images))
    models = Models()
    first = run(job, models)
    assert first["images"][str(sample)]["face"] == "found"  # the face judge ran on both sides
    assert sum(embedded) == 2 + 2 + 1 + 1  # the references and their faces, the sample and its face
    second = run(job, models)
    assert sum(embedded) == 6 + 1 + 1  # the next run's job: its sample only, the references kept
    assert second["images"] == first["images"] and second["loads"] == 1
    os.utime(references[1], ns=(references[1].stat().st_atime_ns, references[1].stat().st_mtime_ns + 10**9))
    run(job, models)
    assert sum(embedded) == 8 + 6  # a reference file changed (its mtime): read and embedded again
    face_scene(SKIN, GREEN, canvas=384).save(references[0])
    fresh = run(job, Models())
    kept = run(job, models)
    assert sum(embedded) == 14 + 6 + 6  # another file (its size): a fresh worker's count, once each
    assert kept["images"] == fresh["images"]
    assert run(job, models)["images"] == kept["images"] and sum(embedded) == 26 + 2
