"""A fake ostris/ai-toolkit ``run.py``: reads the job file the way the pin does, trains nothing.

Installed as ``<checkout>/run.py`` by :func:`tests.fakes.ai_toolkit.make_fake_ai_toolkit`, beside
``aitk_inventory.py`` (a copy of ``bracket/trainer/inventory/ai_toolkit.py``) and
``ai-toolkit.json`` (the inventory). What it copies from ai-toolkit at the pin (27a03a91):

* ``python run.py <job file>``: a job with a key the inventory does not list is refused (the
  real one would ignore it silently: the fake is stricter on purpose), so is a wrong ``job``;
* the run folder ``<training_folder>/<config.name>``; a save already there (``<name>*.safetensors``)
  is resumed from: the loop starts at its step (``load_training_state_from_metadata``);
* per step, in the order of ``BaseSDTrainProcess.run``: save (``<name>_<step:09d>.safetensors``
  when ``step % save.save_every == 0``), sample (``samples/<ms>__<step:09d>_<i>.jpg``, written in
  ``samples/.tmp`` then moved), log ``loss`` and ``lr`` to TensorBoard under
  ``<log_dir>/<name>_<time>/`` and ``loss/loss``/``learning_rate`` to ``loss_log.db`` (its
  ``steps``/``metric_keys``/``metrics`` schema) every ``logging.log_every`` steps — none of it on
  the first step of a launch; samples before the first step of a fresh run (step 0) and after
  the last; ``<name>.safetensors`` after the last step;
* with ``train.validation_config``: ``val/loss`` every ``validate_every_n_steps`` steps, into
  ``loss_log.db`` only (the held-out images must exist and not be in the training folders);
* SIGINT: "Job stopped", exit 0, nothing saved; SIGTERM: killed (Python's default).

The loss falls fastest at a learning rate of 1e-4 (Prodigy: d_coef 1) and is seeded by
``training_seed``. Each step sleeps ``BRACKET_FAKE_STEP_S`` seconds (the trainer environment
passes it through ``BRACKET_TRAINER_ENV``), 0.01 by default.
"""

from __future__ import annotations

import json
import math
import os
import random
import sqlite3
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from aitk_inventory import job_problems, load_inventory  # noqa: E402


def loss_at(process: dict, step: int, rng: random.Random) -> float:
    train = process["train"]
    rate = float(train.get("lr", 1e-4))
    if str(train.get("optimizer", "")).startswith("prodigy"):
        rate = 1e-4 * float(train.get("optimizer_params", {}).get("d_coef", 1.0))
    distance = abs(math.log10(rate) - math.log10(1e-4))
    floor = 0.05 + 0.1 * distance
    return floor + (0.5 - floor) * math.exp(-step / 30.0 * max(0.1, 1.0 - distance)) + rng.uniform(0, 0.01)


class Logs:
    """TensorBoard scalars and ai-toolkit's UI logger database."""

    def __init__(self, process: dict, name: str, save_root: Path) -> None:
        self.writer = None
        if process.get("log_dir"):
            from tensorboard.summary.writer.event_file_writer import EventFileWriter

            folder = Path(process["log_dir"]) / f"{name}_{time.strftime('%Y%m%d-%H%M%S')}"
            folder.mkdir(parents=True, exist_ok=True)
            self.writer = EventFileWriter(str(folder))
        self.db = None
        if process.get("logging", {}).get("use_ui_logger"):
            self.db = sqlite3.connect(save_root / "loss_log.db", isolation_level=None)
            self.db.execute("CREATE TABLE IF NOT EXISTS steps (step INTEGER PRIMARY KEY, wall_time REAL NOT NULL)")
            self.db.execute("CREATE TABLE IF NOT EXISTS metric_keys (key TEXT PRIMARY KEY, first_seen_step INTEGER, "
                            "last_seen_step INTEGER)")
            self.db.execute("CREATE TABLE IF NOT EXISTS metrics (step INTEGER NOT NULL, key TEXT NOT NULL, "
                            "value_real REAL, value_text TEXT, PRIMARY KEY (step, key))")

    def validation(self, step: int, loss: float) -> None:
        """``val/loss`` goes to the UI logger only (``additional_logs``), as at the pin."""
        if self.db is not None:
            self.db.execute("INSERT OR REPLACE INTO steps VALUES (?, ?)", (step, time.time()))
            self.db.execute("INSERT OR REPLACE INTO metrics VALUES (?, 'val/loss', ?, NULL)", (step, loss))

    def log(self, step: int, loss: float, rate: float) -> None:
        if self.writer is not None:
            from tensorboard.compat.proto import event_pb2, summary_pb2

            values = [summary_pb2.Summary.Value(tag=t, simple_value=v) for t, v in (("loss", loss), ("lr", rate))]
            self.writer.add_event(event_pb2.Event(wall_time=time.time(), step=step,
                                                  summary=summary_pb2.Summary(value=values)))
            self.writer.flush()
        if self.db is not None:
            self.db.execute("INSERT OR REPLACE INTO steps VALUES (?, ?)", (step, time.time()))
            for key, value in (("learning_rate", rate), ("loss/loss", loss)):
                self.db.execute("INSERT OR REPLACE INTO metrics VALUES (?, ?, ?, NULL)", (step, key, value))
                self.db.execute("INSERT INTO metric_keys VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET "
                                "last_seen_step=MAX(last_seen_step, excluded.last_seen_step)", (key, step, step))


def write_samples(process: dict, save_root: Path, step: int, loss: float) -> None:
    from PIL import Image

    sample = process.get("sample") or {}
    folder = save_root / "samples"
    (folder / ".tmp").mkdir(parents=True, exist_ok=True)
    stamp = int(time.time() * 1000)
    for index, item in enumerate(sample.get("samples", [])):
        rng = random.Random(int(item.get("seed", sample.get("seed", 0))))
        colour = tuple(rng.randrange(256) for _ in range(3))
        base = Image.new("RGB", (32, 32), colour)
        grain = Image.effect_noise((32, 32), 10.0 + 100.0 * min(1.0, loss)).convert("RGB")
        name = f"{stamp}__{step:09d}_{index}.jpg"
        Image.blend(base, grain, 0.5).save(folder / ".tmp" / name)
        os.replace(folder / ".tmp" / name, folder / name)


def save(save_root: Path, name: str, step: int | None) -> None:
    suffix = "" if step is None else f"_{step:09d}"
    path = save_root / f"{name}{suffix}.safetensors"
    temporary = path.with_suffix(".part")
    temporary.write_text(json.dumps({"training_info": {"step": step}}), encoding="utf-8")
    os.replace(temporary, path)


def resume_step(save_root: Path, name: str) -> int:
    """The step of the newest save of ``name`` (ai-toolkit's ``get_latest_save_path``), else 0."""
    saves = sorted(save_root.glob(f"{name}*.safetensors"), key=lambda p: p.stat().st_mtime)
    if not saves:
        return 0
    step = json.loads(saves[-1].read_text(encoding="utf-8"))["training_info"]["step"]
    print(f"Loading from {saves[-1]}: resuming at step {step}", flush=True)
    return int(step or 0)


def train(job: dict) -> None:
    name = job["config"]["name"]
    process = job["config"]["process"][0]
    train_config = process["train"]
    save_root = Path(process["training_folder"]) / name
    save_root.mkdir(parents=True, exist_ok=True)
    (save_root / "config.yaml").write_text(json.dumps(job), encoding="utf-8")
    steps = int(train_config.get("steps", 1000))
    save_every = int(process.get("save", {}).get("save_every", 1000))
    log_every = int(process.get("logging", {}).get("log_every", 100))
    sampling = not train_config.get("disable_sampling") and (process.get("sample") or {}).get("samples")
    sample_every = int((process.get("sample") or {}).get("sample_every", 100))
    rng = random.Random(int(process.get("training_seed") or 0))
    logs = Logs(process, name, save_root)
    start = resume_step(save_root, name)
    pause = float(os.environ.get("BRACKET_FAKE_STEP_S", "0.01"))
    validation = train_config.get("validation_config")
    if validation:  # the held-out images must exist and must not be trained on
        held = {Path(item["image_path"]).name for item in validation["validation_items"]}
        trained = {p.name for d in process["datasets"] for p in Path(d["folder_path"]).iterdir()}
        assert held and all(Path(i["image_path"]).is_file() for i in validation["validation_items"])
        assert not held & trained, f"validation images are trained on: {held & trained}"
    if sampling and start <= 1:
        print("Generating baseline samples before training", flush=True)
        write_samples(process, save_root, start, 0.6)
    for step in range(start, steps):
        loss = loss_at(process, step + 1, rng)
        time.sleep(pause)
        if step != start:
            if save_every and step % save_every == 0:
                save(save_root, name, step)
            if sampling and step % sample_every == 0:
                write_samples(process, save_root, step, loss)
            if validation and step % int(validation.get("validate_every_n_steps", 10)) == 0:
                logs.validation(step, loss + 0.02)
            if log_every and step % log_every == 0:
                logs.log(step, loss, float(train_config.get("lr", 0.0)))
        print(f"step {step + 1}/{steps} loss {loss:.4f}", flush=True)
    save(save_root, name, None)
    if sampling:
        write_samples(process, save_root, steps, loss_at(process, steps, rng))


def main(argv: list[str]) -> int:
    job_file = Path(argv[0])
    job = json.loads(job_file.read_text(encoding="utf-8"))
    problems = job_problems(job, load_inventory(str(HERE / "ai-toolkit.json")))
    if problems:
        print("fake ai-toolkit refuses the job file:\n" + "\n".join(problems), file=sys.stderr)
        return 1
    print(f"Running 1 job\n# Running job: {job['config']['name']}", flush=True)
    try:
        train(job)
    except KeyboardInterrupt:
        print("========================================\nJob stopped\n========================================",
              flush=True)
        return 0
    print("Result:\n - 1 completed job", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
