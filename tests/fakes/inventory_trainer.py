#!/usr/bin/env python3
"""A stand-in for one real trainer script that parses its command as the real one would.

Copied (by :func:`tests.fakes.install_inventory_scripts`) to the place of a real script (e.g.
``<sd-scripts>/sdxl_train_network.py``) with ``<name>.flags.json`` beside it: that script's flags
from Bracket's inventory (``bracket/trainer/inventory/``). The command is parsed by argparse with
exactly those flags (no abbreviations; value choices checked): an unknown flag, a bad choice or a
missing value ends it with argparse's exit 2, as the real script. A training script then trains
like ``tests/fakes/fake_trainer.py`` (tfevents, samples at the saved steps, ``-state`` folders
with ``--save_state``); a caching tool (``tools/cache_*.py``) only records its command.
"""

import argparse
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
TABLE = json.loads(HERE.with_name(HERE.stem + ".flags.json").read_text(encoding="utf-8"))


def parser() -> argparse.ArgumentParser:
    found = argparse.ArgumentParser(prog=HERE.name, allow_abbrev=False)
    for flag, kind in TABLE["flags"].items():
        if kind == "store_true":
            found.add_argument(flag, action="store_true")
        elif kind == "*":
            found.add_argument(flag, nargs="*")
        elif isinstance(kind, list):
            found.add_argument(flag, choices=kind)
        else:
            found.add_argument(flag)
    return found


def main() -> None:
    argv = sys.argv[1:]
    parser().parse_args(argv)  # exit 2 on anything the real script's parser refuses
    log = HERE.with_name("commands.jsonl")
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"script": TABLE["script"], "argv": argv}) + "\n")
    if TABLE["trains"]:
        trainer = TABLE["fake_trainer"]
        os.execv(sys.executable, [sys.executable, trainer, *argv])


if __name__ == "__main__":
    main()
