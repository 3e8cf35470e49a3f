"""Regenerate the trainer inventory from the real parsers of the checkouts in ``vendor/``.

::

    python -m bracket.trainer.inventory.regenerate                 # both trainers, their own venvs
    python -m bracket.trainer.inventory.regenerate --python /path/to/trainer-venv/bin/python \\
        --trainer musubi-tuner

For each trainer in :data:`bracket.trainer.inventory.TRAINERS`: the commit is the gitlink of
its ``vendor/`` folder in this repository's HEAD (a checkout that is a git work tree must be
at that commit); every script matching the trainer's globs is run by ``dump.py`` in the
trainer's python up to its argparse parse (CPU only, no weights, nothing trains); the dataset
TOML schema is read from its ``ConfigSanitizer``. The result replaces ``<trainer>.json``
beside this file only when every script was read. One process reads all the scripts of a
trainer (torch is imported once), with its output in a log file; ``stubbed`` lists the
packages that could not be imported there and were replaced by stubs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bracket import settings
from bracket.trainer.base import make_subprocess_env
from bracket.trainer.inventory import HERE, TRAINERS, TrainerSource

PROJECT_ROOT = HERE.parents[2]
DUMP = HERE / "dump.py"
TIMEOUT_S = 3600


class RegenerateError(Exception):
    """Something a person must fix before the inventory can be read (one line, what to do)."""


def gitlink_commit(root: Path, vendor: str) -> str:
    """The commit recorded for ``vendor`` in ``root``'s HEAD (a submodule gitlink)."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        code = subprocess.run(["git", "-C", str(root), "ls-tree", "HEAD", vendor], stdout=out,
                              stderr=subprocess.STDOUT, check=False).returncode
        out.seek(0)
        text = out.read()
    fields = text.split()
    if code != 0 or len(fields) < 3 or fields[1] != "commit":
        raise RegenerateError(f"{vendor} is not a submodule gitlink in {root} HEAD ({text.strip() or 'no entry'}).")
    return fields[2]


def checkout_head(checkout: Path) -> str | None:
    """HEAD of ``checkout`` when it is a git work tree of its own, else None (an extracted copy)."""
    if not (checkout / ".git").exists():
        return None
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        code = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], stdout=out,
                              stderr=subprocess.DEVNULL, check=False).returncode
        out.seek(0)
        return out.read().strip() if code == 0 else None


def find_scripts(checkout: Path, patterns: tuple[str, ...]) -> list[str]:
    found = {str(p.relative_to(checkout).as_posix()) for pattern in patterns for p in checkout.glob(pattern)
             if p.is_file()}
    return sorted(found)


def wrapper_aliases(checkout: Path, scripts: list[str]) -> dict[str, str]:
    """Root-level wrappers (``wan_train_network.py``) of package scripts (``src/musubi_tuner/...``)."""
    return {Path(s).name: s for s in scripts
            if "/" in s and s.startswith("src/") and (checkout / Path(s).name).is_file()}


def network_modules(checkout: Path) -> list[str]:
    """The ``--network_module`` values the checkout can import (``networks/*.py`` modules)."""
    folders = [checkout / "networks", checkout / "src" / "musubi_tuner" / "networks"]
    return sorted(f"networks.{p.stem}" for folder in folders if folder.is_dir() for p in folder.glob("*.py")
                  if not p.stem.startswith("_"))


def _dump(python: str, checkout: Path, arguments: list[str], folder: Path, timeout: int) -> dict[str, Any]:
    out = folder / "inventory.json"
    log = folder / "dump.log"
    with log.open("w", encoding="utf-8") as handle:
        try:
            code = subprocess.run([python, str(DUMP), "--root", str(checkout), *arguments, "--out", str(out)],
                                  cwd=checkout, stdout=handle, stderr=subprocess.STDOUT, timeout=timeout,
                                  check=False, env=make_subprocess_env({"CUDA_VISIBLE_DEVICES": ""})).returncode
        except subprocess.TimeoutExpired:
            code = 124
    if not out.is_file():
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-8:]
        raise RegenerateError(f"the dump of {checkout} ended with exit {code} and no result:\n    "
                              + "\n    ".join(tail))
    return json.loads(out.read_text(encoding="utf-8"))


def read_trainer(source: TrainerSource, python: str, *, timeout: int = TIMEOUT_S) -> dict[str, Any]:
    """The inventory of one trainer, read from its checkout in ``vendor/`` (one trainer process)."""
    checkout = PROJECT_ROOT / source.vendor
    commit = gitlink_commit(PROJECT_ROOT, source.vendor)
    scripts = find_scripts(checkout, source.scripts) if checkout.is_dir() else []
    if not scripts:
        raise RegenerateError(f"{source.vendor} holds none of {', '.join(source.scripts)}; check it out first "
                              "(git submodule update --init).")
    head = checkout_head(checkout)
    if head is not None and head != commit:
        raise RegenerateError(f"{source.vendor} is at {head[:10]} but the gitlink says {commit[:10]}; run "
                              f"`git submodule update {source.vendor}` (or `git add {source.vendor}` to move the pin).")
    if not Path(python).is_file():
        raise RegenerateError(f"Trainer python {python} does not exist; make the trainer venv "
                              "(./install.sh --trainers) or pass --python.")
    arguments = [word for script in scripts for word in ("--script", script)]
    with tempfile.TemporaryDirectory(prefix="bracket-inventory-") as tmp:
        dumped = _dump(python, checkout, [*arguments, "--dataset-schema", source.dataset_module], Path(tmp), timeout)
    if dumped["errors"]:
        raise RegenerateError(f"{len(dumped['errors'])} part(s) of {source.vendor} could not be read:\n  "
                              + "\n  ".join(f"{k}: {v}" for k, v in sorted(dumped["errors"].items())))
    return {
        "repo": source.repo,
        "vendor": source.vendor,
        "commit": commit,
        "generated_by": "python -m bracket.trainer.inventory.regenerate",
        "stubbed": dumped["stubbed"],
        "cpu_shims": dumped.get("shimmed", []),
        "script_aliases": wrapper_aliases(checkout, scripts),
        "network_modules": network_modules(checkout),
        "dataset_keys": dumped["sections"],
        "scripts": {name: dumped["scripts"][name] for name in scripts},
    }


def render(data: dict[str, Any]) -> str:
    """JSON with one option per line: small, and a pin bump's diff reads flag by flag."""
    head = {k: v for k, v in data.items() if k != "scripts"}
    lines = ["{"]
    for key, value in head.items():
        lines.append(f" {json.dumps(key)}: {json.dumps(value, indent=1, sort_keys=True)},".replace("\n", "\n "))
    lines.append(' "scripts": {')
    names = list(data["scripts"])
    for n, name in enumerate(names):
        options = data["scripts"][name]
        lines.append(f"  {json.dumps(name)}: [")
        lines += [f"   {json.dumps(o, sort_keys=True)}{',' if i < len(options) - 1 else ''}"
                  for i, o in enumerate(options)]
        lines.append("  ]" + ("," if n < len(names) - 1 else ""))
    lines.append(" }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _default_python(source: TrainerSource) -> str:
    config = settings.get_settings()
    return str(config.sd_scripts_python if "sd-scripts" in source.vendor else config.musubi_python)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bracket.trainer.inventory.regenerate",
                                     description="Regenerate the trainer inventory from the real parsers.")
    parser.add_argument("--trainer", action="append", choices=[Path(t.vendor).name for t in TRAINERS],
                        help="only this trainer (repeatable; default: all)")
    parser.add_argument("--python", help="trainer python for every trainer (default: each trainer's venv from "
                        "BRACKET_SD_SCRIPTS_PYTHON / BRACKET_MUSUBI_PYTHON)")
    parser.add_argument("--timeout", type=int, default=TIMEOUT_S, help="seconds for one trainer's dump")
    args = parser.parse_args(argv)
    chosen = [t for t in TRAINERS if not args.trainer or Path(t.vendor).name in args.trainer]
    for source in chosen:
        print(f"{source.vendor}: reading with {args.python or _default_python(source)}", flush=True)
        try:
            data = read_trainer(source, args.python or _default_python(source), timeout=args.timeout)
        except RegenerateError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        source.path.write_text(render(data), encoding="utf-8")
        print(f"{source.vendor}: {len(data['scripts'])} scripts at {data['commit'][:10]} -> {source.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
