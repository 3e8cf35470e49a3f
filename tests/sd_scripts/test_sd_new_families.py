"""Lumina-Image 2.0, Anima and HunyuanImage-2.1 (issue 22): the flags each family's docs require."""

from __future__ import annotations

import pytest

from bracket.trainer.prompts import SamplePrompt
from tests.sd_scripts.helpers import run_of, value_of


def _baseline_cmd(trainer, tmp_path, image_folder, **kwargs):
    return run_of(trainer, tmp_path / "run", trainer.baseline_config().knobs, image_folder, **kwargs).cmd


def test_lumina_lora_follows_the_docs_recommended_settings(build, image_folder, tmp_path):
    trainer = build("lumina-lora")
    cmd = _baseline_cmd(trainer, tmp_path, image_folder)
    assert value_of(cmd, "--network_module") == "networks.lora_lumina"
    assert value_of(cmd, "--gemma2").endswith("gemma2_path.safetensors")
    assert value_of(cmd, "--ae").endswith("ae_path.safetensors")
    assert value_of(cmd, "--timestep_sampling") == "nextdit_shift"
    assert value_of(cmd, "--discrete_flow_shift") == "6.0"
    assert value_of(cmd, "--model_prediction_type") == "raw"
    assert value_of(cmd, "--system_prompt").startswith("You are an assistant designed to generate")
    assert "--cache_text_encoder_outputs" in cmd  # Gemma2 is frozen, its outputs are cached


def test_the_searched_shift_is_used_only_with_the_shift_sampler(build, image_folder, tmp_path):
    trainer = build("lumina-lora")
    knobs = {**trainer.baseline_config().knobs, "timestep_sampling": "shift", "discrete_flow_shift": 2.5}
    cmd = run_of(trainer, tmp_path / "run", knobs, image_folder).cmd
    assert value_of(cmd, "--discrete_flow_shift") == "2.5"
    space = trainer.declare_search_space()
    assert space["discrete_flow_shift"].when == {"timestep_sampling": ("shift",)}


def test_lumina_small_gpu_uses_fp8_base(build, image_folder, tmp_path):
    assert "--fp8_base" in _baseline_cmd(build("lumina-lora", vram_gb="12"), tmp_path, image_folder)
    assert "--fp8_base" not in _baseline_cmd(build("lumina-lora", vram_gb="48"), tmp_path / "b", image_folder)


@pytest.mark.parametrize("preset_id", ["anima-lora", "anima-full"])
def test_anima_never_gets_fp8_base_and_uses_its_vae_options(build, image_folder, tmp_path, preset_id):
    cmd = _baseline_cmd(build(preset_id, vram_gb="12"), tmp_path, image_folder)
    assert "--fp8_base" not in cmd  # unsupported: the script would disable it with a warning
    assert value_of(cmd, "--qwen3").endswith("qwen3_path.safetensors")
    assert value_of(cmd, "--timestep_sampling") == "sigmoid" and value_of(cmd, "--discrete_flow_shift") == "1.0"
    assert value_of(cmd, "--vae_chunk_size") == "64" and "--vae_disable_cache" in cmd


def test_anima_optional_llm_adapter_is_left_out_when_empty(build, image_folder, tmp_path):
    cmd = _baseline_cmd(build("anima-lora", llm_adapter_path=""), tmp_path, image_folder)
    assert "--llm_adapter_path" not in cmd


def test_anima_full_adafactor_gets_the_fused_backward_pass(build, image_folder, tmp_path):
    trainer = build("anima-full")
    adafactor = next(c for c in trainer.curated_configs() if c.knobs["optimizer_type"] == "Adafactor")
    cmd = run_of(trainer, tmp_path / "run", adafactor.knobs, image_folder).cmd
    assert "--fused_backward_pass" in cmd and "--network_module" not in cmd
    assert "--full_bf16" in cmd  # the fixture's 24 GB tier


@pytest.mark.parametrize(("vram", "swap", "fp8_vl"), [("12", "32", True), ("24", "9", False), ("48", None, False)])
def test_hunyuan_image_memory_follows_the_docs_vram_table(build, image_folder, tmp_path, vram, swap, fp8_vl):
    cmd = _baseline_cmd(build("hunyuan-image-lora", vram_gb=vram), tmp_path, image_folder)
    assert ("--blocks_to_swap" in cmd) == (swap is not None) == ("--fp8_scaled" in cmd)
    if swap:
        assert value_of(cmd, "--blocks_to_swap") == swap
    assert ("--fp8_vl" in cmd) == fp8_vl
    assert "--fp8_base" not in cmd


def test_hunyuan_image_lora_trains_the_dit_only_at_the_docs_shift(build, image_folder, tmp_path):
    trainer = build("hunyuan-image-lora")
    cmd = _baseline_cmd(trainer, tmp_path, image_folder,
                        sample_prompts=[SamplePrompt("a cat", seed=1)], sample_every_n_steps=50)
    assert "--network_train_unet_only" in cmd
    assert value_of(cmd, "--network_module") == "networks.lora_hunyuan_image"
    assert value_of(cmd, "--discrete_flow_shift") == "5.0" and value_of(cmd, "--model_prediction_type") == "raw"
    assert value_of(cmd, "--byt5").endswith("byt5_path.safetensors")
    prompt_line = (tmp_path / "run" / "sample_prompts.txt").read_text(encoding="utf-8")
    assert "--w 2048 --h 2048" in prompt_line  # a 2K model: the preset's resolution default


def test_new_families_write_their_own_cache_suffixes(build):
    suffixes = {pid: build(pid).latent_cache_suffix for pid in ("lumina-lora", "anima-lora", "hunyuan-image-lora")}
    assert suffixes == {"lumina-lora": "_lumina.npz", "anima-lora": "_anima.npz", "hunyuan-image-lora": "_hi.npz"}
    # sd-scripts' cache tools know none of them: no once-per-session cache commands
    assert all(not build(pid).cache_tool_flag for pid in suffixes)
