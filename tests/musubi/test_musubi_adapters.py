"""The musubi-tuner presets: search spaces, warm-start configs and their commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from bracket.errors import DatasetError, FieldError
from bracket.registry import get_preset
from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob
from bracket.trainer.base import RunRequest
from bracket.trainer.musubi.space import ADAM_FAMILY, PRODIGY
from bracket.trainer.prompts import SamplePrompt
from tests.musubi.helpers import KEYS, MUSUBI, MUSUBI_IDS, build, flag_value, image_folder, read_toml, script_spec

FULL_FT = {"zimage-full", "qwen-image-full", "hunyuan-video-full", "hidream-o1-full"}
PROMPTS = [SamplePrompt("a red fox", seed=11), SamplePrompt("a lighthouse", seed=12, width=640)]


def _run(trainer, root: Path, dataset: Path, knobs=None, **kwargs):
    config = trainer.config_from_dict(knobs or trainer.baseline_config().knobs)
    return trainer.prepare_run(RunRequest(run_dir=root / "session" / "trials" / "1", knobs=config, dataset=dataset,
                                          max_steps=40, seed=3, **kwargs))


def _edit_overrides(root: Path) -> dict[str, str]:
    return {"control_dir": str(image_folder(root, "controls"))}


def _trainer(preset_id: str, root: Path, dataset: Path):
    overrides = _edit_overrides(root) if get_preset(preset_id).trainer_factory.needs_control_images else {}
    return build(preset_id, root, dataset, **overrides)


def test_table_has_every_musubi_preset():
    for preset_id in MUSUBI_IDS:
        preset = get_preset(preset_id)
        assert preset.needs_pre_cache
        assert preset.notes and "\n" not in preset.notes
        assert preset.training_type == ("Full FT" if preset_id in FULL_FT else "LoRA")


@pytest.mark.parametrize("preset_id", MUSUBI_IDS)
def test_model_fields_cover_every_model_flag(preset_id):
    preset = get_preset(preset_id)
    names = {f.name for f in preset.fields}
    trainer_cls = preset.trainer_factory
    for model in trainer_cls.model_inputs:
        assert model.field in names, f"{preset_id}: no field {model.field}"
        spec = next(f for f in preset.fields if f.name == model.field)
        assert spec.env_var and spec.env_var.startswith("BRACKET_") and spec.env_var.endswith("_PATH")
        assert spec.required != model.optional


@pytest.mark.parametrize("preset_id", MUSUBI_IDS)
def test_search_space_shape(preset_id, tmp_path):
    trainer = _trainer(preset_id, tmp_path, image_folder(tmp_path))
    space = trainer.declare_search_space()
    assert isinstance(space["optimizer_type"], CategoricalKnob)
    learning_rate = space["learning_rate"]
    assert isinstance(learning_rate, FloatKnob) and learning_rate.log and learning_rate.high <= 1e-3
    assert isinstance(space["lr_scheduler"], CategoricalKnob)
    assert space["lr_warmup_steps"].when == {"lr_scheduler": ("constant_with_warmup", "cosine", "linear")}
    assert "timestep_sampling" in space and "discrete_flow_shift" in space
    if preset_id in FULL_FT:
        assert "network_dim" not in space and "prodigy_d_coef" not in space
        assert learning_rate.high <= 2e-5
    else:
        assert isinstance(space["network_dim"], CategoricalKnob) and isinstance(space["network_alpha"], CategoricalKnob)
        assert learning_rate.when == {"optimizer_type": ADAM_FAMILY}
        assert space["prodigy_d_coef"].when == {"optimizer_type": (PRODIGY,)}
    assert isinstance(space["batch_size"], FixedKnob)


@pytest.mark.parametrize("preset_id", MUSUBI_IDS)
def test_baseline_and_curated_configs_fit_the_space(preset_id, tmp_path):
    trainer = _trainer(preset_id, tmp_path, image_folder(tmp_path))
    space = trainer.declare_search_space()
    configs = [trainer.baseline_config(), *trainer.curated_configs()]
    assert 3 <= len(configs) - 1 <= 5
    for named in configs:
        assert named.source, f"{preset_id} {named.name}: no source"
        space.validate(space.complete(named.knobs))
    assert len({c.name for c in configs}) == len(configs)


def test_prodigy_config_survives_a_learning_rate_bound(tmp_path):
    trainer = _trainer("zimage-lora", tmp_path, image_folder(tmp_path))
    narrowed = trainer.declare_search_space().narrow({"learning_rate": (1e-5, 2e-5)})
    prodigy = next(c for c in trainer.curated_configs() if c.knobs["optimizer_type"] == PRODIGY)
    fitted = narrowed.fit(prodigy.knobs)
    assert fitted.config is not None and not fitted.notes


@pytest.mark.parametrize("preset_id", MUSUBI_IDS)
def test_every_flag_exists_and_required_flags_are_there(preset_id, tmp_path):
    dataset = image_folder(tmp_path)
    trainer = _trainer(preset_id, tmp_path, dataset)
    for named in [trainer.baseline_config(), *trainer.curated_configs()]:
        spec = _run(trainer, tmp_path, dataset, named.knobs, sample_prompts=PROMPTS, save_every_n_steps=20)
        index, entry = script_spec(spec.cmd)
        assert spec.cmd[index].endswith(f"src/musubi_tuner/{Path(spec.cmd[index]).name}")
        assert "accelerate.commands.launch" in spec.cmd[:index]
        flags = [w for w in spec.cmd[index + 1:] if w.startswith("--")]
        unknown = [f for f in flags if f not in entry["flags"]]
        assert not unknown, f"{preset_id}: {unknown}"
        for flag in ("--dit", "--dataset_config", "--optimizer_type", "--output_dir", "--logging_dir"):
            assert flag in flags
        for flag in set(flags) & set(entry.get("choices", {})):
            assert flag_value(spec.cmd, flag) in [str(c) for c in entry["choices"][flag]]
        assert spec.cwd == trainer.musubi_dir


@pytest.mark.parametrize("preset_id", MUSUBI_IDS)
def test_network_module_per_architecture(preset_id, tmp_path):
    dataset = image_folder(tmp_path)
    spec = _run(_trainer(preset_id, tmp_path, dataset), tmp_path, dataset)
    _, entry = script_spec(spec.cmd)
    if preset_id in FULL_FT:
        assert "--network_module" not in spec.cmd and "--network_dim" not in spec.cmd
    else:
        assert flag_value(spec.cmd, "--network_module") == entry["network_module"]


def test_prodigy_and_adafactor_optimizer_args(tmp_path):
    dataset = image_folder(tmp_path)
    lora = _trainer("qwen-image-lora", tmp_path, dataset)
    knobs = {k: v for k, v in lora.baseline_config().knobs.items() if k != "learning_rate"}
    spec = _run(lora, tmp_path, dataset, {**knobs, "optimizer_type": PRODIGY, "prodigy_d_coef": 0.8})
    assert flag_value(spec.cmd, "--optimizer_type") == "prodigyopt.Prodigy"
    assert flag_value(spec.cmd, "--learning_rate") == "1.0"
    assert "d_coef=0.8" in spec.cmd and "safeguard_warmup=True" in spec.cmd
    full = _trainer("qwen-image-full", tmp_path / "f", image_folder(tmp_path / "f"))
    spec = _run(full, tmp_path / "f", dataset)
    assert "relative_step=False" in spec.cmd and "--fused_backward_pass" in spec.cmd
    assert flag_value(spec.cmd, "--max_grad_norm") == "0" and "--full_bf16" in spec.cmd
    adamw = _run(full, tmp_path / "f", dataset, {**full.baseline_config().knobs, "optimizer_type": "AdamW8bit"})
    assert "--fused_backward_pass" not in adamw.cmd and "--optimizer_args" not in adamw.cmd


def test_constant_scheduler_never_gets_warmup(tmp_path):
    dataset = image_folder(tmp_path)
    trainer = _trainer("zimage-lora", tmp_path, dataset)
    spec = _run(trainer, tmp_path, dataset)
    assert flag_value(spec.cmd, "--lr_scheduler") == "constant" and "--lr_warmup_steps" not in spec.cmd
    spec = _run(trainer, tmp_path, dataset, {**trainer.baseline_config().knobs, "lr_scheduler": "cosine",
                                             "lr_warmup_steps": 20})
    assert flag_value(spec.cmd, "--lr_warmup_steps") == "20"


def test_wan22_task_and_both_dits(tmp_path):
    dataset = image_folder(tmp_path)
    trainer = _trainer("wan22-lora", tmp_path, dataset)
    spec = _run(trainer, tmp_path, dataset)
    assert flag_value(spec.cmd, "--task") == "t2v-A14B"
    assert flag_value(spec.cmd, "--dit").endswith("dit.safetensors")
    assert flag_value(spec.cmd, "--dit_high_noise").endswith("dit_high_noise.safetensors")
    assert "--clip" not in spec.cmd and "--fp8_base" in spec.cmd
    i2v = build("wan22-lora", tmp_path, dataset, task="i2v-A14B")
    assert flag_value(_run(i2v, tmp_path, dataset).cmd, "--task") == "i2v-A14B"
    latents = i2v.session_setup_commands(dataset=dataset, run_dir=tmp_path / "session" / "setup")[0]
    assert "--i2v" in latents.cmd and "--clip" not in latents.cmd


def test_wan21_tasks(tmp_path):
    dataset = image_folder(tmp_path)
    small = build("wan21-lora", tmp_path, dataset, task="t2v-1.3B")
    spec = _run(small, tmp_path, dataset)
    assert flag_value(spec.cmd, "--task") == "t2v-1.3B" and "--fp8_base" not in spec.cmd
    assert "--dit_high_noise" not in spec.cmd
    with pytest.raises(FieldError, match="CLIP"):
        build("wan21-lora", tmp_path, dataset, task="i2v-14B").session_setup_commands(
            dataset=dataset, run_dir=tmp_path / "s" / "setup")


@pytest.mark.parametrize("preset_id", ["flux1-kontext-lora", "qwen-image-edit-lora"])
def test_edit_models_put_control_directory_in_the_run_toml(preset_id, tmp_path):
    dataset = image_folder(tmp_path)
    controls = image_folder(tmp_path, "controls")
    trainer = build(preset_id, tmp_path, dataset, control_dir=str(controls))
    spec = _run(trainer, tmp_path, dataset, sample_prompts=PROMPTS)
    document = read_toml(Path(flag_value(spec.cmd, "--dataset_config")))
    assert document["datasets"][0]["control_directory"] == str(controls.resolve())
    lines = Path(flag_value(spec.cmd, "--sample_prompts")).read_text().splitlines()
    assert all(f"--ci {controls.resolve() / 'img0.png'}" in line for line in lines)
    with pytest.raises(DatasetError, match="control"):
        _run(build(preset_id, tmp_path / "n", dataset), tmp_path / "n", dataset)


def test_qwen_edit_model_version_on_trainer_and_caches(tmp_path):
    dataset = image_folder(tmp_path)
    trainer = build("qwen-image-edit-lora", tmp_path, dataset, control_dir=str(image_folder(tmp_path, "c")),
                    model_version="edit-2509")
    assert flag_value(_run(trainer, tmp_path, dataset).cmd, "--model_version") == "edit-2509"
    for setup in trainer.session_setup_commands(dataset=dataset, run_dir=tmp_path / "session" / "setup"):
        assert flag_value(setup.cmd, "--model_version") == "edit-2509"
    plain = _trainer("qwen-image-lora", tmp_path / "p", dataset)
    assert flag_value(_run(plain, tmp_path / "p", dataset).cmd, "--model_version") == "original"


def test_flux2_and_kontext_model_flags(tmp_path):
    dataset = image_folder(tmp_path)
    flux2 = _run(_trainer("flux2-klein-lora", tmp_path, dataset), tmp_path, dataset)
    assert flag_value(flux2.cmd, "--model_version") == "klein-base-9b" and "--ae" not in flux2.cmd
    assert "--vae" in flux2.cmd and "--text_encoder" in flux2.cmd
    kontext = _run(_trainer("flux1-kontext-lora", tmp_path / "k", dataset), tmp_path / "k", dataset)
    assert all(f in kontext.cmd for f in ("--vae", "--text_encoder1", "--text_encoder2"))


def test_dataset_toml_keys_are_musubi_keys(tmp_path):
    allowed = set(KEYS["datasets (image)"])
    dataset = image_folder(tmp_path)
    spec = _run(_trainer("flux1-kontext-lora", tmp_path, dataset), tmp_path, dataset)
    document = read_toml(Path(flag_value(spec.cmd, "--dataset_config")))
    assert set(document["general"]) <= set(KEYS["general"])
    assert document["general"]["batch_size"] == 1 and document["general"]["caption_extension"] == ".txt"
    assert set(document["datasets"][0]) <= allowed


def test_every_script_name_is_in_the_inventory():
    for preset_id in MUSUBI_IDS:
        cls = get_preset(preset_id).trainer_factory
        for name in (cls.script, cls.latent_cache_script, cls.text_cache_script):
            assert f"src/musubi_tuner/{name}" in MUSUBI["scripts"], name
