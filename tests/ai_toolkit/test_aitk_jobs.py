"""Every ai-toolkit preset's job files against the key inventory of the pin, and what the knobs write."""

from __future__ import annotations

import logging
from pathlib import Path

import optuna
import pytest

from bracket.trainer.ai_toolkit.space import PRODIGY_PARAMS
from bracket.trainer.base import RunRequest
from bracket.trainer.inventory.ai_toolkit import job_problems, load_inventory
from bracket.trainer.prompts import SamplePrompt
from bracket.trainer.vram import TIERS
from tests.ai_toolkit.helpers import AITK_IDS, build, image_folder, job_of, process_of

PROMPTS = [SamplePrompt("a red fox", seed=11), SamplePrompt("a lighthouse", seed=12, width=768, steps=8)]


def _configs(trainer, sampled: int = 50) -> list[tuple[str, dict]]:
    configs = [("baseline", trainer.baseline_config().knobs)] + [(c.name, c.knobs) for c in trainer.curated_configs()]
    optuna.logging.set_verbosity(logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=7))
    space = trainer.declare_search_space()
    return configs + [(f"sampled:{n}", space.suggest(study.ask())) for n in range(sampled)]


def _baseline(trainer, run_dir: Path, dataset: Path):
    return _spec(trainer, run_dir, dataset, trainer.baseline_config().knobs)


def _spec(trainer, run_dir: Path, dataset: Path, knobs: dict, **extra):
    return trainer.prepare_run(RunRequest(run_dir=run_dir, knobs=trainer.config_from_dict(knobs), dataset=dataset,
                                          max_steps=100, seed=3, sample_prompts=PROMPTS, sample_every_n_steps=25,
                                          **extra))


@pytest.mark.parametrize("preset_id", AITK_IDS)
def test_every_job_file_at_every_tier_reads_only_keys_the_pin_reads(preset_id, tmp_path):
    dataset = image_folder(tmp_path)
    failures = []
    for tier in TIERS:
        trainer = build(preset_id, tmp_path, dataset, vram_gb=str(tier))
        for n, (name, knobs) in enumerate(_configs(trainer, sampled=50 if tier == 24 else 10)):
            spec = _spec(trainer, tmp_path / f"t{tier}" / f"r{n}", dataset, knobs)
            failures += [f"{tier} GB {name}: {p}" for p in job_problems(job_of(spec))]
    assert not failures, "\n".join(failures[:20])


def test_the_check_fails_a_key_ai_toolkit_would_ignore(tmp_path):
    trainer = build("aitk-flux1-dev-lora", tmp_path, image_folder(tmp_path))
    job = job_of(_spec(trainer, tmp_path / "r", tmp_path / "images", trainer.baseline_config().knobs))
    process = job["config"]["process"][0]
    process["device"] = "cuda:0"  # in every example file, read by no process class
    process["train"]["lr_warmup_steps"] = 10  # a kohya name
    process["model"]["arch"] = "flux3"
    process["sample"]["samples"][0]["cfg"] = 3
    problems = job_problems(job)
    assert any("process.device" in p for p in problems)
    assert any("process.train.lr_warmup_steps" in p for p in problems)
    assert any("'flux3'" in p for p in problems)
    assert any("process.sample.samples[].cfg" in p for p in problems)
    job["job"] = "train"
    assert any("not 'extension'" in p for p in job_problems(job))


def test_the_stored_inventory_lists_what_the_config_classes_read():
    sections = load_inventory()["sections"]
    assert {"lr", "optimizer", "optimizer_params", "lr_scheduler_params", "timestep_type", "noise_offset",
            "gradient_accumulation", "ema_config", "steps", "validation_config"} <= set(sections["process.train"])
    assert {"linear", "linear_alpha", "lokr_factor", "type"} <= set(sections["process.network"])
    assert {"log_every", "use_ui_logger"} <= set(sections["process.logging"])
    assert {"folder_path", "caption_dropout_rate", "num_frames"} <= set(sections["process.datasets[]"])
    assert "device" not in sections["process"] and "training_folder" in sections["process"]


def test_knobs_become_the_sections_ai_toolkit_reads(tmp_path):
    dataset = image_folder(tmp_path)
    trainer = build("aitk-chroma-lora", tmp_path, dataset)
    base = {"lr_scheduler": "constant_with_warmup", "lr_warmup_steps": 20, "gradient_accumulation": 2,
            "caption_dropout_rate": 0.07, "noise_offset": 0.03, "use_ema": True, "timestep_type": "shift"}
    lora = process_of(_spec(trainer, tmp_path / "a", dataset, {
        **base, "optimizer_type": "adamw8bit", "learning_rate": 3e-4, "network_type": "lora",
        "network_dim": 16, "network_alpha": 8}))
    assert lora["network"] == {"type": "lora", "linear": 16, "linear_alpha": 8}
    train = lora["train"]
    assert (train["optimizer"], train["lr"], train["lr_scheduler"]) == ("adamw8bit", 3e-4, "constant_with_warmup")
    assert train["lr_scheduler_params"] == {"num_warmup_steps": 20}
    assert (train["gradient_accumulation"], train["noise_offset"], train["timestep_type"]) == (2, 0.03, "shift")
    assert train["ema_config"]["use_ema"] is True and train["steps"] == 100
    assert lora["datasets"][0]["caption_dropout_rate"] == 0.07
    assert lora["datasets"][0]["folder_path"] == str(dataset)
    lokr = process_of(_spec(trainer, tmp_path / "b", dataset, {
        **base, "lr_scheduler": "cosine", "optimizer_type": "prodigy", "prodigy_d_coef": 0.7,
        "network_type": "lokr", "lokr_factor": 8}))
    assert lokr["network"] == {"type": "lokr", "lokr_full_rank": True, "lokr_factor": 8}
    assert lokr["train"]["lr"] == 1.0 and lokr["train"]["optimizer_params"] == {**PRODIGY_PARAMS, "d_coef": 0.7}
    assert "lr_scheduler_params" not in lokr["train"]


def test_logging_samples_seeds_and_offline_models(tmp_path):
    dataset = image_folder(tmp_path)
    trainer = build("aitk-qwen-image-lora", tmp_path, dataset)
    spec = _spec(trainer, tmp_path / "trials" / "4", dataset, trainer.baseline_config().knobs)
    process = process_of(spec)
    assert process["logging"] == {"log_every": 1, "use_ui_logger": True}
    assert process["log_dir"] == str(tmp_path / "trials" / "4" / "logs") == str(spec.logging_dir)
    assert [(s["prompt"], s["seed"]) for s in process["sample"]["samples"]] == [("a red fox", 11), ("a lighthouse", 12)]
    assert process["sample"]["samples"][1]["width"] == 768 and process["sample"]["samples"][1]["sample_steps"] == 8
    assert process["sample"]["sample_every"] == 25 and process["sample"]["sampler"] == "flowmatch"
    assert "skip_first_sample" not in process["train"]  # the step-0 baseline is kept
    name = job_of(spec)["config"]["name"]
    assert spec.output_dir == Path(process["training_folder"]) / name and spec.sample_dir == spec.output_dir / "samples"
    assert spec.env["HF_HUB_OFFLINE"] == "1" and spec.cmd[1] == str(tmp_path / "ai-toolkit" / "run.py")
    assert process["model"]["name_or_path"] == "org/model" and process["train"]["cache_text_embeddings"] is True


def test_every_launch_of_a_run_folder_gets_its_own_name(tmp_path):
    dataset = image_folder(tmp_path)
    trainer = build("aitk-sdxl-lora", tmp_path, dataset)
    names = [job_of(_spec(trainer, tmp_path / "trials" / "2", dataset, trainer.baseline_config().knobs))
             ["config"]["name"] for _ in range(3)]
    assert names == ["2-l1", "2-l2", "2-l3"]


def test_a_pause_makes_the_rung_a_save_step_and_no_samples_means_none_asked(tmp_path):
    dataset = image_folder(tmp_path)
    trainer = build("aitk-omnigen2-lora", tmp_path, dataset)
    spec = trainer.prepare_run(RunRequest(run_dir=tmp_path / "p", knobs=trainer.config_from_dict(
        trainer.baseline_config().knobs), dataset=dataset, max_steps=90, seed=1, stop_at_step=30,
        save_every_n_steps=20))
    process = process_of(spec)
    assert 30 % process["save"]["save_every"] == 0 and spec.pause_step == 30
    assert process["train"]["steps"] == 90 and process["train"]["disable_sampling"] is True
    assert "sample" not in process


def test_tiers_change_the_model_section(tmp_path):
    dataset = image_folder(tmp_path)
    small = process_of(_baseline(build("aitk-flux1-dev-lora", tmp_path, dataset, vram_gb="24"), tmp_path / "a",
                                 dataset))["model"]
    large = process_of(_baseline(build("aitk-flux1-dev-lora", tmp_path, dataset, vram_gb="80"), tmp_path / "b",
                                 dataset))["model"]
    assert small["quantize"] is True and small["low_vram"] is True and small["arch"] == "flux"
    assert "quantize" not in large and large["name_or_path"] == "org/model"


def test_video_presets_train_short_clips(tmp_path):
    dataset = image_folder(tmp_path)
    process = process_of(_baseline(build("aitk-ltx2-lora", tmp_path, dataset), tmp_path / "v", dataset))
    assert process["datasets"][0]["num_frames"] == 41 and process["datasets"][0]["do_audio"] is False
    assert process["sample"]["num_frames"] == 41 and process["model"]["arch"] == "ltx2"
    wan = process_of(_baseline(build("aitk-wan22-5b-lora", tmp_path, dataset, frames="17"), tmp_path / "w", dataset))
    assert wan["datasets"][0]["num_frames"] == 17 and wan["model"]["arch"] == "wan22_5b"


def test_hidream_names_its_llama_text_encoder(tmp_path):
    dataset = image_folder(tmp_path)
    trainer = build("aitk-hidream-i1-lora", tmp_path, dataset, llama_model="org/llama")
    model = process_of(_baseline(trainer, tmp_path / "h", dataset))["model"]
    assert model["model_kwargs"] == {"llama_model_path": "org/llama"} and model["extras_name_or_path"] == "org/model"


def test_a_validation_plan_holds_images_out_of_training_and_names_them(tmp_path):
    from bracket.trainer.heldout import ValidationPlan

    dataset = image_folder(tmp_path, count=8)
    trainer = build("aitk-chroma-lora", tmp_path, dataset)
    trainer.validation = ValidationPlan(0.25, 7)
    specs = [_baseline(trainer, tmp_path / "trials" / str(n), dataset) for n in (1, 2)]
    processes = [process_of(spec) for spec in specs]
    items = processes[0]["train"]["validation_config"]["validation_items"]
    assert len(items) == 2 and items == processes[1]["train"]["validation_config"]["validation_items"]
    assert all(Path(i["image_path"]).parent == dataset and i["prompt"].startswith("a photo of sks") for i in items)
    assert processes[0]["train"]["validation_config"]["validate_every_n_steps"] == 25  # the sample steps
    trained = Path(processes[0]["datasets"][0]["folder_path"])
    assert trained.is_relative_to(tmp_path / "trials" / "1")
    names = {p.name for p in trained.iterdir()}
    assert len([n for n in names if n.endswith(".png")]) == 6 and len([n for n in names if n.endswith(".txt")]) == 6
    assert not {Path(i["image_path"]).name for i in items} & names
    assert specs[0].eval_loss_tags == ("val/loss",) and specs[0].metrics_db == specs[0].output_dir / "loss_log.db"
    assert job_problems(job_of(specs[0])) == []
    video = build("aitk-wan22-5b-lora", tmp_path, dataset)
    video.validation = ValidationPlan(0.25, 7)
    spec = _baseline(video, tmp_path / "video", dataset)
    assert "validation_config" not in process_of(spec)["train"] and not spec.eval_loss_tags
    trainer.validation = None
    plain = _baseline(trainer, tmp_path / "plain", dataset)
    assert process_of(plain)["datasets"][0]["folder_path"] == str(dataset) and plain.metrics_db is None


def test_the_scalar_reader_reads_a_metrics_database(tmp_path):
    import sqlite3

    from bracket.session.scoring.tfevents import ScalarReader

    db = tmp_path / "loss_log.db"
    reader = ScalarReader(tmp_path / "logs", tags=("loss", "val/loss"), metrics_db=db)
    assert reader.poll() == 0  # no file yet
    connection = sqlite3.connect(db, isolation_level=None)
    connection.execute("CREATE TABLE metrics (step INTEGER, key TEXT, value_real REAL, value_text TEXT)")
    connection.executemany("INSERT INTO metrics VALUES (?, ?, ?, NULL)",
                           [(5, "val/loss", 0.4), (5, "loss/loss", 0.3), (10, "val/loss", 0.35)])
    assert reader.poll() == 2 and reader.series["val/loss"] == [(5, 0.4), (10, 0.35)]
    connection.execute("INSERT INTO metrics VALUES (15, 'val/loss', 0.3, NULL)")
    assert reader.poll() == 1 and "loss/loss" not in reader.series
    connection.close()
