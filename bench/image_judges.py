"""The image judges' cost: time per image, memory, and the gap between runs with them on.

``python -m bench.image_judges [--images N] [--no-base] [--no-search]``:

* **time per image** at 512 and 1024 px through the real worker process
  (``python -m bracket.judge.image_worker``: decode, resize, CLIP text and image towers, DINOv2,
  CLIP-IQA), on the CPU, for two model sets, both random weights saved with ``save_pretrained``
  (no download): *tiny* (2-layer CLIP and DINOv2: what the pipeline itself costs — decoding,
  resizing, batching, the process) and *base-shaped* (CLIP ViT-B/32 and DINOv2-small sized
  configs: the compute of the default models, whose weights change the figures, not the time).
  Each job scores N images, half in-distribution, half held-out, against 4 references; the
  worker reports its model load time, its scoring time and its peak memory.
* **the gap between runs** of an sdxl-lora search with the fake trainer (3 configs, 6 steps,
  samples every 2 steps, 2 prompts): the next run's ``started_at`` minus the previous run's
  ``finished_at``, median, with the image judges off and on (the tiny models through the real
  worker, so its process start and ``transformers`` import are real), and each search's wall time.
  The judges run on a background thread while the next run trains, so the gap stays the same;
  what they add is the wait for the last run's figures at the end.

Results go to ``bench/results/image_judges.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import machine, write_result

ROOT = Path(__file__).resolve().parent.parent


def base_clip(folder: Path) -> Path:
    """A CLIP with ViT-B/32's shape (random weights) and the tiny tokenizer of the tests."""
    from transformers import CLIPConfig, CLIPModel

    from tests.judge.tiny_models import tiny_clip

    tiny_clip(folder)  # tokenizer and processor files
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    config = CLIPConfig(text_config={"vocab_size": len(vocab), "bos_token_id": 0, "eos_token_id": 1, "pad_token_id": 1},
                        vision_config={"image_size": 224, "patch_size": 32}, projection_dim=512)
    CLIPModel(config).save_pretrained(folder)
    processor = json.loads((folder / "processor_config.json").read_text(encoding="utf-8"))
    processor["image_processor"].update({"size": {"shortest_edge": 224}, "crop_size": {"height": 224, "width": 224}})
    (folder / "processor_config.json").write_text(json.dumps(processor), encoding="utf-8")
    return folder


def base_dinov2(folder: Path) -> Path:
    """A DINOv2 with dinov2-small's shape (random weights), 224-pixel crops."""
    from transformers import BitImageProcessor, Dinov2Config, Dinov2Model

    folder.mkdir(parents=True, exist_ok=True)
    Dinov2Model(Dinov2Config(hidden_size=384, num_attention_heads=6, image_size=518, patch_size=14)
                ).save_pretrained(folder)
    BitImageProcessor(size={"shortest_edge": 256}, crop_size={"height": 224, "width": 224}).save_pretrained(folder)
    return folder


def images(folder: Path, size: int, count: int) -> list[Path]:
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for n in range(count):
        path = folder / f"{size}-{n}.png"
        Image.effect_noise((size, size), 40 + n).convert("RGB").save(path)
        paths.append(path)
    return paths


def worker_job(clip: Path, dino: Path, pictures: list[Path], references: list[Path], work: Path) -> dict[str, Any]:
    job = {"backbone": {"text_image": str(clip), "likeness": str(dino), "device": "cpu", "batch_size": 8},
           "references": [str(p) for p in references],
           "images": [{"path": str(p), "prompt": "zqx, a photo in the snow", "kind": "in" if i % 2 else "held_out"}
                      for i, p in enumerate(pictures)]}
    (work / "job.json").write_text(json.dumps(job), encoding="utf-8")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "bracket.judge.image_worker", str(work / "job.json"),
                    str(work / "result.json")], cwd=ROOT, check=True, stderr=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    result = json.loads((work / "result.json").read_text(encoding="utf-8"))
    return {"wall_s": round(time.perf_counter() - started, 2), "load_s": result["load_s"],
            "score_s": result["score_s"], "per_image_s": round(result["score_s"] / len(pictures), 4),
            "peak_rss_mb": result["peak_rss_mb"], "images": len(pictures)}


def per_image(work: Path, count: int, base: bool) -> dict[str, Any]:
    from tests.judge.tiny_models import tiny_clip, tiny_dinov2

    sets = {"tiny": (tiny_clip(work / "tiny-clip"), tiny_dinov2(work / "tiny-dino"))}
    if base:
        sets["base-shaped"] = (base_clip(work / "base-clip"), base_dinov2(work / "base-dino"))
    out: dict[str, Any] = {}
    for name, (clip, dino) in sets.items():
        for size in (512, 1024):
            pictures = images(work / "images", size, count)
            out[f"{name} {size}px"] = worker_job(clip, dino, pictures, pictures[:4], work)
            print(f"  {name:<12} {size:>5} px: {out[f'{name} {size}px']}", flush=True)
    return out


def search_gaps(work: Path, judges: bool) -> dict[str, Any]:
    from bracket.cli import main
    from bracket.session import Session
    from tests.fakes import install_inventory_scripts, make_fake_python
    from tests.judge.test_image_judges_search import dataset
    from tests.judge.tiny_models import tiny_clip, tiny_dinov2

    scripts = ("sdxl_train_network.py", "tools/cache_latents.py", "tools/cache_text_encoder_outputs.py")
    work.mkdir(parents=True, exist_ok=True)
    model = work / "sdxl.safetensors"
    model.write_bytes(b"fake")
    fields = {"sd_scripts_dir": str(install_inventory_scripts(work / "sd-scripts", "kohya-ss/sd-scripts", scripts)),
              "trainer_python": str(make_fake_python(work / "bin")), "model_path": str(model),
              "dataset": str(dataset(work / "data"))}
    os.environ["BRACKET_FAKE_PLANTED"] = "1"
    os.environ["PYTHONPATH"] = str(ROOT)
    if judges:
        os.environ["BRACKET_JUDGE_TEXT_IMAGE"] = str(tiny_clip(work / "clip"))
        os.environ["BRACKET_JUDGE_LIKENESS"] = str(tiny_dinov2(work / "dino"))
        os.environ["BRACKET_JUDGE_DEVICE"] = "cpu"
    else:
        for name in ("BRACKET_JUDGE_TEXT_IMAGE", "BRACKET_JUDGE_LIKENESS"):
            os.environ.pop(name, None)
    (work / "prompts.txt").write_text("zqx, a red square --d 1\n# held-out\nzqx, underwater --d 2\n", encoding="utf-8")
    args = ["run", "--preset", "sdxl-lora", "--name", "gaps", "--out", str(work / "runs"), "--budget", "3",
            "--steps", "6", "--sample-every", "2", "--confirm", "0", "--prompts", str(work / "prompts.txt"),
            "--quiet", *[a for name, value in fields.items() for a in ("--set", f"{name}={value}")]]
    started = time.perf_counter()
    assert main(args) == 0
    wall = time.perf_counter() - started
    session = Session.open(work / "runs" / "gaps", validate=False)
    runs = sorted((r for r in session.store.runs(session.name) if r.get("kind") != "setup" and r.get("started_at")),
                  key=lambda r: r["started_at"])
    gaps = [b["started_at"] - a["finished_at"] for a, b in zip(runs, runs[1:]) if a.get("finished_at")]
    judged = sum(1 for r in runs if "image" in (r.get("judges") or {}))
    session.close()
    return {"runs": len(runs), "judged_runs": judged,
            "gap_median_s": round(statistics.median(gaps), 3) if gaps else None,
            "gaps_s": [round(g, 3) for g in gaps], "search_wall_s": round(wall, 1)}


def run(count: int = 8, base: bool = True, search: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = {"machine": machine(), "images_per_job": count}
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        if count:
            print("time per image (worker process, CPU):", flush=True)
            data["per_image"] = per_image(work / "models", count, base)
        if search:
            for judges in (False, True):
                key = "judges on" if judges else "judges off"
                data[f"search, {key}"] = search_gaps(work / key.replace(" ", "-"), judges)
                print(f"  sdxl-lora search, {key}: {data[f'search, {key}']}", flush=True)
    write_result("image_judges", data)
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=8, help="images per job (0: skip the time per image)")
    parser.add_argument("--no-base", action="store_true", help="skip the base-shaped models (tiny only)")
    parser.add_argument("--no-search", action="store_true", help="skip the search gap")
    args = parser.parse_args(argv)
    run(args.images, base=not args.no_base, search=not args.no_search)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
