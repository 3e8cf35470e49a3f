"""sd-scripts pre-caching: one cache per session made by its own tools, keyed by what made it."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from bracket.trainer.cache_key import session_cache_dir
from tests.sd_scripts.helpers import run_of, value_of


def _image_dir(spec_or_toml) -> Path:
    toml = spec_or_toml if isinstance(spec_or_toml, Path) else spec_or_toml.output_dir.parent / "dataset.toml"
    document = tomllib.loads(toml.read_text(encoding="utf-8"))
    return Path(document["datasets"][0]["subsets"][0]["image_dir"])


def test_sdxl_setup_caches_with_the_tools_into_the_folder_every_run_reads(build, image_folder, tmp_path):
    trainer = build("sdxl-lora", tokenizer_cache_dir=str(tmp_path / "tok"))
    session = tmp_path / "session"
    setup = trainer.session_setup_commands(dataset=image_folder, run_dir=session / "setup")
    assert [s.label for s in setup] == ["cache latents", "cache text encoder outputs"]
    sd_dir = Path(trainer.fields["sd_scripts_dir"])
    for spec, script in zip(setup, ("tools/cache_latents.py", "tools/cache_text_encoder_outputs.py"), strict=True):
        assert spec.cmd[:3] == [trainer.fields["trainer_python"], "-m", "accelerate.commands.launch"]
        assert str(sd_dir / script) in spec.cmd and spec.cwd == sd_dir
        assert "--sdxl" in spec.cmd and value_of(spec.cmd, "--seed") == "0"
        assert value_of(spec.cmd, "--mixed_precision") == "bf16"
        assert value_of(spec.cmd, "--pretrained_model_name_or_path") == trainer.fields["model_path"]
        assert value_of(spec.cmd, "--tokenizer_cache_dir") == str(tmp_path / "tok")
    assert "--no_half_vae" in setup[0].cmd and "--no_half_vae" not in setup[1].cmd  # the TE tool has no such flag
    setup_dir = _image_dir(Path(value_of(setup[0].cmd, "--dataset_config")))
    runs = [run_of(trainer, session / "trials" / f"000{n}", trainer.baseline_config().knobs, image_folder)
            for n in (1, 2)]
    assert {_image_dir(r) for r in runs} == {setup_dir}  # setup and every run: one cache folder
    assert setup_dir.parent.parent == session / "cache"
    # once the tools wrote every cache file, runs skip sd-scripts' content check
    for image in image_folder.glob("*.png"):
        (setup_dir / f"{image.stem}_1024x1024_sdxl.npz").write_bytes(b"x")
        (setup_dir / f"{image.stem}_te_outputs.npz").write_bytes(b"x")
    later = run_of(trainer, session / "trials" / "0003", trainer.baseline_config().knobs, image_folder)
    assert "--skip_cache_check" in later.cmd and _image_dir(later) == setup_dir


def test_flux_setup_passes_every_model_file_and_sd35_has_no_tool_support(build, image_folder, tmp_path):
    flux = build("flux1-lora")
    setup = flux.session_setup_commands(dataset=image_folder, run_dir=tmp_path / "s" / "setup")
    assert [s.label for s in setup] == ["cache latents", "cache text encoder outputs"]
    for flag in ("--ae", "--clip_l", "--t5xxl", "--pretrained_model_name_or_path", "--flux"):
        assert flag in setup[0].cmd and flag in setup[1].cmd
    sd35 = build("sd35-lora")  # tools/cache_latents.py knows no SD3 at our pin
    assert sd35.session_setup_commands(dataset=image_folder, run_dir=tmp_path / "t" / "setup") == []


def test_shuffled_captions_cache_latents_only(build, image_folder, tmp_path):
    source = tmp_path / "user.toml"
    source.write_text(f"[general]\nshuffle_caption = true\n\n[[datasets]]\n\n[[datasets.subsets]]\n"
                      f"image_dir = '{image_folder}'\n", encoding="utf-8")
    setup = build("sdxl-lora").session_setup_commands(dataset=source, run_dir=tmp_path / "s" / "setup")
    assert [s.label for s in setup] == ["cache latents"]


def test_another_model_vae_or_caption_gets_another_cache_folder(build, image_folder, tmp_path):
    model, other_model, vae = (tmp_path / f"{name}.safetensors" for name in ("model", "other", "vae"))
    for path in (model, other_model, vae):
        path.write_bytes(path.name.encode())
    fixed = {"cache_dir": str(tmp_path / "shared-cache"), "model_path": str(model), "vae_path": ""}

    def cache_of(session: str, **overrides: str) -> Path:
        trainer = build("sdxl-lora", **{**fixed, **overrides})
        return _image_dir(run_of(trainer, tmp_path / session / "trials" / "1", trainer.baseline_config().knobs,
                                 image_folder))

    folder = cache_of("a")
    assert cache_of("b") == folder  # another session, same model, flags and data: the cache is reused
    for overrides in ({"model_path": str(other_model)}, {"vae_path": str(vae)}, {"resolution": "768"}):
        assert cache_of("c", **overrides) != folder, overrides
    model.write_bytes(b"retrained weights")  # the same path, rewritten: another model
    os.utime(model, ns=(model.stat().st_atime_ns, model.stat().st_mtime_ns + 10**9))
    changed = cache_of("d")
    assert changed != folder
    (image_folder / "img0.txt").write_text("an edited caption", encoding="utf-8")
    assert cache_of("e") not in (folder, changed)


def test_mirror_skips_cache_files_of_the_persons_folder(build, image_folder, tmp_path):
    (image_folder / "img0_1024x1024_sdxl.npz").write_bytes(b"made by another model")
    trainer = build("sdxl-lora")
    mirror = _image_dir(run_of(trainer, tmp_path / "s" / "trials" / "1", trainer.baseline_config().knobs,
                               image_folder))
    assert not list(mirror.glob("*.npz")) and (mirror / "img0.png").exists()


def test_save_precision_follows_the_release_dtype(build, image_folder, tmp_path):
    expected = {"sdxl-lora": "fp16", "sdxl-full": "fp16", "sd35-lora": "bf16", "flux1-lora": "bf16"}
    for preset_id, dtype in expected.items():
        trainer = build(preset_id)
        spec = run_of(trainer, tmp_path / preset_id / "trials" / "1", trainer.baseline_config().knobs, image_folder)
        assert value_of(spec.cmd, "--save_precision") == dtype, preset_id


def test_tokenizer_cache_dir_is_passed_only_when_set(build, image_folder, tmp_path):
    plain = build("flux1-lora")
    assert "--tokenizer_cache_dir" not in run_of(plain, tmp_path / "a", plain.baseline_config().knobs,
                                                 image_folder).cmd
    offline = build("flux1-lora", tokenizer_cache_dir=str(tmp_path / "tok"))
    spec = run_of(offline, tmp_path / "b", offline.baseline_config().knobs, image_folder)
    assert value_of(spec.cmd, "--tokenizer_cache_dir") == str(tmp_path / "tok")


def test_session_cache_dir_covers_every_run_folder_of_a_session(tmp_path):
    session = tmp_path / "session"
    for sub in ("setup", "trials/0001", "finals/0009", "promote/0010", "export/baseline-run7-300steps"):
        assert session_cache_dir(session / sub) == session / "cache", sub
