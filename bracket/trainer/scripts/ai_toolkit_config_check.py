"""Hand a job file to ostris/ai-toolkit's own loader and config classes; train nothing.

    usage: python ai_toolkit_config_check.py <ai-toolkit checkout> <job file>... [--stub-missing]

Runs in a python that can import the checkout (the trainer's venv, or Bracket's own with
``--stub-missing``). It does what ``run.py`` and ``BaseSDTrainProcess.__init__`` do with a job
before any model is loaded: ``toolkit.config.get_config`` (the loader: ``job``, ``config``,
``config.name``), then for the first process ``TrainConfig``, ``ModelConfig`` (with the train
dtype), ``NetworkConfig``, ``SaveConfig``, ``SampleConfig``, ``LoggingConfig``, one
``DatasetConfig`` per resolution (``preprocess_dataset_raw_config``) and ``validate_configs``.
A config class that raises (a bad value, a combination it refuses) fails the check.

``--stub-missing`` replaces the packages that cannot be imported (torch, torchaudio, torchao, …
on a machine without the trainer's venv) with inert stand-ins: the config classes only name
them. It imports nothing from Bracket (it runs in the trainer's interpreter).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import types
import typing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from parser_check import MARKER  # noqa: E402  (its sibling, run by path as this script is)

#: imported by toolkit/config_modules.py and toolkit/config.py at the pin (or by what they import)
STUBBABLE = ("torch", "torchaudio", "torchao", "torchao.quantization", "torchao.quantization.quant_primitives",
             "safetensors", "safetensors.torch", "tqdm", "diffusers", "transformers")
#: toolkit modules config_modules.py imports only for names in type hints or later calls
TOOLKIT_STUBS = ("toolkit.audio.album_artwork", "toolkit.prompt_utils")


class _Stub(types.ModuleType):
    """A module (and every attribute of it) that is callable, falsy when called, and usable in ``X | None``."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        value = _Stub(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value

    def __call__(self, *args, **kwargs):
        return False

    def __or__(self, other):
        return typing.Any

    __ror__ = __or__

    def __iter__(self):
        return iter(())


def _missing(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is None
    except (ImportError, ValueError):
        return True


def stub_missing() -> list[str]:
    stubbed = []
    for name in STUBBABLE:
        root = name.split(".")[0]
        if _missing(root) or (root != name and root in stubbed):
            sys.modules[name] = _Stub(name)
            stubbed.append(name)
    for name in TOOLKIT_STUBS:
        sys.modules[name] = _Stub(name)
        stubbed.append(name)
    if _missing("oyaml") and not _missing("yaml"):
        sys.modules["oyaml"] = importlib.import_module("yaml")  # oyaml is PyYAML keeping key order
        stubbed.append("oyaml")
    return stubbed


def check(job_file: Path) -> dict:
    from toolkit.config import get_config
    from toolkit.config_modules import (
        DatasetConfig,
        LoggingConfig,
        ModelConfig,
        NetworkConfig,
        SampleConfig,
        SaveConfig,
        TrainConfig,
        preprocess_dataset_raw_config,
        validate_configs,
    )

    config = get_config(str(job_file))
    process = config["config"]["process"][0]
    train = TrainConfig(**process.get("train", {}))
    model = ModelConfig(**{**process.get("model", {}), "dtype": train.dtype})
    network = NetworkConfig(**process["network"]) if process.get("network") is not None else None
    save = SaveConfig(**process.get("save", {}))
    sample = SampleConfig(**process.get("sample", {}))
    LoggingConfig(**process.get("logging", {}))
    raw = preprocess_dataset_raw_config(process.get("datasets") or [])
    for entry in raw:  # what BaseSDTrainProcess hands on from the train config
        if train.cache_text_embeddings:
            entry["cache_text_embeddings"] = True
    datasets = [DatasetConfig(**entry) for entry in raw]
    validate_configs(train, model, save, datasets)
    return {"name": config["config"]["name"], "arch": model.arch, "steps": train.steps, "lr": train.lr,
            "network": None if network is None else network.type, "datasets": len(datasets),
            "samples": len(sample.samples)}


def main(argv: list[str]) -> int:
    """One JSON line per job file accepted, then the report line ``bracket doctor`` reads
    (``BRACKET_PARSER_CHECK {"ok": …, "problems": […]}``, as ``parser_check.py`` prints)."""
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return 0
    files = [a for a in argv if a != "--stub-missing"]
    if len(files) < 2:
        print("usage: ai_toolkit_config_check.py CHECKOUT JOB_FILE... [--stub-missing]", file=sys.stderr)
        return 2
    stubbed = stub_missing() if "--stub-missing" in argv else []
    sys.path.insert(0, str(Path(files[0])))
    problems: list[str] = []
    extra: dict = {}
    for job_file in files[1:]:
        try:
            result = check(Path(job_file))
        except ModuleNotFoundError as error:  # the trainer venv lacks a package the loader imports
            extra["missing_module"] = error.name
            problems.append(f"{job_file}: {error}")
            break
        except Exception as error:  # the config classes raise ValueError, KeyError, TypeError …
            problems.append(f"ai-toolkit refuses {job_file}: {type(error).__name__}: {error}")
            continue
        print(json.dumps({"ok": True, "file": job_file, **result, "stubbed": stubbed}))
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    print(f"{MARKER} {json.dumps({'ok': not problems, 'problems': problems, **extra})}", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
