"""A fake Axolotl / torchtune entry point: run by the fake trainer python of the LLM tests.

It receives what the real python would (``-m accelerate.commands.launch ... -m
axolotl.cli.train cfg.yml`` or ``-m torchtune._cli.tune run RECIPE --config C k=v ...``),
checks the config / overrides against the key inventories in ``../inventories`` (and the
Axolotl rules: quoted "no", one warmup key, fixed eval split), writes tfevents with the
trainer's real tag names and an adapter, and exits 0; any problem exits 2 with a message.
Axolotl's ``save_steps`` checkpoints and ``resume_from_checkpoint`` behave as the HF Trainer's
(``hf_checkpoints.py``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hf_checkpoints  # noqa: E402
from tfevents_writer import ScalarWriter  # noqa: E402

INVENTORIES = Path(__file__).resolve().parent.parent / "inventories"


def fail(message: str) -> None:
    print(f"FAKE TRAINER ERROR: {message}", file=sys.stderr)
    sys.exit(2)


def module_args(argv: list[str], module: str) -> list[str]:
    for index in range(len(argv) - 1):
        if argv[index] == "-m" and argv[index + 1] == module:
            return argv[index + 2:]
    fail(f"-m {module} not found in {argv}")
    return []


def run_axolotl(argv: list[str]) -> None:
    if argv[:2] != ["-m", "accelerate.commands.launch"]:
        fail("axolotl must be launched through accelerate")
    args = module_args(argv, "axolotl.cli.train")
    if len(args) != 1:
        fail(f"expected one config path, got {args}")
    if os.environ.get("AXOLOTL_DO_NOT_TRACK") != "1":
        fail("AXOLOTL_DO_NOT_TRACK is not 1")
    config = yaml.safe_load(Path(args[0]).read_text(encoding="utf-8"))
    inventory = json.loads((INVENTORIES / "axolotl_keys.json").read_text(encoding="utf-8"))
    unknown = sorted(set(config) - set(inventory["keys"]))
    if unknown:
        fail(f"unknown axolotl keys {unknown}")
    for entry in config["datasets"] + config.get("test_datasets", []):
        bad = sorted(set(entry) - set(inventory["dataset_keys"]))
        if bad:
            fail(f"unknown dataset keys {bad}")
        if not Path(entry["path"]).is_file():
            fail(f"dataset file {entry['path']} missing")
    if "warmup_steps" in config and "warmup_ratio" in config:
        fail("warmup_steps and warmup_ratio are mutually exclusive")
    for key in ("save_strategy", "eval_strategy"):
        if key in config and not isinstance(config[key], str):
            fail(f"{key} must be a string, got {config[key]!r}")
    logdir = os.environ.get("TENSORBOARD_LOGGING_DIR") or str(Path(config["output_dir"]) / "runs" / "x")
    writer = ScalarWriter(logdir)
    steps, every = int(config["max_steps"]), int(config["eval_steps"])
    output = Path(config["output_dir"])
    start = hf_checkpoints.resumed_step(config.get("resume_from_checkpoint"))
    save_every = int(config["save_steps"]) if config.get("save_strategy") == "steps" else 0
    writer.add_scalar("eval/loss", 3.0 if not start else 2.9 - start * 0.01, start)  # eval_on_start
    for step in range(start + 1, steps + 1):
        hf_checkpoints.step_pause()
        writer.add_scalar("train/loss", 3.0 - step * float(config["learning_rate"]) * 100, step)
        writer.add_scalar("train/learning_rate", float(config["learning_rate"]), step)
        if step % every == 0:
            writer.add_scalar("eval/loss", 2.9 - step * 0.01, step)
            writer.add_scalar("eval/ppl", 18.0, step)
        if save_every and step % save_every == 0:  # after the step's log and eval, as the Trainer
            hf_checkpoints.save_checkpoint(output, step, adapter_config={"r": config["lora_r"]})
            hf_checkpoints.hold(step, steps)
    writer.close()
    output.mkdir(parents=True, exist_ok=True)
    (output / "adapter_config.json").write_text(json.dumps({"r": config["lora_r"]}), encoding="utf-8")


def run_torchtune(argv: list[str]) -> None:
    args = module_args(argv, "torchtune._cli.tune")
    if args[:2] != ["run", "lora_finetune_single_device"] or args[2] != "--config":
        fail(f"unexpected tune arguments {args[:4]}")
    inventory = json.loads((INVENTORIES / "torchtune_keys.json").read_text(encoding="utf-8"))
    values: dict[str, str] = {}
    for word in args[4:]:
        if word.startswith("~"):
            key = word[1:]
        else:
            if word.count("=") != 1:
                fail(f"override {word!r} must be key=value with one '='")
            key, value = word.split("=")
            values[key] = value
        parent, _, child = key.partition(".")
        if parent not in inventory["keys"]:
            fail(f"unknown torchtune key {parent}")
        if child and child not in inventory["nested"].get(parent, []):
            fail(f"unknown torchtune key {key}")
    for key in ("metric_logger.log_dir", "output_dir"):  # OmegaConf reads each value as YAML, as torchtune does
        values[key] = str(yaml.safe_load(values[key])).replace("\\${", "${")
    writer = ScalarWriter(values["metric_logger.log_dir"])
    steps = int(values["epochs"]) * int(values["max_steps_per_epoch"])
    for step in range(1, steps + 1):
        writer.add_scalar("loss", 2.5 - step * 0.01, step)
        writer.add_scalar("lr", float(values["optimizer.lr"]), step)
    writer.close()
    epoch_dir = Path(values["output_dir"]) / f"epoch_{int(values['epochs']) - 1}"
    epoch_dir.mkdir(parents=True, exist_ok=True)
    (epoch_dir / "adapter_config.json").write_text("{}", encoding="utf-8")


def main() -> None:
    argv = sys.argv[1:]
    if "axolotl.cli.train" in argv:
        run_axolotl(argv)
    elif "torchtune._cli.tune" in argv:
        run_torchtune(argv)
    else:
        fail(f"unknown command {argv[:4]}")


if __name__ == "__main__":
    main()
