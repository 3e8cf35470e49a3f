"""The shared LLM parts: search space, equal token budget, eval split, fields, presets."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from bracket.errors import DatasetError, SearchSpaceError
from bracket.registry import get_preset
from bracket.search.space import CategoricalKnob, FloatKnob
from bracket.trainer.base import RunRequest
from bracket.trainer.llm import base as llm
from bracket.trainer.llm import dataset as llm_dataset
from bracket.trainer.llm import shape as llm_shape
from tests.llm.llm_helpers import write_alpaca

PRESET_IDS = ("axolotl-lora", "torchtune-lora", "unsloth-lora")


@pytest.mark.parametrize("preset_id", PRESET_IDS)
def test_space_ranges_and_warm_start_configs(preset_id, make_trainer):
    trainer = make_trainer(preset_id)
    space = trainer.declare_search_space()
    lr, warmup = space["learning_rate"], space["warmup_ratio"]
    assert isinstance(lr, FloatKnob) and (lr.low, lr.high, lr.log) == (1e-5, 5e-4, True)
    assert isinstance(warmup, FloatKnob) and (warmup.low, warmup.high) == (0.0, 0.1)
    assert space["lora_r"].choices == (8, 16, 32, 64)
    assert space["lora_alpha_ratio"].choices == (1, 2)
    assert isinstance(space["optimizer"], CategoricalKnob) and len(space["optimizer"].choices) >= 2
    curated = trainer.curated_configs()
    assert 3 <= len(curated) <= 5
    for named in [trainer.baseline_config(), *curated]:
        assert named.source, f"{named.name} has no source"
        trainer.config_from_dict(named.knobs)  # raises when a config does not fit the space
    assert len({c.name for c in curated}) == len(curated)


def test_alpha_is_ratio_times_rank():
    assert llm.lora_alpha({"lora_r": 32, "lora_alpha_ratio": 2}) == 64
    assert llm.lora_alpha({"lora_r": 16, "lora_alpha_ratio": 1}) == 16


@pytest.mark.parametrize("effective", [4, 8, 16, 32])
def test_equal_token_budget(effective):
    steps = llm_shape.equal_budget_steps(100, effective)
    assert steps * effective == 100 * llm_shape.REFERENCE_EFFECTIVE_BATCH


def test_run_shape_splits_the_effective_batch():
    shape = llm_shape.run_shape({"effective_batch": 16, "micro_batch_size": 2, "warmup_ratio": 0.1}, 100)
    assert (shape.micro_batch_size, shape.gradient_accumulation_steps, shape.steps) == (2, 8, 50)
    assert shape.warmup_steps == 5
    with pytest.raises(SearchSpaceError):
        llm_shape.run_shape({"effective_batch": 8, "micro_batch_size": 3, "warmup_ratio": 0.0}, 100)


@pytest.mark.parametrize("steps", [1, 7, 10, 25, 50, 97, 100, 200])
def test_eval_interval_divides_the_run(steps):
    every = llm_shape.eval_interval(steps)
    assert steps % every == 0
    assert steps // every <= 8


def test_split_is_fixed_and_validated(tmp_path):
    source = write_alpaca(tmp_path / "d.jsonl", rows=100)
    first = llm_dataset.split_dataset(source, tmp_path / "a", dataset_format="alpaca", eval_size=10, split_seed=42)
    second = llm_dataset.split_dataset(source, tmp_path / "b", dataset_format="alpaca", eval_size=10, split_seed=42)
    assert first.eval_rows == 10 and first.train_rows == 90
    assert first.eval.read_text() == second.eval.read_text()
    assert first.train.read_text() == second.train.read_text()
    other = llm_dataset.split_dataset(source, tmp_path / "c", dataset_format="alpaca", eval_size=10, split_seed=7)
    assert other.eval.read_text() != first.eval.read_text()
    # a fraction, capped at a fifth of the rows
    assert llm_dataset.eval_row_count(100, 0.05) == 5 and llm_dataset.eval_row_count(100, 500) == 20
    with pytest.raises(DatasetError, match="messages"):
        llm_dataset.split_dataset(source, tmp_path / "d", dataset_format="chat", eval_size=10, split_seed=1)


def test_json_list_datasets_and_bad_files(tmp_path):
    listed = tmp_path / "d.json"
    listed.write_text(json.dumps([{"text": f"row {n}"} for n in range(10)]), encoding="utf-8")
    split = llm_dataset.split_dataset(listed, tmp_path / "s", dataset_format="completion", eval_size=0.2, split_seed=1)
    assert split.train_rows + split.eval_rows == 10
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="not valid JSON"):
        llm_dataset.read_rows(broken)
    csv = tmp_path / "d.csv"
    csv.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="jsonl"):
        llm_dataset.read_rows(csv)


def test_fields_read_their_bracket_variables(monkeypatch):
    monkeypatch.setenv("BRACKET_LLM_BASE_MODEL", "org/tiny-model")
    monkeypatch.setenv("BRACKET_AXOLOTL_PYTHON", "/opt/axolotl/bin/python")
    monkeypatch.setenv("BRACKET_LLM_DATA_FORMAT", "chat")
    fields = {f.name: f for f in get_preset("axolotl-lora").fields}
    assert fields["base_model"].resolved_default() == "org/tiny-model"
    assert fields["trainer_python"].resolved_default() == "/opt/axolotl/bin/python"
    assert fields["data_format"].resolved_default() == "chat"
    monkeypatch.delenv("BRACKET_AXOLOTL_PYTHON")
    assert fields["trainer_python"].resolved_default().replace("\\", "/").endswith("vendor/axolotl/.venv/bin/python")
    monkeypatch.setenv("BRACKET_TORCHTUNE_PYTHON", "/opt/tt/bin/python")
    monkeypatch.setenv("BRACKET_UNSLOTH_PYTHON", "/opt/us/bin/python")
    assert {f.name: f for f in get_preset("torchtune-lora").fields}["trainer_python"].resolved_default() == \
        "/opt/tt/bin/python"
    assert {f.name: f for f in get_preset("unsloth-lora").fields}["trainer_python"].resolved_default() == \
        "/opt/us/bin/python"


@pytest.mark.parametrize("preset_id,family", [
    ("axolotl-lora", "LLM (Axolotl)"), ("torchtune-lora", "LLM (torchtune)"), ("unsloth-lora", "LLM (Unsloth)"),
])
def test_presets_are_registered(preset_id, family, make_trainer):
    preset = get_preset(preset_id)
    assert (preset.model_family, preset.training_type) == (family, "LoRA")
    trainer = make_trainer(preset_id)
    assert trainer.sample_kind == "text"
    assert trainer.preflight_problems() == []
    if preset_id == "torchtune-lora":
        assert "no longer maintained" in preset.notes


def test_preflight_names_a_broken_dataset(make_trainer, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "no instruction field"}\n', encoding="utf-8")
    trainer = make_trainer("axolotl-lora", dataset=str(bad))
    problems = trainer.preflight_problems()
    assert len(problems) == 1 and "instruction" in problems[0]


def test_bracket_never_imports_the_gpu_only_packages():
    code = ("import sys, bracket.registry, bracket.trainer.scripts.unsloth_driver, "
            "bracket.trainer.scripts.llm_generate; "
            "bad = [m for m in ('unsloth', 'trl', 'peft', 'transformers', 'axolotl', 'torchtune') "
            "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def _prepare_baseline(trainer, run_dir):
    return trainer.prepare_run(RunRequest(run_dir=run_dir,
                                          knobs=trainer.config_from_dict(trainer.baseline_config().knobs),
                                          dataset=trainer.dataset_source(None), max_steps=10, seed=3))


def test_device_field_turns_off_what_only_a_gpu_has(make_trainer, tmp_path, monkeypatch):
    cpu, gpu = make_trainer("axolotl-lora", device="cpu"), make_trainer("axolotl-lora", device="gpu")
    spec = _prepare_baseline(cpu, tmp_path / "ax-cpu")
    config = yaml.safe_load((tmp_path / "ax-cpu" / "axolotl.yml").read_text())
    assert config["bf16"] is False and config["fp16"] is False and config["tf32"] is False
    assert not any(config[k] for k in ("lora_mlp_kernel", "lora_qkv_kernel", "lora_o_kernel"))
    assert spec.cmd[spec.cmd.index("--mixed_precision") + 1] == "no"
    spec = _prepare_baseline(gpu, tmp_path / "ax-gpu")
    config = yaml.safe_load((tmp_path / "ax-gpu" / "axolotl.yml").read_text())
    assert config["bf16"] == "auto" and "lora_mlp_kernel" not in config
    assert spec.cmd[spec.cmd.index("--mixed_precision") + 1] == "bf16"

    words = _prepare_baseline(make_trainer("torchtune-lora", device="cpu"), tmp_path / "tt-cpu").cmd
    assert "device=cpu" in words and "dtype=fp32" in words
    words = _prepare_baseline(make_trainer("torchtune-lora", device="gpu"), tmp_path / "tt-gpu").cmd
    assert not any(w.startswith(("device=", "dtype=")) for w in words)

    for device in ("cpu", "gpu"):
        _prepare_baseline(make_trainer("unsloth-lora", device=device), tmp_path / f"us-{device}")
        assert json.loads((tmp_path / f"us-{device}" / "unsloth_run.json").read_text())["device"] == device

    # auto: the CPU exactly when nvidia-smi is not on the PATH
    monkeypatch.setattr("bracket.trainer.llm.base.shutil.which", lambda name: None)
    assert make_trainer("axolotl-lora").on_cpu
    monkeypatch.setattr("bracket.trainer.llm.base.shutil.which", lambda name: "/usr/bin/nvidia-smi")
    assert not make_trainer("axolotl-lora").on_cpu
