"""Regenerate ``ai-toolkit.json``: every job-file key ostris/ai-toolkit reads, at the pinned commit.

::

    python -m bracket.trainer.inventory.ai_toolkit_regenerate                  # vendor/ai-toolkit
    python -m bracket.trainer.inventory.ai_toolkit_regenerate --git-dir /path/to/ai-toolkit.git

ai-toolkit reads its job file by hand, not through a parser: each section is handed to a config
class (``TrainConfig(**process['train'])``, ``toolkit/config_modules.py``) that reads the keys it
knows with ``kwargs.get('key', default)`` and silently ignores every other key. So the inventory is
read from the source with ``ast`` (no venv, no torch): per section, the string keys its class
reads (``kwargs.get('k')``, ``kwargs['k']``, ``'k' in kwargs``) and, for the job and process
levels, the keys of ``get_conf('k')``. :data:`SECTIONS` says which class (or which files) each
section of the job file is read by — the one hand-written part, checked against the source
(a class or file that is gone fails the run). The commit is the gitlink of ``vendor/ai-toolkit``
in this repository's HEAD; a checkout that is a git work tree must be at it.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from bracket.trainer.inventory.ai_toolkit import INVENTORY_PATH, REPO, VENDOR
from bracket.trainer.inventory.regenerate import PROJECT_ROOT, RegenerateError, checkout_head, gitlink_commit

CONFIG_MODULES = "toolkit/config_modules.py"
#: the files whose ``get_conf`` keys are the job's ``config`` level (``ExtensionJob``)
JOB_FILES = ("jobs/BaseJob.py", "jobs/ExtensionJob.py")
#: the class chain of the ``sd_trainer`` process (``extensions_built_in/sd_trainer``)
PROCESS_FILES = ("jobs/process/BaseProcess.py", "jobs/process/BaseTrainProcess.py",
                 "jobs/process/BaseSDTrainProcess.py", "extensions_built_in/sd_trainer/SDTrainer.py")
#: job-file section -> the config class of ``toolkit/config_modules.py`` that reads it
SECTIONS = {
    "process.train": "TrainConfig",
    "process.train.ema_config": "EMAConfig",
    "process.train.validation_config": "ValidationConfig",
    "process.train.validation_config.validation_items[]": "ValidationItem",
    "process.model": "ModelConfig",
    "process.network": "NetworkConfig",
    "process.save": "SaveConfig",
    "process.sample": "SampleConfig",
    "process.sample.samples[]": "SampleItem",
    "process.logging": "LoggingConfig",
    "process.datasets[]": "DatasetConfig",
}
#: sections whose keys are handed on unchecked (optimizer and scheduler arguments, per-arch kwargs)
OPEN_SECTIONS = ("process.train.optimizer_params", "process.train.lr_scheduler_params",
                 "process.network.network_kwargs", "process.model.quantize_kwargs")
#: ``model.model_kwargs`` is read by each model class (``self.model_config.model_kwargs.get('k')``)
MODEL_KWARGS_DIRS = ("extensions_built_in/diffusion_models", "toolkit/models")


def _string(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _keys_read(tree: ast.AST, receiver: Callable[[ast.AST], bool], methods: tuple[str, ...]) -> set[str]:
    """String keys of ``<receiver>.get('k')`` / ``<receiver>['k']`` / ``'k' in <receiver>``."""
    keys: set[str] = set()
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in methods \
                and receiver(node.func.value) and node.args:
            key = _string(node.args[0])
        elif isinstance(node, ast.Subscript) and receiver(node.value):
            key = _string(node.slice)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In) \
                and receiver(node.comparators[0]):
            key = _string(node.left)
        if key is not None:
            keys.add(key)
    return keys


def _named(name: str) -> Callable[[ast.AST], bool]:
    return lambda node: isinstance(node, ast.Name) and node.id == name


def _self_method(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _model_kwargs(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "model_kwargs"


def class_keys(tree: ast.Module, name: str) -> set[str]:
    """The keys class ``name`` reads from its ``**kwargs``."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return _keys_read(node, _named("kwargs"), ("get", "pop"))
    raise RegenerateError(f"{CONFIG_MODULES} has no class {name} any more: update SECTIONS in {__name__}.")


def get_conf_keys(trees: list[ast.Module]) -> set[str]:
    """The first (dotted keys: top-level) keys of ``self.get_conf('k', ...)``."""
    keys: set[str] = set()
    for tree in trees:
        keys |= {k.split(".")[0] for k in _keys_read(tree, _self_method, ("get_conf",))}
    return keys


def literal_type(tree: ast.Module, name: str) -> list[str]:
    """The strings of ``<name> = Literal['a', 'b', ...]`` (``ModelArch``: the archs of ``toolkit/models``)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets) \
                and isinstance(node.value, ast.Subscript):
            elements = node.value.slice.elts if isinstance(node.value.slice, ast.Tuple) else [node.value.slice]
            return sorted(s for s in map(_string, elements) if s)
    raise RegenerateError(f"{CONFIG_MODULES} has no {name} any more: update {__name__}.")


def literal_assignments(trees: list[ast.Module], target: str) -> list[str]:
    """Every string assigned to ``<target> = '...'`` (extension ``uid``, model ``arch``)."""
    found: list[str] = []
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == target for t in node.targets):
                value = _string(node.value)
                if value:
                    found.append(value)
    return sorted(set(found))


class Source:
    """The files of one ai-toolkit commit: a checkout folder, or a git directory and commit."""

    def __init__(self, checkout: Path | None = None, git_dir: Path | None = None, commit: str = "") -> None:
        self.checkout, self.git_dir, self.commit = Path(checkout or "."), git_dir, commit

    def _git(self, *args: str) -> str:
        with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
            code = subprocess.run(["git", f"--git-dir={self.git_dir}", *args], stdout=out,
                                  stderr=subprocess.DEVNULL, check=False).returncode
            out.seek(0)
            text = out.read()
        if code != 0:
            raise RegenerateError(f"git {' '.join(args[:2])} failed in {self.git_dir}")
        return text

    def files(self, folder: str) -> list[str]:
        if self.git_dir is not None:
            listing = self._git("ls-tree", "-r", "--name-only", self.commit, folder)
            return [line for line in listing.splitlines() if line.endswith(".py")]
        root = self.checkout / folder
        return sorted(p.relative_to(self.checkout).as_posix() for p in root.rglob("*.py")) if root.is_dir() else []

    def tree(self, path: str) -> ast.Module:
        if self.git_dir is not None:
            text = self._git("show", f"{self.commit}:{path}")
        else:
            try:
                text = (self.checkout / path).read_text(encoding="utf-8")
            except OSError as error:
                raise RegenerateError(f"{path} is not in {self.checkout}: is it a checkout of {REPO}?") from error
        return ast.parse(text, filename=path)


def read_inventory(source: Source, commit: str) -> dict:
    config = source.tree(CONFIG_MODULES)
    sections = {"job": ["config", "job", "meta"],
                "config": sorted(get_conf_keys([source.tree(f) for f in JOB_FILES]) | {"process"}),
                "process": sorted(get_conf_keys([source.tree(f) for f in PROCESS_FILES]) | {"type"})}
    for section, name in SECTIONS.items():
        sections[section] = sorted(class_keys(config, name))
    model_files = [source.tree(f) for folder in MODEL_KWARGS_DIRS for f in source.files(folder)]
    sections["process.model.model_kwargs"] = sorted(
        set().union(*(_keys_read(t, _model_kwargs, ("get", "pop")) for t in model_files)))
    extensions = [source.tree(f) for f in source.files("extensions_built_in") if f.endswith("__init__.py")]
    return {
        "repo": REPO, "commit": commit,
        "sections": sections,
        "open_sections": list(OPEN_SECTIONS),
        "process_types": literal_assignments(extensions, "uid"),
        "archs": literal_assignments(model_files, "arch"),
        "legacy_archs": literal_type(config, "ModelArch"),
    }


def render(inventory: dict) -> str:
    return json.dumps(inventory, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", type=Path, default=PROJECT_ROOT / VENDOR, help="ai-toolkit checkout")
    parser.add_argument("--git-dir", type=Path, help="read the pinned commit from this git directory instead")
    parser.add_argument("--output", type=Path, default=INVENTORY_PATH)
    args = parser.parse_args(argv)
    try:
        commit = gitlink_commit(PROJECT_ROOT, VENDOR)
        if args.git_dir is not None:
            source = Source(git_dir=args.git_dir, commit=commit)
        else:
            head = checkout_head(args.checkout)
            if head is not None and head != commit:
                raise RegenerateError(f"{args.checkout} is at {head}, not the pinned {commit}.")
            source = Source(checkout=args.checkout)
        inventory = read_inventory(source, commit)
    except RegenerateError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    args.output.write_text(render(inventory), encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
