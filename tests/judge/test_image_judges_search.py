"""An sdxl-lora and a zimage-lora search with the fake trainers and the image judges on: every run's
samples are judged at every sampled step (the worker process with the deterministic stand-in
backbone), and the judges' parts per step reach ``status --json``, the report and the export.

The fake trainers draw planted samples (``BRACKET_FAKE_PLANTED=1``: a subject that fades in, a
held-out context that over-fitting erases); the weights leave the loss a say, so the search runs
as a user's would."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from bracket.cli import main
from bracket.trainer.inventory import flags_by_repo
from tests.fakes import install_inventory_scripts, make_fake_python
from tests.fakes.cli_search import cli_search

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

PROMPTS = "zqx, a red square --d 1\n# held-out\nzqx, underwater, surrounded by fish --d 2\n"
ROOT = Path(__file__).resolve().parents[2]


def dataset(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for n in range(4):
        image = Image.new("RGB", (32, 32), (128, 128, 128))
        image.paste((255, 0, 0), (8, 8, 24, 24))
        image.save(folder / f"{n}.png")
        (folder / f"{n}.txt").write_text(f"zqx, a red square {n}", encoding="utf-8")
    return folder


def sdxl_fields(tmp_path: Path) -> dict[str, str]:
    scripts = ("sdxl_train_network.py", "tools/cache_latents.py", "tools/cache_text_encoder_outputs.py")
    model = tmp_path / "sdxl.safetensors"
    model.write_bytes(b"fake")
    return {"sd_scripts_dir": str(install_inventory_scripts(tmp_path / "sd-scripts", "kohya-ss/sd-scripts", scripts)),
            "trainer_python": str(make_fake_python(tmp_path / "bin")), "model_path": str(model),
            "dataset": str(dataset(tmp_path / "images"))}


def zimage_fields(tmp_path: Path) -> dict[str, str]:
    scripts = [k for k in flags_by_repo()["kohya-ss/musubi-tuner"]["scripts"] if "/zimage_" in k]
    values = {"musubi_dir": str(install_inventory_scripts(tmp_path / "musubi", "kohya-ss/musubi-tuner", scripts)),
              "trainer_python": str(make_fake_python(tmp_path / "bin")), "dataset": str(dataset(tmp_path / "images"))}
    for name in ("dit", "vae", "text_encoder"):
        (tmp_path / f"{name}.safetensors").write_bytes(b"fake")
        values[name] = str(tmp_path / f"{name}.safetensors")
    return values


def command(args: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    assert code == 0, err.getvalue() + out.getvalue()
    return out.getvalue()


@pytest.mark.parametrize("preset_id, fields, style", [("sdxl-lora", sdxl_fields, ""),
                                                      ("zimage-lora", zimage_fields, "musubi")])
def test_a_search_shows_the_image_judges_per_step_in_status_report_and_export(preset_id, fields, style, tmp_path,
                                                                              monkeypatch):
    monkeypatch.setenv("BRACKET_FAKE_PLANTED", "1")
    monkeypatch.setenv("BRACKET_FAKE_SAMPLE_STYLE", style)
    monkeypatch.setenv("BRACKET_JUDGE_BACKBONE", "tests.fakes.image_backbone:Backbone")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    (tmp_path / "prompts.txt").write_text(PROMPTS, encoding="utf-8")
    folder = tmp_path / "runs" / "judged"
    session = cli_search(["run", "--preset", preset_id, "--name", "judged", "--out", str(tmp_path / "runs"),
                          "--budget", "2", "--steps", "6", "--sample-every", "2", "--confirm", "0",
                          "--prompts", str(tmp_path / "prompts.txt"), "--seed", "1", "--quiet",
                          "--weights", "loss=1,likeness=1,prompt_following=1,image_quality=0.5"],
                         fields(tmp_path), folder)
    runs = [r for r in session.store.runs(session.name) if r.get("kind") != "setup" and r["status"] == "done"]
    assert len(runs) == 2
    for run in runs:
        record = run["judges"]["image"]
        assert sorted(int(s) for s in record["steps"]) == [2, 4, 6] and "error" not in record
        assert {i["prompt_kind"] for i in record["images"].values()} == {"in", "held_out"}
    session.close()

    answer = json.loads(command(["status", str(folder), "--json"]))
    rows = answer["stages"]["search"]["rows"]
    for row in rows:
        assert sorted(row["step_images"]) == ["2", "4", "6"]
        assert set(row["step_images"]["4"]) == {"likeness", "prompt_following", "image_quality"}
        parts = {p["judge"]: p for p in row["runs"][0]["parts"]}
        assert {"likeness", "prompt_following", "image_quality"} <= set(parts)
        assert parts["likeness"]["weight"] > 0 and not parts["likeness"]["estimated"]
        assert "likeness" in row["figures"] and "prompt following" in row["figures"]
    assert set(answer["winner"]["judges"]) >= {"loss", "likeness", "prompt_following", "image_quality"}

    command(["report", str(folder)])
    report = (folder / "report" / "report.md").read_text(encoding="utf-8")  # the one report folder
    assert "Image judges per step" in report and "prompt following" in report

    command(["export", str(folder)])
    exported = json.loads(next((folder / "export").glob("*/config.json")).read_text(encoding="utf-8"))
    figures = exported["image_judges"]
    assert sorted(figures["steps"]) == ["2", "4", "6"]
    assert figures["at_step"]["step"] == (exported.get("best_step") or exported["steps"])
    assert figures["at_step"]["likeness"] == figures["steps"][str(figures["at_step"]["step"])]["likeness"]
