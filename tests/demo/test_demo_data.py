"""The demo dataset generator: images, captions, TOML, idempotence, prompts."""

from __future__ import annotations

import tomllib
from pathlib import Path

from PIL import Image

from bracket.dataset.demo_data import COLOURS, DEMO_PROMPTS, SHAPES, make_demo_dataset
from bracket.dataset.preflight import preflight_dataset
from bracket.dataset.runtime import derive_run_toml
from bracket.trainer.prompts import parse_prompt_lines


def test_writes_captioned_images_and_a_toml(tmp_path):
    toml = make_demo_dataset(tmp_path / "demo", count=24, seed=3)
    assert toml == tmp_path / "demo" / "dataset.toml"
    images = sorted((tmp_path / "demo" / "images").glob("*.png"))
    assert len(images) == 24
    captions = [p.with_suffix(".txt").read_text().strip() for p in images]
    words = {tuple(c.split()[1:]) for c in captions}
    assert words == {(c, s) for c in COLOURS for s in SHAPES}  # every combination appears
    with Image.open(images[0]) as first:
        assert first.mode == "RGB" and first.size[0] == first.size[1] >= 32
        colours = first.getcolors(maxcolors=100000)
    assert len(colours) > 2  # a drawn shape, not a blank image
    document = tomllib.loads(toml.read_text())
    assert document["general"]["resolution"] == 32
    assert document["datasets"][0]["subsets"][0]["image_dir"] == "images"
    report = preflight_dataset(toml, "sd-scripts")
    assert report.ok and report.media == 24 and report.captions == 24


def test_derive_run_toml_accepts_it(tmp_path):
    toml = make_demo_dataset(tmp_path / "demo", count=12)
    run = derive_run_toml(
        toml,
        tmp_path / "run" / "dataset.toml",
        style="sd-scripts",
        general={"batch_size": 8, "resolution": 32},
    )
    document = tomllib.loads(run.read_text())
    assert document["general"]["batch_size"] == 8
    image_dir = Path(document["datasets"][0]["subsets"][0]["image_dir"])
    assert image_dir.is_absolute() and image_dir == (tmp_path / "demo" / "images").resolve()


def test_is_idempotent_and_shrinks(tmp_path):
    folder = tmp_path / "demo"
    make_demo_dataset(folder, count=16, seed=1)
    first = (folder / "images" / "shape_0005.png").read_bytes()
    make_demo_dataset(folder, count=16, seed=1)
    assert (folder / "images" / "shape_0005.png").read_bytes() == first
    (folder / "images" / "mine.txt").write_text("kept")
    make_demo_dataset(folder, count=8, seed=1)
    assert len(list((folder / "images").glob("shape_*.png"))) == 8
    assert not (folder / "images" / "shape_0008.txt").exists()
    assert (folder / "images" / "mine.txt").exists()  # files that are not ours stay


def test_demo_prompts_parse_with_fixed_seeds():
    prompts = parse_prompt_lines(DEMO_PROMPTS)
    assert len(prompts) == 4
    assert [p.seed for p in prompts] == [1, 2, 3, 4]
    for prompt in prompts:
        _, colour, shape = prompt.text.split()
        assert colour in COLOURS and shape in SHAPES
