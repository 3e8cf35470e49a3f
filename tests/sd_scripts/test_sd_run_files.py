"""What an sd-scripts run writes: its dataset TOML, its prompt file, and the cache decision."""

from __future__ import annotations

import tomllib
from pathlib import Path

from PIL import Image

from bracket.trainer.base import RunRequest
from bracket.trainer.prompts import SamplePrompt
from tests.sd_scripts.helpers import run_of, value_of


def _toml(spec) -> dict:
    return tomllib.loads((spec.output_dir.parent / "dataset.toml").read_text(encoding="utf-8"))


def test_run_toml_from_a_folder(build, image_folder, tmp_path):
    trainer = build("sdxl-lora", resolution="768")
    knobs = {**trainer.baseline_config().knobs}
    space = trainer.declare_search_space().narrow({"batch_size": [2, 4]})
    assert space["batch_size"].choices == (2, 4)
    knobs["batch_size"] = 2
    space.validate(space.complete(knobs))
    spec = trainer.prepare_run(RunRequest(run_dir=tmp_path / "run", knobs=space.complete(knobs),
                                          dataset=image_folder, max_steps=10, seed=1))
    document = _toml(spec)
    assert document["general"] == {"caption_extension": ".txt", "batch_size": 2, "resolution": 768,
                                   "enable_bucket": True}
    mirror = Path(document["datasets"][0]["subsets"][0]["image_dir"])
    assert mirror.parent.parent == tmp_path / "cache" and mirror.name == "s0"
    assert sorted(p.name for p in mirror.iterdir()) == sorted(p.name for p in image_folder.iterdir())
    assert all((mirror / p.name).resolve() == p.resolve() for p in image_folder.iterdir())


def test_run_toml_keeps_the_users_resolution(build, image_folder, tmp_path):
    source = tmp_path / "user.toml"
    source.write_text(
        "[general]\nenable_bucket = false\n\n[[datasets]]\nresolution = 512\nbatch_size = 8\n\n"
        "[[datasets.subsets]]\nimage_dir = 'images'\nnum_repeats = 3\n", encoding="utf-8")
    trainer = build("flux1-lora")
    spec = run_of(trainer, tmp_path / "run", trainer.baseline_config().knobs, source)
    document = _toml(spec)
    assert document["general"] == {"enable_bucket": False, "batch_size": 1}
    assert document["datasets"][0]["resolution"] == 512 and "batch_size" not in document["datasets"][0]
    subset = document["datasets"][0]["subsets"][0]
    assert (subset["num_repeats"] == 3
            and (Path(subset["image_dir"]) / "img0.png").resolve() == image_folder / "img0.png")


def test_prompt_file_has_fixed_seeds_and_family_options(build, image_folder, tmp_path):
    prompts = [SamplePrompt("a red fox", seed=11), SamplePrompt("a boat", seed=12, width=768, guidance=2.0)]
    flux = build("flux1-lora", flux1_variant="schnell", resolution="512")
    spec = run_of(flux, tmp_path / "f", flux.baseline_config().knobs, image_folder, sample_prompts=prompts)
    lines = (tmp_path / "f" / "sample_prompts.txt").read_text(encoding="utf-8").splitlines()
    assert lines == ["a red fox --d 11 --w 512 --h 512 --s 4 --g 3.5", "a boat --d 12 --w 768 --h 512 --s 4 --g 2"]
    assert value_of(spec.cmd, "--sample_prompts") == str(tmp_path / "f" / "sample_prompts.txt")
    sdxl = build("sdxl-lora")
    run_of(sdxl, tmp_path / "s", sdxl.baseline_config().knobs, image_folder, sample_prompts=prompts)
    text = (tmp_path / "s" / "sample_prompts.txt").read_text(encoding="utf-8")
    assert text == "a red fox --d 11 --w 1024 --h 1024\na boat --d 12 --w 768 --h 1024\n"  # no FLUX --g


def test_skip_cache_check_once_every_image_is_cached(build, image_folder, tmp_path):
    trainer = build("sdxl-lora")
    knobs = trainer.baseline_config().knobs
    first = run_of(trainer, tmp_path / "trials" / "1", knobs, image_folder)
    assert "--cache_latents_to_disk" in first.cmd and "--skip_cache_check" not in first.cmd
    mirror = Path(_toml(first)["datasets"][0]["subsets"][0]["image_dir"])
    for image in image_folder.glob("*.png"):  # what sd-scripts writes next to each (mirrored) image
        (mirror / f"{image.stem}_1024x1024_sdxl.npz").write_bytes(b"x")
    half = run_of(trainer, tmp_path / "trials" / "2", knobs, image_folder).cmd
    assert "--skip_cache_check" not in half  # text-encoder outputs still missing
    for image in image_folder.glob("*.png"):
        (mirror / f"{image.stem}_te_outputs.npz").write_bytes(b"x")
    later = run_of(trainer, tmp_path / "trials" / "3", knobs, image_folder).cmd
    assert "--skip_cache_check" in later
    assert not list(image_folder.glob("*.npz"))  # the person's folder stays clean
    Image.new("RGB", (8, 8)).save(image_folder / "new.png")  # new data: a new cache folder, checked again
    assert "--skip_cache_check" not in run_of(trainer, tmp_path / "trials" / "4", knobs, image_folder).cmd


def test_caption_shuffle_disables_text_encoder_cache(build, image_folder, tmp_path):
    source = tmp_path / "user.toml"
    source.write_text(
        f"[general]\nshuffle_caption = true\n\n[[datasets]]\n\n[[datasets.subsets]]\nimage_dir = '{image_folder}'\n",
        encoding="utf-8")
    trainer = build("sd35-lora")
    cmd = run_of(trainer, tmp_path / "run", trainer.baseline_config().knobs, source).cmd
    assert "--cache_latents_to_disk" in cmd and "--cache_text_encoder_outputs" not in cmd


def test_color_aug_disables_latent_cache(build, image_folder, tmp_path):
    source = tmp_path / "user.toml"
    source.write_text(
        f"[[datasets]]\n\n[[datasets.subsets]]\nimage_dir = '{image_folder}'\ncolor_aug = true\n", encoding="utf-8")
    trainer = build("sdxl-full")
    cmd = run_of(trainer, tmp_path / "run", trainer.baseline_config().knobs, source).cmd
    assert "--cache_latents" not in cmd and "--skip_cache_check" not in cmd
    assert "--cache_text_encoder_outputs_to_disk" in cmd
