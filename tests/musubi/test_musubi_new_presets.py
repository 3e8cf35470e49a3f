"""The musubi presets of issue 22: FLUX.2 dev, HiDream-O1, HunyuanVideo 1.5, Kandinsky 5, Krea 2,
Ideogram 4 and the FramePack / Wan one-frame modes — the flags their docs require."""

from __future__ import annotations

from pathlib import Path

import pytest

from bracket.errors import FieldError
from bracket.trainer.base import RunRequest
from bracket.trainer.prompts import SamplePrompt, parse_prompt_line
from tests.musubi.helpers import build, flag_value, image_folder, read_toml

PROMPTS = [SamplePrompt("make it red", seed=11)]


def _run(trainer, root: Path, dataset: Path, **kwargs):
    config = trainer.config_from_dict(trainer.baseline_config().knobs)
    return trainer.prepare_run(RunRequest(run_dir=root / "session" / "trials" / "1", knobs=config, dataset=dataset,
                                          max_steps=40, seed=3, **kwargs))


def _setup(trainer, root: Path, dataset: Path):
    latents, texts = trainer.session_setup_commands(dataset=dataset, run_dir=root / "session" / "setup")
    return latents.cmd, texts.cmd


@pytest.mark.parametrize(("preset_id", "cache_flags"), [
    ("framepack-1f-lora", ["--one_frame", "--one_frame_no_2x", "--one_frame_no_4x"]),
    ("wan21-1f-lora", ["--i2v", "--one_frame"]),
])
def test_one_frame_modes_cache_train_and_sample_one_frame(tmp_path, preset_id, cache_flags):
    dataset, controls = image_folder(tmp_path), image_folder(tmp_path, "starts")
    trainer = build(preset_id, tmp_path, dataset, control_dir=str(controls))
    latents, _ = _setup(trainer, tmp_path, dataset)
    assert all(flag in latents for flag in cache_flags)
    spec = _run(trainer, tmp_path, dataset, sample_prompts=PROMPTS, sample_every_n_steps=20)
    assert "--one_frame" in spec.cmd and "--f1" not in spec.cmd
    assert trainer.sample_kind == "image" and trainer.needs_control_images
    toml = read_toml(Path(flag_value(spec.cmd, "--dataset_config")))
    assert toml["datasets"][0]["control_directory"] == str(controls)
    line = Path(flag_value(spec.cmd, "--sample_prompts")).read_text(encoding="utf-8").strip()
    parsed = parse_prompt_line(line, default_seed=0)
    start = str(controls / "img0.png")
    assert parsed.image == start and parsed.control_images == (start,)  # --i and --ci: the start image
    assert parsed.frames == 1 and "target_index=1" in parsed.one_frame and "control_index=0" in parsed.one_frame


def test_a_person_s_one_frame_options_are_kept(tmp_path):
    dataset = image_folder(tmp_path)
    trainer = build("framepack-1f-lora", tmp_path, dataset, control_dir=str(image_folder(tmp_path, "starts")))
    mine = parse_prompt_line("swap the coat --of no_post,target_index=5,control_index=0;10 --d 4", default_seed=0)
    assert mine.one_frame == "no_post,target_index=5,control_index=0;10"
    spec = _run(trainer, tmp_path, dataset, sample_prompts=[mine])
    line = Path(flag_value(spec.cmd, "--sample_prompts")).read_text(encoding="utf-8")
    assert "--of no_post,target_index=5,control_index=0;10" in line


def test_flux2_dev_is_model_version_dev_everywhere_without_fp8_text_encoder(tmp_path):
    dataset = image_folder(tmp_path)
    trainer = build("flux2-dev-lora", tmp_path, dataset, vram_gb="16")
    latents, texts = _setup(trainer, tmp_path, dataset)
    spec = _run(trainer, tmp_path, dataset)
    for cmd in (latents, texts, spec.cmd):
        assert flag_value(cmd, "--model_version") == "dev"
        assert "--fp8_text_encoder" not in cmd  # not available for Mistral 3
    assert flag_value(spec.cmd, "--blocks_to_swap") == "29"  # the docs' maximum for dev with fp8


@pytest.mark.parametrize(("model_type", "noise"), [("full", ["8.0", "8.0", "0.0"]), ("dev", ["7.5", "7.5", "2.5"])])
def test_hidream_o1_model_type_and_its_noise_parameters(tmp_path, model_type, noise):
    dataset = image_folder(tmp_path)
    trainer = build("hidream-o1-lora", tmp_path, dataset, hidream_model_type=model_type)
    pixels, texts = _setup(trainer, tmp_path, dataset)
    spec = _run(trainer, tmp_path, dataset)
    assert flag_value(texts, "--model_type") == model_type == flag_value(spec.cmd, "--model_type")
    got = [flag_value(spec.cmd, f) for f in ("--noise_scale_start", "--noise_scale_end", "--noise_clip_std")]
    assert got == noise
    assert flag_value(spec.cmd, "--task") == "t2i"
    assert not any(w in ("--vae", "--text_encoder") for w in [*pixels, *texts, *spec.cmd])  # one checkpoint only


def test_hidream_o1_caches_of_the_two_model_types_are_kept_apart(tmp_path):
    dataset = image_folder(tmp_path)
    full = build("hidream-o1-lora", tmp_path, dataset, hidream_model_type="full")
    dev = build("hidream-o1-lora", tmp_path, dataset, hidream_model_type="dev")
    run_dir = tmp_path / "session" / "setup"
    assert full.cache_root(dataset, run_dir) != dev.cache_root(dataset, run_dir)


def test_hunyuan_video_15_image_encoder_only_for_i2v(tmp_path):
    dataset = image_folder(tmp_path)
    t2v = build("hunyuan-video-15-lora", tmp_path, dataset, task="t2v")
    latents, texts = _setup(t2v, tmp_path, dataset)
    spec = _run(t2v, tmp_path, dataset)
    assert "--image_encoder" not in latents and "--image_encoder" not in spec.cmd and "--i2v" not in latents
    assert "--byt5" in texts and "--byt5" in spec.cmd and flag_value(spec.cmd, "--task") == "t2v"
    i2v = build("hunyuan-video-15-lora", tmp_path, dataset, task="i2v")
    latents, _ = _setup(i2v, tmp_path, dataset)
    assert "--i2v" in latents and "--image_encoder" in latents
    assert "--image_encoder" in _run(i2v, tmp_path, dataset).cmd
    with pytest.raises(FieldError, match="image encoder"):
        build("hunyuan-video-15-lora", tmp_path, dataset, task="i2v", image_encoder="").session_setup_commands(
            dataset=dataset, run_dir=tmp_path / "s2")


def test_kandinsky5_task_text_encoders_and_guidance_letter(tmp_path):
    dataset = image_folder(tmp_path)
    trainer = build("kandinsky5-lora", tmp_path, dataset, task="k5-pro-i2v-5s-sd")
    _, texts = _setup(trainer, tmp_path, dataset)
    spec = _run(trainer, tmp_path, dataset, sample_prompts=PROMPTS, sample_every_n_steps=20)
    assert flag_value(spec.cmd, "--task") == "k5-pro-i2v-5s-sd"
    for flag in ("--text_encoder_qwen", "--text_encoder_clip"):
        assert flag_value(texts, flag) == flag_value(spec.cmd, flag)
    assert flag_value(texts, "--text_encoder_qwen") == "Qwen/Qwen2.5-VL-7B-Instruct"  # a hub id is allowed
    line = Path(flag_value(spec.cmd, "--sample_prompts")).read_text(encoding="utf-8")
    assert "--g 5" in line and "--l " not in line and "--i " in line  # I2V samples need a start image


def test_krea2_samples_get_a_negative_prompt_so_cfg_runs(tmp_path):
    dataset = image_folder(tmp_path)
    trainer = build("krea2-lora", tmp_path, dataset, vram_gb="24")
    spec = _run(trainer, tmp_path, dataset, sample_prompts=PROMPTS, sample_every_n_steps=20)
    assert "--fp8_base" in spec.cmd and "--fp8_scaled" in spec.cmd  # both, never fp8 alone
    line = Path(flag_value(spec.cmd, "--sample_prompts")).read_text(encoding="utf-8")
    assert "--l 5.5" in line and "--n " in line


def test_ideogram4_has_no_fp8_flags_and_keeps_weighting_none(tmp_path):
    dataset = image_folder(tmp_path)
    trainer = build("ideogram4-lora", tmp_path, dataset, vram_gb="16")
    spec = _run(trainer, tmp_path, dataset)
    assert not {"--fp8_base", "--fp8_scaled"} & set(spec.cmd)
    assert flag_value(spec.cmd, "--weighting_scheme") == "none"
    assert flag_value(spec.cmd, "--timestep_sampling") == "ideogram4_shift"
    assert flag_value(spec.cmd, "--blocks_to_swap") == "30"


def test_new_presets_join_their_family_groups_in_the_setup_dropdown():
    from bracket.registry import presets_by_family

    groups = {family: [p.id for p in presets] for family, presets in presets_by_family().items()}
    assert groups["FLUX.2"] == ["flux2-klein-lora", "flux2-dev-lora"]
    assert groups["HunyuanVideo"][-1] == "hunyuan-video-15-lora"
    assert "wan21-1f-lora" in groups["Wan"] and "framepack-1f-lora" in groups["FramePack"]
    assert groups["HiDream-O1"] == ["hidream-o1-lora", "hidream-o1-full"]
    assert groups["Lumina"] == ["lumina-lora", "lumina-full"] and groups["Anima"] == ["anima-lora", "anima-full"]
