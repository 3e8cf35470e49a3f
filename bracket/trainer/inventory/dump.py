"""Trainer side of the inventory: dump one script's real argparse parser, or a dataset schema.

Runs in the *trainer's* python (torch, accelerate and the trainer's packages, not Bracket),
so it needs only the standard library. ``regenerate.py`` runs it once per trainer, for all
its scripts in one process (torch and friends are imported once, not per script)::

    <trainer python> dump.py --root <checkout> --script sdxl_train.py --script tools/cache_latents.py \
        --dataset-schema library.config_util --out inventory.json

**A script** is executed as ``__main__`` (``runpy``), the way ``accelerate launch`` runs it,
with ``ArgumentParser.parse_args`` patched to stop at the first call: that parser is the one
the script really parses its command line with, including every argument a helper module
adds. Nothing trains. Each option is written with its flags, dest, action, nargs, type,
choices, default and whether it is required.

**A dataset schema** is read from the trainer's ``ConfigSanitizer`` (voluptuous schemas):
the keys each TOML section accepts, with a short type description.

**Stubs.** A module that cannot be imported here (a CUDA-only package, an optional
accelerator library) is replaced by a permissive stub module and the script is run again;
the stubbed names are listed in the output so that a reader knows what was not real. Only
top-level packages outside the checkout are ever stubbed. On a machine without a GPU,
``torch.cuda.current_device`` answers 0 (:func:`cpu_shims`), for modules that ask at import.
"""

from __future__ import annotations

import argparse
import functools
import importlib.abc
import json
import os
import runpy
import sys
import types
from pathlib import Path
from typing import Any

MAX_STUBS = 12


class _Parsed(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__("parsed")
        self.parser = parser


class _StubMeta(type):
    """Classes whose every attribute is another stub class: usable as bases, callables, values."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub_class(f"{cls.__name__}.{name}")

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls.__dict__.get("_is_stub_root") and args and callable(args[0]) and len(args) == 1 and not kwargs:
            return args[0]  # used as a decorator
        return super().__call__()

    def __iter__(cls):  # noqa: D105
        return iter(())

    def __bool__(cls) -> bool:
        return False


def _stub_class(name: str) -> type:
    return _StubMeta(name, (), {"_is_stub_root": True, "__getattr__": lambda self, n: _stub_class(n),
                                "__call__": lambda self, *a, **k: None})


class _StubModule(types.ModuleType):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__path__: list[str] = []
        self.__file__ = f"<bracket stub {name}>"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub_class(f"{self.__name__}.{name}")


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Meta path finder that answers for the stubbed top-level packages and their submodules."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        import importlib.machinery

        if fullname.split(".")[0] in self.names:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        return _StubModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def _missing_top_level(error: BaseException, root: Path) -> str | None:
    """The top-level package an import error is about, when it is not part of the checkout."""
    name = getattr(error, "name", None)
    if not name and isinstance(error, ImportError):
        text = str(error)
        if "from '" in text:
            name = text.split("from '", 1)[1].split("'", 1)[0]
    if not name:
        return None
    top = name.split(".")[0]
    if (root / top).exists() or (root / "src" / top).exists() or (root / f"{top}.py").exists():
        return None
    return top


def _describe_type(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, functools.partial):  # the trainers' scalar-or-pair converters
        kinds = "/".join(a.__name__ for a in value.args if isinstance(a, type)) or "value"
        name = getattr(value.func, "__name__", "")
        return f"{kinds} or [{kinds}, {kinds}]" if "scalar" in name else f"[{kinds}, {kinds}]"
    if isinstance(getattr(value, "validators", None), (list, tuple)):  # voluptuous Any(a, b)
        return " or ".join(_describe_type(v) or "?" for v in value.validators)
    if isinstance(value, list):
        return "[" + ", ".join(_describe_type(v) or "?" for v in value) + "]"
    name = getattr(value, "__name__", None)
    if name:
        return name
    return type(value).__name__ + ":" + repr(value)[:60]


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return repr(value)


def describe_parser(parser: argparse.ArgumentParser) -> list[dict[str, Any]]:
    """Every optional argument of ``parser`` (help excluded), sorted by its first flag."""
    options: list[dict[str, Any]] = []
    # argparse has no public list of a parser's actions, nor a public help-action class
    for action in parser._actions:  # noqa: SLF001
        if not action.option_strings or isinstance(action, argparse._HelpAction):  # noqa: SLF001
            continue
        nargs = action.nargs
        options.append({
            "flags": sorted(action.option_strings),
            "dest": action.dest,
            "action": type(action).__name__,
            "nargs": nargs if nargs is None or isinstance(nargs, str) else int(nargs),
            "type": _describe_type(action.type),
            "choices": _jsonable(list(action.choices)) if action.choices is not None else None,
            "default": None if action.default is argparse.SUPPRESS else _jsonable(action.default),
            "required": bool(action.required),
        })
    options.sort(key=lambda o: o["flags"][0])
    return options


def _run_until_parse(script: Path, root: Path) -> argparse.ArgumentParser:
    """Run ``script`` as ``__main__`` until it parses its command line; that parser."""
    original = argparse.ArgumentParser.parse_args

    def stop(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _Parsed(self)

    # the script builds its parser inside main(): replacing the method is the one way to stop it there
    argparse.ArgumentParser.parse_args = stop  # type: ignore[method-assign]
    saved = sys.argv
    sys.argv = [str(script)]
    module = _module_name(script, root)
    try:
        if module:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, str(script.parent))  # as `python tools/x.py` does: its siblings import
            runpy.run_path(str(script), run_name="__main__")
    except _Parsed as parsed:
        return parsed.parser
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]  # put back, as above
        sys.argv = saved
        if not module and sys.path and sys.path[0] == str(script.parent):
            del sys.path[0]
    raise RuntimeError(f"{script.name} finished without parsing a command line")


def _module_name(script: Path, root: Path) -> str | None:
    """Dotted module name when ``script`` lies inside a package (``src/musubi_tuner/x.py``)."""
    parts = [script.stem]
    folder = script.parent
    while (folder / "__init__.py").is_file() and folder != root:
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts) if len(parts) > 1 else None


def _schema_keys(schema: Any) -> dict[str, str | None]:
    return {str(k): _describe_type(v) for k, v in sorted(schema.items(), key=lambda kv: str(kv[0]))
            if str(k) != "subsets"}


def dataset_sections(module_name: str) -> dict[str, dict[str, str | None]]:
    """The keys each dataset-TOML section accepts, from the module's ConfigSanitizer."""
    import importlib

    module = importlib.import_module(module_name)
    sanitizer_class = module.ConfigSanitizer
    import inspect

    arity = len(inspect.signature(sanitizer_class.__init__).parameters) - 1
    if arity == 0:  # musubi-tuner: flat [[datasets]], image or video
        sanitizer = sanitizer_class()
        return {
            "general": _schema_keys(sanitizer.general_schema),
            "datasets (image)": _schema_keys(sanitizer.image_dataset_schema),
            "datasets (video)": _schema_keys(sanitizer.video_dataset_schema),
        }
    # sd-scripts: (dreambooth, fine-tuning, controlnet, dropout); controlnet-style subsets only
    # with --masked_loss or the ControlNet scripts, so [general] is the one without them
    plain = sanitizer_class(True, True, False, True)
    full = sanitizer_class(True, True, True, True)
    return {
        "general": _schema_keys(plain.general_schema),
        "datasets (dreambooth)": _schema_keys(full.db_dataset_schema),
        "datasets.subsets (dreambooth)": _schema_keys(full.db_subset_schema),
        "datasets (fine-tuning)": _schema_keys(full.ft_dataset_schema),
        "datasets.subsets (fine-tuning)": _schema_keys(full.ft_subset_schema),
        "datasets (controlnet, with --masked_loss)": _schema_keys(full.cn_dataset_schema),
        "datasets.subsets (controlnet, with --masked_loss)": _schema_keys(full.cn_subset_schema),
    }


class _Stubber:
    """Runs work, stubbing missing third-party packages one at a time until it runs.

    A package stubbed for one script stays stubbed for the ones read after it.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.stubs: set[str] = set()
        sys.meta_path.insert(0, _StubFinder(self.stubs))

    def run(self, work: Any) -> Any:
        for _ in range(MAX_STUBS + 1):
            try:
                return work()
            except ImportError as error:
                missing = _missing_top_level(error, self.root)
                if missing is None or missing in self.stubs:
                    raise
                # Python has already dropped the modules whose import failed; the others stay
                # (extension modules such as torch cannot be loaded twice in one process)
                self.stubs.add(missing)
        raise RuntimeError(f"gave up after stubbing {sorted(self.stubs)}")


def cpu_shims() -> list[str]:
    """Let modules that ask for the current CUDA device at import time import on a CPU machine.

    (musubi-tuner's Wan T5 has ``device=torch.cuda.current_device()`` as a default argument.)
    Nothing runs on a device here, so device 0 is a harmless answer. Returns what was shimmed.
    """
    try:
        import torch
    except ImportError:
        return []
    if torch.cuda.is_available():
        return []
    torch.cuda.current_device = lambda: 0
    return ["torch.cuda.current_device"]


def main(arguments: list[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--root", required=True, type=Path, help="the trainer checkout")
    options.add_argument("--script", action="append", default=[], help="script path relative to the checkout")
    options.add_argument("--dataset-schema", help="module holding ConfigSanitizer")
    options.add_argument("--out", required=True, type=Path)
    args = options.parse_args(arguments)
    root = args.root.resolve()
    for folder in (root / "src", root):
        if folder.is_dir():
            sys.path.insert(0, str(folder))
    os.chdir(root)  # the trainers run from their checkout
    stubber = _Stubber(root)
    result: dict[str, Any] = {"scripts": {}, "errors": {}, "shimmed": cpu_shims()}
    for name in args.script:
        try:
            parser = stubber.run(lambda name=name: _run_until_parse(root / name, root))
        except BaseException as error:  # noqa: BLE001 - reported per script; the others are still read
            result["errors"][name] = f"{type(error).__name__}: {error}"
            print(f"{name}: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
            continue
        result["scripts"][name] = describe_parser(parser)
        print(f"{name}: {len(result['scripts'][name])} options", flush=True)
    if args.dataset_schema:
        try:
            result["sections"] = stubber.run(lambda: dataset_sections(args.dataset_schema))
        except BaseException as error:  # noqa: BLE001
            result["errors"][args.dataset_schema] = f"{type(error).__name__}: {error}"
    result["stubbed"] = sorted(stubber.stubs)
    args.out.write_text(json.dumps(result, indent=1, sort_keys=True), encoding="utf-8")
    return 0 if not result["errors"] else 1


if __name__ == "__main__":
    # run by path: this folder must not shadow the trainer's own modules
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    sys.exit(main())
