"""Rebuild the key inventories in this folder from the trainers' own sources.

Not a test (pytest does not collect it). Run it by hand when a trainer is updated::

    python tests/llm/inventories/build_inventories.py --axolotl-repo PATH --axolotl-rev REV \
        --torchtune-repo PATH --torchtune-rev v0.6.1

Each repository path is a git directory (a clone or a bare mirror); files are read with
``git show REV:path`` so no checkout is touched. Keys are read with :mod:`ast` from the
config schema (Axolotl: the pydantic classes ``AxolotlInputConfig`` is built from;
torchtune: the keys the LoRA single-device recipe reads plus the parameters of the
components it builds). torch.optim.AdamW parameters come from the torch installed here.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import subprocess
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent


def _show(repo: str, rev: str, path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", repo, "show", f"{rev}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def _rev_id(repo: str, rev: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", repo, "rev-parse", rev], check=True, capture_output=True, text=True
    ).stdout.strip()


def _classes(source: str) -> dict[str, tuple[list[str], list[str]]]:
    """class name -> (base names, annotated field names) of every top-level class."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
            fields = [
                s.target.id for s in node.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                and s.target.id != "model_config"
            ]
            found[node.name] = (bases, fields)
    return found


def _function_params(source: str, name: str) -> list[str]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            args = node.args
            return [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs if a.arg != "self"]
    raise KeyError(name)


def _class_init_params(source: str, name: str) -> list[str]:
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    args = item.args
                    return [a.arg for a in args.args + args.kwonlyargs if a.arg != "self"]
    raise KeyError(name)


def build_axolotl(repo: str, rev: str) -> dict:
    schema_dir = "src/axolotl/utils/schemas"
    listing = subprocess.run(
        ["git", "--git-dir", repo, "ls-tree", "-r", "--name-only", rev, schema_dir],
        check=True, capture_output=True, text=True,
    ).stdout.split()
    classes: dict[str, tuple[list[str], list[str]]] = {}
    for path in listing:
        if path.endswith(".py"):
            classes.update(_classes(_show(repo, rev, path)))
    keys: set[str] = set()
    pending, seen = ["AxolotlInputConfig"], set()
    while pending:
        name = pending.pop()
        if name in seen or name not in classes:
            continue
        seen.add(name)
        bases, fields = classes[name]
        keys.update(fields)
        pending.extend(bases)
    version = _show(repo, rev, "VERSION").strip()
    return {
        "trainer": "axolotl",
        "version": f"axolotl main @ {_rev_id(repo, rev)[:7]} (VERSION {version}); PyPI 0.19.0 at the time",
        "source": f"{schema_dir}/*.py: fields of AxolotlInputConfig and its base classes",
        "keys": sorted(keys),
        "dataset_keys": sorted(classes["SFTDataset"][1]),
    }


def build_torchtune(repo: str, rev: str) -> dict:
    import torch

    recipe = _show(repo, rev, "recipes/lora_finetune_single_device.py")
    stock = yaml.safe_load(_show(repo, rev, "recipes/configs/llama3_2/1B_lora_single_device.yaml"))
    top = set(stock)
    tree = ast.parse(recipe)
    for node in ast.walk(tree):
        # cfg.key and cfg.get("key")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "cfg":
            if node.attr != "get":
                top.add(node.attr)
        if (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "cfg"
            and node.args and isinstance(node.args[0], ast.Constant)
        ):
            top.add(node.args[0].value)
    datasets = set()
    for module, function in (
        ("torchtune/datasets/_alpaca.py", "alpaca_dataset"),
        ("torchtune/datasets/_chat.py", "chat_dataset"),
        ("torchtune/datasets/_text_completion.py", "text_completion_dataset"),
    ):
        datasets.update(_function_params(_show(repo, rev, module), function))
    datasets.discard("tokenizer")
    datasets.discard("load_dataset_kwargs")
    datasets.update({"data_files", "split"})  # forwarded to datasets.load_dataset
    lora_model = set(_function_params(_show(repo, rev, "torchtune/models/llama3_2/_model_builders.py"),
                                      "lora_llama3_2_1b"))
    schedule = set(_function_params(_show(repo, rev, "torchtune/training/lr_schedulers.py"),
                                    "get_cosine_schedule_with_warmup"))
    schedule -= {"optimizer", "num_training_steps", "last_epoch"}
    logging_source = _show(repo, rev, "torchtune/training/metric_logging.py")
    loggers = set(_class_init_params(logging_source, "TensorBoardLogger"))
    loggers |= set(_class_init_params(logging_source, "DiskLogger"))
    loggers.discard("kwargs")
    checkpointer = set(_class_init_params(
        _show(repo, rev, "torchtune/training/checkpointing/_checkpointer.py"), "FullModelHFCheckpointer"))
    optimizer = set(inspect.signature(torch.optim.AdamW).parameters) - {"params"}
    nested = {
        "model": lora_model,
        "optimizer": optimizer,
        "lr_scheduler": schedule,
        "dataset": datasets,
        "metric_logger": loggers,
        "checkpointer": checkpointer,
        "tokenizer": set(stock["tokenizer"]) - {"_component_"},
    }
    return {
        "trainer": "torchtune",
        "version": f"torchtune {rev} ({_rev_id(repo, rev)[:7]}), the last PyPI release; torch {torch.__version__} "
                   "for torch.optim.AdamW",
        "source": "recipes/lora_finetune_single_device.py cfg reads, recipes/configs/llama3_2/"
                  "1B_lora_single_device.yaml, component signatures (alpaca/chat/text_completion datasets, "
                  "lora_llama3_2_1b, get_cosine_schedule_with_warmup, TensorBoardLogger/DiskLogger, "
                  "FullModelHFCheckpointer, torch.optim.AdamW)",
        "keys": sorted(top),
        "nested": {k: sorted(v | {"_component_"}) for k, v in nested.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--axolotl-repo", required=True)
    parser.add_argument("--axolotl-rev", default="HEAD")
    parser.add_argument("--torchtune-repo", required=True)
    parser.add_argument("--torchtune-rev", default="v0.6.1")
    args = parser.parse_args()
    for name, data in (
        ("axolotl_keys.json", build_axolotl(args.axolotl_repo, args.axolotl_rev)),
        ("torchtune_keys.json", build_torchtune(args.torchtune_repo, args.torchtune_rev)),
    ):
        (HERE / name).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(name, len(data["keys"]), "top-level keys")


if __name__ == "__main__":
    main()
