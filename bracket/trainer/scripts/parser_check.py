"""Hand a generated command to the trainer's *own* argparse parser, without training.

flags.json catches names and choices at test time; this check catches what only the real
parser at the installed version knows (a flag renamed upstream, a new choice set). It runs
in the trainer's python (which has torch, accelerate and the trainer's packages, but not
Bracket), so this file is also a stand-alone script that needs only the standard library::

    <trainer python> parser_check.py --script <sd-scripts>/sdxl_train_network.py -- <argv...>

It imports the training script as a module (``__name__`` is not ``"__main__"``, so nothing
trains), builds the parser — ``setup_parser()`` for sd-scripts; for scripts without one
(musubi-tuner), ``main()`` is called with ``ArgumentParser.parse_args`` patched to stop
right after parsing — and parses the argv. It prints one line
``BRACKET_PARSER_CHECK {json}`` with ``ok`` and ``problems`` (unknown flags, bad choices,
abbreviated flags, which argparse would accept silently) and exits 0 when the command
parses, 1 when it does not, 3 when the script cannot be imported (then ``missing_module``
names the package the trainer venv lacks, when that is the reason).

``bracket.trainer.parser_check`` (the Bracket side) builds that command as a LaunchSpec and
reads the report; this file imports nothing from Bracket.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any, NoReturn

MARKER = "BRACKET_PARSER_CHECK"
HERE = Path(__file__).resolve().parent


class _ParseProblem(Exception):
    """argparse reported an error (it would otherwise print usage and exit)."""


class _Parsed(Exception):
    """Raised by the patched parse_args once the real parser has parsed the argv."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__("parsed")
        self.parser = parser


def _module_name(script: Path) -> tuple[str, Path]:
    """Module name of ``script`` and the folder to put on sys.path (walks up packages)."""
    parts = [script.stem]
    folder = script.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts), folder


def _exact_flag_problems(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    # argparse has no public list of a parser's actions
    known = {option for action in parser._actions for option in action.option_strings}  # noqa: SLF001
    problems = []
    for word in argv:
        if word.startswith("--"):
            flag = word.split("=", 1)[0]
            if flag not in known:
                problems.append(f"{flag} is not an exact flag name of this parser")
    return problems


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    def fail(message: str) -> NoReturn:
        raise _ParseProblem(message)

    # argparse offers no hook for its errors but replacing this method (it exits otherwise)
    parser.error = fail  # type: ignore[method-assign]
    try:
        parser.parse_args(argv)
    except _ParseProblem as problem:
        return [str(problem)] + _exact_flag_problems(parser, argv)
    return _exact_flag_problems(parser, argv)


def _takes_no_arguments(function: Any) -> bool:
    import inspect

    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters)


def _build_parser(module: Any) -> argparse.ArgumentParser:
    setup = getattr(module, "setup_parser", None)
    # musubi-tuner's ideogram4 cache scripts have setup_parser(parser), a step of main()
    if callable(setup) and _takes_no_arguments(setup):
        return setup()
    main = getattr(module, "main", None)
    if not callable(main):
        raise RuntimeError("the script has neither setup_parser() nor main()")
    original = argparse.ArgumentParser.parse_args

    def stop(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _Parsed(self)

    # the script builds its parser inside main(): replacing the method is the one way to stop it there
    argparse.ArgumentParser.parse_args = stop  # type: ignore[method-assign]
    try:
        main()
    except _Parsed as parsed:
        return parsed.parser
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]  # put back, as above
    raise RuntimeError("main() returned without building a parser")


class _CpuShim:
    """Once the script imports torch: on a machine without a GPU, ``torch.cuda.current_device()``
    answers 0. Some modules ask at import time (musubi-tuner's Wan T5 default argument); nothing
    here runs on a device. Installed as an import hook so that scripts without torch stay fast."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "torch":
            return None
        sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        original = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            original(module)
            if not module.cuda.is_available():
                module.cuda.current_device = lambda: 0

        # the loader's own method, wrapped for this one module (a loader has no hook for after-exec)
        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _report(ok: bool, problems: list[str], code: int, **extra: Any) -> int:
    print(f"{MARKER} {json.dumps({'ok': ok, 'problems': problems, **extra})}", flush=True)
    return code


def main(arguments: list[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if arguments is None else arguments)
    if "--" in arguments:
        split = arguments.index("--")
        own, argv = arguments[:split], arguments[split + 1:]
    else:
        own, argv = arguments, []
    options = argparse.ArgumentParser(description="Parse a trainer command with the trainer's own parser.")
    options.add_argument("--script", required=True)
    script = Path(options.parse_args(own).script).resolve()
    if not script.is_file():
        return _report(False, [f"script {script} does not exist"], 3)
    name, root = _module_name(script)
    for folder in (str(root), str(script.parent)):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    saved_argv = sys.argv
    sys.argv = [str(script), *argv]
    try:
        if "torch" not in sys.modules:
            sys.meta_path.insert(0, _CpuShim())
        module = importlib.import_module(name)
        parser = _build_parser(module)
    except BaseException as error:  # noqa: BLE001 - any import failure is the report
        # a package missing from the trainer venv is named, so that doctor can say what to install
        missing = getattr(error, "name", None) if isinstance(error, ModuleNotFoundError) else None
        top = (missing or "").split(".")[0]
        if top and any((folder / top).exists() or (folder / f"{top}.py").exists() for folder in (root, script.parent)):
            missing = None  # part of the checkout: a wrong trainer folder, not a package to install
        return _report(False, [f"cannot import {script.name}: {type(error).__name__}: {error}"], 3,
                       missing_module=missing)
    finally:
        sys.argv = saved_argv
    problems = _parse(parser, argv)
    return _report(not problems, problems, 0 if not problems else 1)


if __name__ == "__main__":
    # run by path, Python put this folder first on sys.path; its modules (base.py, ...)
    # must not shadow the trainer's own imports
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    sys.exit(main())
