"""Fake trainer scripts for the parser-check and doctor tests (real files, real argparse)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.contract.inventory import load_inventory
from tests.fakes import flag_table_from_spec

_SETUP_PARSER = '''import argparse

FLAGS = json.loads({flags!r})


def setup_parser():
    parser = argparse.ArgumentParser()
    for flag, kind in FLAGS.items():
        if kind == "store_true":
            parser.add_argument(flag, action="store_true")
        elif kind == "*":
            parser.add_argument(flag, nargs="*")
        elif isinstance(kind, list):
            parser.add_argument(flag, choices=kind)
        else:
            parser.add_argument(flag)
    return parser


if __name__ == "__main__":
    raise SystemExit("a fake trainer must never train")
'''


def flag_table(script: str, *, drop: tuple[str, ...] = ()) -> dict[str, object]:
    """The real sd-scripts script's flags from the inventory as {flag: store_true | * | [choices] | value}."""
    return flag_table_from_spec(load_inventory()[0]["kohya-ss/sd-scripts"]["scripts"][script], drop=drop)


def write_setup_parser_script(path: Path, table: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("import json\n" + _SETUP_PARSER.format(flags=json.dumps(table)), encoding="utf-8")
    return path
