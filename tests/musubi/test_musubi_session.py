"""Pre-caching once per session, video datasets, sample-prompt files and the no-sample trainer."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bracket.registry import get_preset
from bracket.trainer.base import RunRequest
from bracket.trainer.cache_key import session_cache_dir
from bracket.trainer.musubi.base import SampleInputError
from bracket.trainer.prompts import SamplePrompt
from tests.musubi.helpers import MUSUBI_IDS, build, flag_value, image_folder, read_toml, script_spec, video_folder

PROMPTS = [SamplePrompt("a red fox", seed=11), SamplePrompt("a lighthouse", seed=12, width=640)]


def _overrides(preset_id: str, root: Path) -> dict[str, str]:
    if get_preset(preset_id).trainer_factory.needs_control_images:
        return {"control_dir": str(image_folder(root, "controls"))}
    return {}


def _trial(trainer, session: Path, n: int, dataset: Path, **kwargs):
    config = trainer.config_from_dict(trainer.baseline_config().knobs)
    return trainer.prepare_run(RunRequest(run_dir=session / "trials" / str(n), knobs=config, dataset=dataset,
                                          max_steps=30, seed=n, **kwargs))


def test_session_cache_dir_convention(tmp_path):
    session = tmp_path / "s1"
    assert session_cache_dir(session / "setup") == session / "cache"
    assert session_cache_dir(session / "trials" / "7") == session / "cache"
    assert session_cache_dir(session / "trials" / "7", "  /shared/cache ") == Path("/shared/cache")


@pytest.mark.parametrize("preset_id", MUSUBI_IDS)
def test_setup_caches_once_into_the_trials_cache_directory(preset_id, tmp_path):
    dataset = image_folder(tmp_path)
    trainer = build(preset_id, tmp_path, dataset, **_overrides(preset_id, tmp_path))
    session = tmp_path / "session"
    setup = trainer.session_setup_commands(dataset=dataset, run_dir=session / "setup")
    assert [s.label for s in setup] == ["cache latents", "cache text encoder outputs"]
    cls = type(trainer)
    scripts = [script_spec(s.cmd)[0] for s in setup]
    assert [Path(s.cmd[i]).name for s, i in zip(setup, scripts)] == [cls.latent_cache_script, cls.text_cache_script]
    for spec, index in zip(setup, scripts):
        assert "--skip_existing" in spec.cmd and spec.cwd == trainer.musubi_dir
        assert not [w for w in spec.cmd[index + 1:]
                    if w.startswith("--") and w not in script_spec(spec.cmd)[1]["flags"]]
        for flag in script_spec(spec.cmd)[1]["required"]:
            assert flag in spec.cmd
    setup_toml = read_toml(Path(flag_value(setup[0].cmd, "--dataset_config")))
    caches = {d["cache_directory"] for d in setup_toml["datasets"]}
    assert all(Path(c).is_relative_to((session / "cache").resolve()) for c in caches)
    for n in (1, 2):
        trial = _trial(trainer, session, n, dataset)
        trial_toml = read_toml(Path(flag_value(trial.cmd, "--dataset_config")))
        assert {d["cache_directory"] for d in trial_toml["datasets"]} == caches
        assert trial_toml["general"]["resolution"] == setup_toml["general"]["resolution"]
    again = trainer.session_setup_commands(dataset=dataset, run_dir=session / "setup")
    assert [s.cmd for s in again] == [s.cmd for s in setup]


def test_cache_dir_field_moves_the_cache_and_keys_it_by_variant(tmp_path):
    dataset = image_folder(tmp_path)
    shared = tmp_path / "shared-cache"
    klein = build("flux2-klein-lora", tmp_path, dataset, cache_dir=str(shared))
    other = build("flux2-klein-lora", tmp_path, dataset, cache_dir=str(shared), model_version="klein-base-4b")
    roots = []
    for trainer in (klein, other):
        setup = trainer.session_setup_commands(dataset=dataset, run_dir=tmp_path / "any" / "setup")
        roots.append(read_toml(Path(flag_value(setup[0].cmd, "--dataset_config")))["datasets"][0]["cache_directory"])
    assert all(Path(r).is_relative_to(shared.resolve()) for r in roots) and roots[0] != roots[1]


@pytest.mark.parametrize("preset_id", ["hunyuan-video-lora", "wan22-lora", "framepack-lora"])
def test_video_folder_becomes_a_video_dataset_with_short_clips(preset_id, tmp_path):
    dataset = video_folder(tmp_path)
    start = {} if preset_id.startswith("hunyuan") else {"sample_start_image": str(image_folder(tmp_path) / "img0.png")}
    trainer = build(preset_id, tmp_path, dataset, **start)
    assert trainer.sample_kind == "video"
    spec = _trial(trainer, tmp_path / "session", 1, dataset, sample_prompts=PROMPTS)
    entry = read_toml(Path(flag_value(spec.cmd, "--dataset_config")))["datasets"][0]
    assert "video_directory" in entry and "image_directory" not in entry
    assert entry["target_frames"] and all((f - 1) % 4 == 0 for f in entry["target_frames"])
    assert entry["frame_extraction"] == "head"
    lines = Path(flag_value(spec.cmd, "--sample_prompts")).read_text().splitlines()
    assert all(" --f " in line for line in lines)


def test_user_video_keys_are_kept(tmp_path):
    videos = video_folder(tmp_path)
    toml = tmp_path / "data.toml"
    toml.write_text(f'[general]\ncaption_extension = ".txt"\n[[datasets]]\nvideo_directory = "{videos}"\n'
                    'target_frames = [1, 25, 45]\n', encoding="utf-8")
    trainer = build("hunyuan-video-lora", tmp_path, toml)
    spec = _trial(trainer, tmp_path / "session", 1, toml)
    entry = read_toml(Path(flag_value(spec.cmd, "--dataset_config")))["datasets"][0]
    assert entry["target_frames"] == [1, 25, 45] and entry["frame_extraction"] == "head"


def test_prompt_files_use_musubi_letters(tmp_path):
    dataset = image_folder(tmp_path)
    image = build("zimage-lora", tmp_path, dataset, zimage_variant="turbo")
    lines = Path(flag_value(_trial(image, tmp_path / "a", 1, dataset, sample_prompts=PROMPTS).cmd,
                            "--sample_prompts")).read_text().splitlines()
    assert lines[0] == "a red fox --d 11 --w 768 --h 768 --s 8 --l 1"
    assert lines[1].startswith("a lighthouse --d 12 --w 640 --h 768")
    framepack = build("framepack-lora", tmp_path, dataset)
    spec = _trial(framepack, tmp_path / "b", 1, dataset, sample_prompts=PROMPTS)
    line = Path(flag_value(spec.cmd, "--sample_prompts")).read_text().splitlines()[0]
    assert line == f"a red fox --d 11 --w 512 --h 512 --f 37 --s 25 --i {dataset.resolve() / 'img0.png'}"
    assert flag_value(spec.cmd, "--sample_every_n_steps") == "30"


def test_i2v_without_any_start_image_says_what_to_do(tmp_path):
    dataset = video_folder(tmp_path)
    trainer = build("framepack-lora", tmp_path, dataset)
    with pytest.raises(SampleInputError, match="start image"):
        _trial(trainer, tmp_path / "session", 1, dataset, sample_prompts=PROMPTS)
    # Without sample prompts the run needs no start image.
    assert "--sample_prompts" not in _trial(trainer, tmp_path / "session", 2, dataset).cmd


def test_hv_full_writes_no_samples_and_is_scored_by_loss(tmp_path):
    dataset = image_folder(tmp_path)
    trainer = build("hunyuan-video-full", tmp_path, dataset)
    spec = _trial(trainer, tmp_path / "session", 1, dataset, sample_prompts=PROMPTS, sample_every_n_steps=10)
    assert trainer.writes_samples is False and spec.sample_dir is None
    assert "--sample_prompts" not in spec.cmd and spec.loss_tags == ("loss",)
    assert "--full_bf16" in spec.cmd and "--fused_backward_pass" not in spec.cmd
    assert "writes no samples" in get_preset("hunyuan-video-full").notes


def test_memory_flags_follow_the_vram_tier(tmp_path):
    dataset = image_folder(tmp_path)
    big = _trial(build("qwen-image-lora", tmp_path, dataset, vram_gb="80"), tmp_path / "a", 1, dataset)
    small = _trial(build("qwen-image-lora", tmp_path, dataset, vram_gb="16"), tmp_path / "b", 1, dataset)
    assert "--fp8_base" not in big.cmd and "--fp8_vl" not in big.cmd
    assert flag_value(small.cmd, "--blocks_to_swap") == "45" and "--fp8_scaled" in small.cmd and "--fp8_vl" in small.cmd


def test_setup_commands_run_through_a_fake_python(tmp_path):
    """The fake-python pattern: the argv list runs as is, without a shell."""
    dataset = image_folder(tmp_path)
    trainer = build("zimage-lora", tmp_path, dataset)
    for spec in trainer.session_setup_commands(dataset=dataset, run_dir=tmp_path / "session" / "setup"):
        subprocess.run(spec.cmd, cwd=spec.cwd, env=spec.env, check=True, timeout=30)
    log = (Path(trainer.python).parent / "argv.log").read_text().splitlines()
    assert "accelerate.commands.launch" in log
    assert any(w.endswith("zimage_cache_latents.py") for w in log)
    assert any(w.endswith("zimage_cache_text_encoder_outputs.py") for w in log)
    assert log.count("--skip_existing") == 2


def test_another_model_over_the_same_dataset_gets_another_cache(tmp_path):
    dataset = image_folder(tmp_path)
    shared = str(tmp_path / "shared-cache")  # a cache_dir reused by later sessions
    trainer = build("zimage-lora", tmp_path, dataset, cache_dir=shared)
    fields = dict(trainer.fields)

    def caches(session: str, **changes: str) -> set[str]:
        other = get_preset("zimage-lora").build_trainer({**fields, **changes})
        toml = read_toml(Path(flag_value(_trial(other, tmp_path / session, 1, dataset).cmd, "--dataset_config")))
        return {d["cache_directory"] for d in toml["datasets"]}

    first = caches("a")
    assert caches("b") == first  # same model files, flags and data: a later session reuses the cache
    vae = tmp_path / "models" / "other-vae.safetensors"
    vae.write_bytes(b"another vae")
    assert caches("c", vae=str(vae)) != first
    assert caches("d", text_encoder=str(vae)) != first
    (dataset / "img0.txt").write_text("an edited caption", encoding="utf-8")
    assert caches("e") != first
