"""The likeness references are dataset images no run trains on, where the dataset is big enough.

A session created with the image judges on (the stand-in backbone) holds a share of a 20-image
dataset out (``bracket.dataset.references``): the dataset config the trainer reads — parsed as
sd-scripts and musubi-tuner read it, every image of its folders — lacks exactly those images, in
every run, in the cache set-up and in the export, and the image scorer's references are exactly
them. A 5-image dataset holds nothing out and says so; a session without image judges trains on
every image. ai-toolkit's job file leaves them out beside its validation images."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from PIL import Image

from bracket.dataset.preflight import IMAGE_EXTENSIONS
from bracket.session.create import create_session, open_session
from bracket.session.scoring.image_scorer import session_image_scorer
from bracket.session.search_settings import SearchSettings
from bracket.trainer.base import RunRequest
from bracket.trainer.inventory import flags_by_repo
from tests.fakes import install_inventory_scripts, make_fake_python

PROMPTS = "zqx, a red square --d 1\n# held-out\nzqx, underwater, surrounded by fish --d 2\n"
WEIGHTS = {"loss": 1.0, "likeness": 1.0, "prompt_following": 1.0, "image_quality": 0.5}


def dataset(folder: Path, count: int) -> Path:
    folder.mkdir(parents=True)
    for n in range(count):
        Image.new("RGB", (32, 32), (10 * n, 0, 0)).save(folder / f"img{n:02d}.png")
        (folder / f"img{n:02d}.txt").write_text(f"zqx, a red square {n}", encoding="utf-8")
    return folder


def sdxl_fields(tmp_path: Path, images: Path) -> dict[str, str]:
    scripts = ("sdxl_train_network.py", "tools/cache_latents.py", "tools/cache_text_encoder_outputs.py")
    model = tmp_path / "sdxl.safetensors"
    model.write_bytes(b"fake")
    return {"sd_scripts_dir": str(install_inventory_scripts(tmp_path / "sd-scripts", "kohya-ss/sd-scripts", scripts)),
            "trainer_python": str(make_fake_python(tmp_path / "bin")), "model_path": str(model),
            "dataset": str(images)}


def zimage_fields(tmp_path: Path, images: Path) -> dict[str, str]:
    scripts = [k for k in flags_by_repo()["kohya-ss/musubi-tuner"]["scripts"] if "/zimage_" in k]
    values = {"musubi_dir": str(install_inventory_scripts(tmp_path / "musubi", "kohya-ss/musubi-tuner", scripts)),
              "trainer_python": str(make_fake_python(tmp_path / "bin")), "dataset": str(images)}
    for name in ("dit", "vae", "text_encoder"):
        (tmp_path / f"{name}.safetensors").write_bytes(b"fake")
        values[name] = str(tmp_path / f"{name}.safetensors")
    return values


def trained_images(toml: Path) -> set[Path]:
    """Every image the trainer reads through ``toml``: the media of each subset's / dataset's folder."""
    document = tomllib.loads(Path(toml).read_text(encoding="utf-8"))
    found = set()
    for entry in document["datasets"]:
        for subset in entry.get("subsets", [entry]):
            folder = Path(subset.get("image_dir") or subset.get("image_directory"))
            found |= {p.resolve() for p in folder.iterdir() if p.suffix.lower() in IMAGE_EXTENSIONS}
            assert all(p.with_suffix(".txt").exists() for p in folder.iterdir() if p.suffix == ".png")
    return found


def launch(parts, run_dir: Path, **extra) -> Path:
    trainer = parts.trainer
    spec = trainer.prepare_run(RunRequest(run_dir=run_dir, knobs=trainer.baseline_config().knobs,
                                          dataset=Path(parts.fields["dataset"]), max_steps=6, seed=1,
                                          sample_prompts=parts.settings.prompts(), **extra))
    return Path(spec.cmd[spec.cmd.index("--dataset_config") + 1])


def create(preset_id: str, fields: dict[str, str], tmp_path: Path, name: str = "s"):
    settings = SearchSettings(budget=2, steps=6, sample_prompts=PROMPTS, weights=WEIGHTS)
    return create_session(preset_id, fields, settings, name=name, out_dir=tmp_path / "runs")


@pytest.mark.parametrize("preset_id, fields", [("sdxl-lora", sdxl_fields), ("zimage-lora", zimage_fields)])
def test_held_out_images_are_never_trained_on_and_are_the_likeness_references(preset_id, fields, tmp_path,
                                                                              monkeypatch):
    monkeypatch.setenv("BRACKET_JUDGE_BACKBONE", "tests.fakes.image_backbone:Backbone")
    images = dataset(tmp_path / "images", 20)
    everything = {p.resolve() for p in images.glob("*.png")}
    parts = create(preset_id, fields(tmp_path, images), tmp_path)
    try:
        held = set(parts.trainer.held_out_references)
        assert len(held) == 2 and held < everything and parts.settings.reference_holdout == 2
        assert any("2 of the dataset's 20 images are held out" in n for n in parts.notes), parts.notes
        for n in (1, 2):  # every run, the same split
            assert trained_images(launch(parts, parts.folder / f"run{n}")) == everything - held
        setup = parts.trainer.session_setup_commands(dataset=images, run_dir=parts.folder / "setup")
        toml = Path(setup[0].cmd[setup[0].cmd.index("--dataset_config") + 1])
        assert trained_images(toml) == everything - held  # nothing of theirs is cached either
        scorer = session_image_scorer(parts)
        assert {Path(p) for p in scorer.references} == held
        assert scorer.reference_note["source"] == "held-out images" and scorer.reference_note["count"] == 2
        scorer.drain(1)
    finally:
        parts.store.close()
    reopened = open_session(parts.folder)
    try:
        assert set(reopened.trainer.held_out_references) == held
        # the export trains on the search's images, from links of its own (its caching too)
        exported = launch(reopened, tmp_path / "export" / "run", standalone=True, cache_dir=tmp_path / "export" / "c")
        assert trained_images(exported) == everything - held
        document = tomllib.loads(exported.read_text())["datasets"]
        assert all(Path(e.get("image_dir") or e.get("image_directory")).is_relative_to(tmp_path / "export")
                   for d in document for e in d.get("subsets", [d]))
        request = RunRequest(run_dir=tmp_path / "export" / "run", knobs=reopened.trainer.baseline_config().knobs,
                             dataset=images, max_steps=6, seed=1, standalone=True, cache_dir=tmp_path / "export" / "c")
        setup = reopened.trainer.export_setup_commands(request)
        assert bool(setup) == (preset_id == "zimage-lora")
        for step in setup:  # musubi caches first
            assert trained_images(Path(step.cmd[step.cmd.index("--dataset_config") + 1])) == everything - held
    finally:
        reopened.store.close()


def test_a_small_dataset_holds_nothing_out_and_says_likeness_uses_training_images(tmp_path, monkeypatch):
    monkeypatch.setenv("BRACKET_JUDGE_BACKBONE", "tests.fakes.image_backbone:Backbone")
    images = dataset(tmp_path / "images", 5)
    parts = create("sdxl-lora", sdxl_fields(tmp_path, images), tmp_path)
    try:
        assert parts.trainer.held_out_references == () and parts.settings.reference_holdout == 0
        assert any("the dataset has 5 images, fewer than 12, so none is held out" in n for n in parts.notes)
        assert len(trained_images(launch(parts, parts.folder / "run1"))) == 5
        scorer = session_image_scorer(parts)
        assert len(scorer.references) == 5 and scorer.reference_note["source"] == "training images"
        assert "fewer than 12" in scorer.reference_note["note"]
        scorer.drain(1)
    finally:
        parts.store.close()


def test_without_image_judges_every_image_is_trained_on(tmp_path, monkeypatch):
    monkeypatch.delenv("BRACKET_JUDGE_BACKBONE", raising=False)
    monkeypatch.delenv("BRACKET_JUDGE_TEXT_IMAGE", raising=False)
    images = dataset(tmp_path / "images", 20)
    settings = SearchSettings(budget=2, steps=6, sample_prompts=PROMPTS)
    parts = create_session("sdxl-lora", sdxl_fields(tmp_path, images), settings, name="s", out_dir=tmp_path / "r")
    try:
        assert parts.trainer.held_out_references == () and not any("Likeness" in n for n in parts.notes)
        assert len(trained_images(launch(parts, parts.folder / "run1"))) == 20
    finally:
        parts.store.close()


def test_ai_toolkit_leaves_the_references_out_beside_its_validation_images(tmp_path):
    from bracket.dataset.references import held_out_references
    from bracket.trainer.heldout import ValidationPlan
    from tests.ai_toolkit.helpers import build, image_folder, process_of

    images = image_folder(tmp_path, count=20)
    trainer = build("aitk-chroma-lora", tmp_path, images)
    trainer.validation = ValidationPlan(0.1, 7)
    trainer.held_out_references = tuple(held_out_references(images, trainer.dataset_style, 2))
    spec = trainer.prepare_run(RunRequest(run_dir=tmp_path / "run", knobs=trainer.baseline_config().knobs,
                                          dataset=images, max_steps=100, seed=3))
    process = process_of(spec)
    validation = {Path(i["image_path"]).resolve() for i in process["train"]["validation_config"]["validation_items"]}
    trained = {p.resolve() for p in Path(process["datasets"][0]["folder_path"]).glob("*.png")}
    held = set(trainer.held_out_references)
    assert len(validation) == 2 and len(held) == 2
    assert trained == {p.resolve() for p in images.glob("*.png")} - validation - held
