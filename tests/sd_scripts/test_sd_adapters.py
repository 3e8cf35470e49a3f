"""The sd-scripts adapters: search spaces, warm-start configs and their commands."""

from __future__ import annotations

import tomllib

import pytest

from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob
from bracket.trainer.base import RunRequest
from bracket.trainer.prompts import SamplePrompt
from tests.sd_scripts.conftest import SD_PRESETS
from tests.sd_scripts.helpers import run_of, value_of

#: LoRA presets; the first len(FULL) pair up with FULL (HunyuanImage has no full fine-tune)
LORA = ("sdxl-lora", "sd35-lora", "flux1-lora", "lumina-lora", "anima-lora", "hunyuan-image-lora")
FULL = ("sdxl-full", "sd35-full", "flux1-full", "lumina-full", "anima-full")
FLUX_ONLY_FLAGS = ("--timestep_sampling", "--discrete_flow_shift", "--guidance_scale", "--model_prediction_type")


@pytest.mark.parametrize("preset_id", SD_PRESETS)
def test_space_searches_only_loss_knobs(build, preset_id):
    space = build(preset_id).declare_search_space()
    lr = space["learning_rate"]
    assert isinstance(lr, FloatKnob) and lr.log and lr.low < lr.high
    assert "lr_scheduler" in space.searched() and "lr_warmup_steps" in space.searched()
    assert "constant" not in space["lr_warmup_steps"].when["lr_scheduler"]
    assert isinstance(space["batch_size"], FixedKnob)
    if preset_id in LORA:
        assert isinstance(space["network_dim"], CategoricalKnob) and isinstance(space["network_alpha"], CategoricalKnob)
        assert space["prodigy_d_coef"].when == {"optimizer_type": ("Prodigy",)}
        assert space["adaptive_learning_rate"] == FixedKnob(1.0, when={"optimizer_type": ("Prodigy",)})
        assert "Prodigy" not in lr.when["optimizer_type"]
    else:
        assert "network_dim" not in space and "network_alpha" not in space
    if preset_id.startswith("flux1"):
        assert space["discrete_flow_shift"].when == {"timestep_sampling": ("shift",)}
        assert "timestep_sampling" in space.searched()
    if preset_id.startswith("sd35"):
        assert isinstance(space["training_shift"], FloatKnob) and "timestep_sampling" not in space


def test_lora_rates_are_above_full_ft_rates(build):
    for lora, full in zip(LORA, FULL):
        assert (build(lora).declare_search_space()["learning_rate"].high
                > build(full).declare_search_space()["learning_rate"].high)


@pytest.mark.parametrize("preset_id", SD_PRESETS)
def test_baseline_and_curated_configs_fit_the_space(build, preset_id):
    trainer = build(preset_id)
    space = trainer.declare_search_space()
    baseline = trainer.baseline_config()
    curated = trainer.curated_configs()
    assert 3 <= len(curated) <= 5
    assert len({c.name for c in curated}) == len(curated)
    for named in [baseline, *curated]:
        assert named.source, named.name
        space.validate(space.complete(named.knobs))


def test_prodigy_config_survives_learning_rate_bounds(build):
    trainer = build("sdxl-lora")
    prodigy = next(c for c in trainer.curated_configs() if c.knobs["optimizer_type"] == "Prodigy")
    narrowed = trainer.declare_search_space().narrow({"learning_rate": (1e-5, 1e-4)})
    fitted = narrowed.fit(prodigy.knobs, label="prodigy")
    assert fitted.config is not None and fitted.config["adaptive_learning_rate"] == 1.0


def test_prodigy_emits_its_optimizer_args(build, image_folder, tmp_path):
    trainer = build("flux1-lora")
    prodigy = next(c for c in trainer.curated_configs() if c.knobs["optimizer_type"] == "Prodigy")
    cmd = run_of(trainer, tmp_path / "run", {**prodigy.knobs, "prodigy_d_coef": 1.5}, image_folder).cmd
    assert value_of(cmd, "--learning_rate") == "1.0"
    start = cmd.index("--optimizer_args") + 1
    words = cmd[start:start + 5]
    assert "d_coef=1.5" in words and "safeguard_warmup=True" in words and "decouple=True" in words


def test_adamw_has_no_optimizer_args_and_constant_has_no_warmup(build, image_folder, tmp_path):
    trainer = build("sdxl-lora")
    cmd = run_of(trainer, tmp_path / "run", trainer.baseline_config().knobs, image_folder).cmd
    assert "--optimizer_args" not in cmd and "--lr_warmup_steps" not in cmd
    assert value_of(cmd, "--lr_scheduler") == "constant"


def test_sdxl_lora_command(build, image_folder, tmp_path):
    trainer = build("sdxl-lora")
    spec = run_of(trainer, tmp_path / "run", trainer.baseline_config().knobs, image_folder, max_steps=250, seed=9)
    cmd = spec.cmd
    assert cmd[1:3] == ["-m", "accelerate.commands.launch"]
    assert cmd[7] == str(trainer.script_path()) and cmd[7].endswith("sdxl_train_network.py")
    assert value_of(cmd, "--network_module") == "networks.lora"
    assert value_of(cmd, "--network_dim") == "32" and value_of(cmd, "--network_alpha") == "16"
    assert value_of(cmd, "--max_train_steps") == "250" and value_of(cmd, "--seed") == "9"
    assert value_of(cmd, "--output_dir") == str(tmp_path / "run" / "output")
    assert value_of(cmd, "--logging_dir") == str(tmp_path / "run" / "logs")
    assert value_of(cmd, "--dataset_config") == str(tmp_path / "run" / "dataset.toml")
    assert not any(w.startswith("--text_encoder_lr1") or w.startswith("--text_encoder_lr2") for w in cmd)
    assert "--network_train_unet_only" in cmd and "--cache_text_encoder_outputs_to_disk" in cmd
    assert "--save_every_n_steps" not in cmd and "--sample_prompts" not in cmd
    assert spec.loss_tags[0] == "loss/current"
    assert spec.sample_dir == spec.output_dir / "sample" and spec.cwd == trainer.sd_scripts_dir()


@pytest.mark.parametrize("preset_id", FULL)
def test_full_ft_has_no_network_flags_and_logs_loss(build, image_folder, tmp_path, preset_id):
    trainer = build(preset_id)
    spec = run_of(trainer, tmp_path / "run", trainer.baseline_config().knobs, image_folder)
    assert not any(w.startswith("--network_") for w in spec.cmd)
    assert spec.loss_tags == ("loss",)


def test_fused_backward_pass_only_with_adafactor(build, image_folder, tmp_path):
    trainer = build("sdxl-full")
    adafactor = run_of(trainer, tmp_path / "a", {**trainer.baseline_config().knobs, "optimizer_type": "Adafactor"},
                       image_folder).cmd
    adamw = run_of(trainer, tmp_path / "b", trainer.baseline_config().knobs, image_folder).cmd
    assert "--fused_backward_pass" in adafactor and value_of(adafactor, "--max_grad_norm") == "0.0"
    assert "--fused_backward_pass" not in adamw
    assert "--full_bf16" in adafactor  # vram_gb 24


def test_sd35_lora_uses_lora_sd3_and_training_shift(build, image_folder, tmp_path):
    trainer = build("sd35-lora")
    knobs = {**trainer.baseline_config().knobs, "training_shift": 2.5}
    cmd = run_of(trainer, tmp_path / "run", knobs, image_folder).cmd
    assert value_of(cmd, "--network_module") == "networks.lora_sd3"
    assert value_of(cmd, "--training_shift") == "2.5"
    assert not any(flag in cmd for flag in FLUX_ONLY_FLAGS)
    assert value_of(cmd, "--clip_g").endswith("clip_g_path.safetensors")


def test_sd35_large_on_small_gpu_uses_fp8_and_medium_does_not(build, image_folder, tmp_path):
    large = build("sd35-lora", vram_gb="12")
    medium = build("sd35-lora", vram_gb="12", sd35_variant="medium")
    large_cmd = run_of(large, tmp_path / "l", large.baseline_config().knobs, image_folder).cmd
    medium_cmd = run_of(medium, tmp_path / "m", medium.baseline_config().knobs, image_folder).cmd
    assert "--fp8_base" in large_cmd and value_of(large_cmd, "--blocks_to_swap") == "16"
    assert "--fp8_base" not in medium_cmd and "--blocks_to_swap" not in medium_cmd


def test_flux_lora_model_paths_and_timestep_flags(build, image_folder, tmp_path):
    trainer = build("flux1-lora")
    shift = next(c for c in trainer.curated_configs() if c.knobs["timestep_sampling"] == "shift")
    cmd = run_of(trainer, tmp_path / "a", shift.knobs, image_folder).cmd
    for flag in ("--ae", "--clip_l", "--t5xxl", "--pretrained_model_name_or_path"):
        assert flag in cmd
    assert value_of(cmd, "--network_module") == "networks.lora_flux"
    assert value_of(cmd, "--discrete_flow_shift") == "3.1582"
    assert value_of(cmd, "--model_prediction_type") == "raw" and value_of(cmd, "--guidance_scale") == "1.0"
    baseline = run_of(trainer, tmp_path / "b", trainer.baseline_config().knobs, image_folder).cmd
    assert value_of(baseline, "--timestep_sampling") == "flux_shift" and "--discrete_flow_shift" not in baseline
    assert "--training_shift" not in baseline and "--fp8_base" in baseline  # vram_gb 24


def test_flux_full_follows_the_readme_recipe(build, image_folder, tmp_path):
    trainer = build("flux1-full")
    assert isinstance(trainer.declare_search_space()["optimizer_type"], FixedKnob)
    cmd = run_of(trainer, tmp_path / "run", trainer.baseline_config().knobs, image_folder).cmd
    assert value_of(cmd, "--optimizer_type") == "Adafactor"
    assert {"--fused_backward_pass", "--full_bf16"} <= set(cmd) and value_of(cmd, "--blocks_to_swap") == "8"


def test_sampling_saving_and_resume_flags(build, image_folder, tmp_path):
    trainer = build("sdxl-lora")
    spec = run_of(trainer, tmp_path / "run", trainer.baseline_config().knobs, image_folder,
                  sample_prompts=[SamplePrompt("a cat", seed=5)], sample_every_n_steps=25,
                  save_every_n_steps=40, save_state=True, resume_from=tmp_path / "state")
    cmd = spec.cmd
    assert value_of(cmd, "--sample_prompts") == str(tmp_path / "run" / "sample_prompts.txt")
    # a resumed run would sample its restored model as step 0 (sd_scripts.resume)
    assert "--sample_at_first" not in cmd and value_of(cmd, "--sample_every_n_steps") == "25"
    assert value_of(cmd, "--save_every_n_steps") == "40" and "--save_state" in cmd
    assert value_of(cmd, "--resume") == str(tmp_path / "state") and "--skip_until_initial_step" in cmd
    fresh = run_of(trainer, tmp_path / "fresh", trainer.baseline_config().knobs, image_folder,
                   sample_prompts=[SamplePrompt("a cat", seed=5)])
    assert "--sample_at_first" in fresh.cmd


def test_samples_come_at_the_validation_steps_unless_told_otherwise(build, image_folder, tmp_path):
    """Issue 34: with validation on and no --sample-every, sd-scripts validated at steps 20, 40, …
    but sampled only at the start and the end, so the best step validation named had no sample."""
    from bracket.trainer.heldout import ValidationPlan

    trainer = build("sdxl-lora")
    trainer.validation = ValidationPlan(0.1, 7)
    prompts = [SamplePrompt("a cat", seed=5)]
    cmd = run_of(trainer, tmp_path / "run", trainer.baseline_config().knobs, image_folder, max_steps=100,
                 sample_prompts=prompts).cmd
    assert value_of(cmd, "--sample_every_n_steps") == value_of(cmd, "--validate_every_n_steps") == "20"
    told = run_of(trainer, tmp_path / "run2", trainer.baseline_config().knobs, image_folder, max_steps=100,
                  sample_prompts=prompts, sample_every_n_steps=25).cmd
    assert value_of(told, "--sample_every_n_steps") == value_of(told, "--validate_every_n_steps") == "25"


@pytest.mark.parametrize("bound", [[2, 4], ["2", "4"], (2.0, 4.0)])
def test_batch_size_choices_are_valid_in_the_session_space(build, image_folder, tmp_path, bound):
    """Issue 19: ``--batch-sizes 2,4`` / ``--bound batch_size=2:4`` on a preset whose batch
    size is fixed crashed with "is fixed at 1, got 4"; the session's space decides."""
    from bracket.errors import SearchSpaceError

    trainer = build("sdxl-lora")
    space = trainer.session_space({"batch_size": bound})
    assert space["batch_size"].choices == (2, 4)
    knobs = {**trainer.baseline_config().knobs, "batch_size": 4}
    with pytest.raises(SearchSpaceError, match="fixed at 1, got 4"):
        trainer.config_from_dict(knobs)  # the trainer's own space still refuses it
    spec = trainer.prepare_run(RunRequest(run_dir=tmp_path / "run", knobs=trainer.config_from_dict(knobs, space),
                                          dataset=image_folder, max_steps=20, seed=1))
    toml = tomllib.loads((spec.output_dir.parent / "dataset.toml").read_text(encoding="utf-8"))
    assert toml["general"]["batch_size"] == 4


def test_a_curated_warm_up_longer_than_a_quarter_of_the_run_is_clamped(build):
    """Issue 19: the curated Adafactor config warms up for 100 steps; in a 100-step search
    that is the whole run, so the session clamps it to 25 steps' grid (20) with a note."""
    from bracket.session.create import fit_warm_start

    trainer = build("sdxl-lora")
    space = trainer.session_space({}, steps=100, warmup_share=0.25)
    assert (space["lr_warmup_steps"].low, space["lr_warmup_steps"].high) == (0, 20)
    assert trainer.session_space({}, steps=1000, warmup_share=0.25)["lr_warmup_steps"].high == 200
    fitted, notes = fit_warm_start(trainer, space)
    assert all(c.knobs.get("lr_warmup_steps", 0) <= 20 for _, c in fitted)
    assert any("lr_warmup_steps 100 clamped to 20" in n for n in notes)
