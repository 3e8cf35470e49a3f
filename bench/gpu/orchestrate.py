"""The GPU proof, end to end: install, build weights, train sdxl-lora through Bracket, measure, write the table.

``python -m bench.gpu.orchestrate --out DIR [--device gpu|cpu] [--steps N] [--carry .gpucarry]
[--sd-scripts DIR --trainer-python PY --model FILE --tokenizers DIR]``

1. installs the carried wheels (``bootstrap``) into ``DIR/site``;
2. builds random full-size SDXL weights and offline tokenizers with sd-scripts' own classes
   (``tests/sd_scripts/build_random_sdxl.py``) unless ``--model`` names them, and a 3-image dataset;
3. samples the GPU with ``nvidia-smi`` (when present) into ``DIR/gpu.csv``, then runs
   ``python -m bracket run --preset sdxl-lora`` twice one after the other (a 2-run session each:
   pre-cache once, samples at two steps, validation loss), once as two sessions side by side on the
   one GPU, then ``report``, ``export`` and the exported ``train.sh``;
4. writes ``DIR/gpu_proof.md`` and ``DIR/gpu_proof.json`` (``table``) and prints the table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.gpu import bootstrap, measure, table

ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = ROOT / "tests" / "sd_scripts" / "build_random_sdxl.py"
SMI_QUERY = ["--query-gpu=timestamp,utilization.gpu,memory.used", "--format=csv,noheader,nounits", "-lms", "250"]


#: enough images for Bracket's automatic validation split (bracket.trainer.heldout.MIN_IMAGES)
IMAGES = 20


def dataset(folder: Path) -> Path:
    from PIL import Image, ImageDraw

    folder.mkdir(parents=True, exist_ok=True)
    colours = ("red", "green", "blue", "orange", "purple")
    for n in range(IMAGES):
        colour, shape = colours[n % 5], ("square", "circle")[n // 5 % 2]
        image = Image.new("RGB", (256, 256), "white")
        box = (40 + 4 * n, 48, 216, 216 - 4 * n)
        (ImageDraw.Draw(image).ellipse if shape == "circle" else ImageDraw.Draw(image).rectangle)(box, fill=colour)
        image.save(folder / f"img{n:02d}.png")
        (folder / f"img{n:02d}.txt").write_text(f"a {colour} {shape}", encoding="utf-8")
    return folder


def logged(cmd: list[str], log: Path, env: dict[str, str], cwd: Path = ROOT) -> subprocess.Popen:
    handle = log.open("ab")
    process = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=handle, stderr=subprocess.STDOUT)
    handle.close()
    return process


def session_args(name: str, fields: dict[str, str], steps: int, out: Path) -> list[str]:
    sets = [word for key, value in fields.items() for word in ("--set", f"{key}={value}")]
    return [sys.executable, "-m", "bracket", "run", "--preset", "sdxl-lora", *sets, "--budget", "2",
            "--steps", str(steps), "--sample-every", str(max(1, steps // 2)), "--name", name, "--quiet",
            "--out", str(out), "--prompts", "a red square --d 1 --s 4\na blue square --d 2 --s 4"]


def run_rows(folder: Path) -> list[dict]:
    from bracket.session import Session

    session = Session.open(folder)
    try:
        return [dict(r) for r in session.store.runs(session.name)]
    finally:
        session.close()


def trainer_of(fields: dict[str, str]):
    from bracket.registry import get_preset

    return get_preset("sdxl-lora").trainer_factory(dict(fields))  # the fields the runs had; no re-validation


def measured_rows(folder: Path, label: str, samples: list, trainer) -> list[dict]:
    rows = []
    for run in run_rows(folder):
        start, end = run.get("started_at"), run.get("finished_at")
        if start is None or end is None:
            continue
        if run["kind"] == "setup":
            rows.append({"run": f"{label} {run['label']}", "wall_s": end - start})
            continue
        split = measure.phases(start, end, measure.step_times(Path(run["run_dir"]) / "logs"))
        peak = measure.peak_mib(samples, start, end)
        rows.append({"run": f"{label} {run['kind']}", "status": run["status"], "start": start, "end": end,
                     "samples": len(run.get("samples") or []), "eval_points": len(run.get("eval_loss") or []),
                     **split, **measure.plan_check(trainer, peak)})
    return rows


def idle_between(rows: list[dict], samples: list) -> float | None:
    trained = sorted((r for r in rows if "start" in r), key=lambda r: r["start"])
    gaps = [measure.idle_seconds(samples, a["end"], b["start"]) for a, b in zip(trained, trained[1:])
            if b["start"] > a["end"]]
    known = [g for g in gaps if g is not None]
    return sum(known) if known else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gpu.orchestrate", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--device", choices=("gpu", "cpu"), default="gpu")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--carry", type=Path, default=ROOT / ".gpucarry")
    parser.add_argument("--sd-scripts", type=Path, default=None)
    parser.add_argument("--trainer-python", default=sys.executable)
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--tokenizers", type=Path, default=None)
    parser.add_argument("--vram-gb", default="80")
    parser.add_argument("--quick", action="store_true",
                        help="one session only: no second serial session, no packed pair (the slow CPU test)")
    parser.add_argument("--work", type=Path, default=None,
                        help="weights, dataset and runs (default: a new temporary folder; never under --out, "
                             "whose files come back from the device)")
    args = parser.parse_args(argv)
    sd_scripts = args.sd_scripts or args.carry / "sd-scripts"
    if not sd_scripts.is_dir():
        print(f"error: no sd-scripts folder at {sd_scripts}; build the carry (python -m bench.gpu.carry)",
              file=sys.stderr)
        return 2
    out, work = args.out, args.work or Path(tempfile.mkdtemp(prefix="bracket-gpu-proof-"))
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    log = out / "orchestrate.log"
    env = bootstrap.install(args.carry / "wheels", work / "site", log)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    # sd-scripts' tools import its ``library`` package, which ``pip install -e .`` would provide
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH", ""), str(sd_scripts.resolve())) if p)
    clock = {"start": time.time()}
    model, tokenizers = args.model, args.tokenizers
    if model is None:
        code = logged([args.trainer_python, str(BUILD_SCRIPT), str(work / "weights")], log, env, cwd=sd_scripts).wait()
        if code:
            print(f"error: building the random SDXL weights failed (exit {code}); see {log}", file=sys.stderr)
            return 1
        model, tokenizers = work / "weights" / "sdxl-random.ckpt", work / "weights" / "tokenizers"
    clock["weights_s"] = time.time() - clock["start"]
    fields = {"model_path": str(model), "tokenizer_cache_dir": str(tokenizers or ""),
              "dataset": str(dataset(work / "data")), "resolution": "256", "sd_scripts_dir": str(sd_scripts),
              "trainer_python": args.trainer_python, "vram_gb": args.vram_gb, "device": args.device}
    smi = shutil.which("nvidia-smi")
    sampler = logged([smi, *SMI_QUERY], out / "gpu.csv", env) if smi else None
    runs = work / "runs"
    try:
        one_at_a_time = time.time()
        serial = ("serial-a",) if args.quick else ("serial-a", "serial-b")
        for name in serial:
            if logged(session_args(name, fields, args.steps, runs), log, env).wait():
                print(f"error: session {name} failed; see {log}", file=sys.stderr)
                return 1
        serial_s = time.time() - one_at_a_time
        packed_start = time.time()
        packed = () if args.quick else ("packed-a", "packed-b")
        pair = [logged(session_args(name, fields, args.steps, runs), log, env) for name in packed]
        packed_codes = [p.wait() for p in pair]
        packed_s = time.time() - packed_start
        folder = runs / "serial-a"
        tail = [[sys.executable, "-m", "bracket", "report", str(folder)],
                [sys.executable, "-m", "bracket", "export", str(folder), "--run", str(_first_run(folder)),
                 "--steps", str(args.steps)]]
        for cmd in tail:
            if logged(cmd, log, env).wait():
                print(f"error: {' '.join(cmd[2:4])} failed; see {log}", file=sys.stderr)
                return 1
        exported = next((folder / "export").glob("*/train.sh"))
        export_start = time.time()
        export_code = logged(["bash", str(exported)], log, env, cwd=work).wait()
        export_s = time.time() - export_start
    finally:
        if sampler:
            sampler.terminate()
            sampler.wait()
    samples = measure.gpu_samples(out / "gpu.csv")
    trainer = trainer_of(fields)
    rows = []
    for name in (*serial, *packed):
        rows += measured_rows(runs / name, name, samples, trainer)
    summary = {"device": args.device, "steps_per_run": args.steps, "weights_build_s": clock["weights_s"],
               "serial_runs_per_hour": 2 * len(serial) * 3600 / serial_s,
               "packed_runs_per_hour": (4 * 3600 / packed_s) if packed and not any(packed_codes) else None,
               "packed_exit_codes": packed_codes, "gpu_idle_between_serial_runs_s":
               idle_between([r for r in rows if r["run"].startswith("serial")], samples),
               "export_rerun_exit": export_code, "export_rerun_s": export_s, "gpu_samples": len(samples)}
    path = table.write(out, rows, summary)
    print(path.read_text(encoding="utf-8"))
    return 0 if not any(packed_codes) and export_code == 0 else 1


def _first_run(folder: Path) -> int:
    return next(r["id"] for r in run_rows(folder) if r["kind"] == "baseline")


if __name__ == "__main__":
    sys.exit(main())
