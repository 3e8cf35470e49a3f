"""Fake trainer scripts for the parser-check and doctor tests (real files, real argparse)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.contract.inventory import load_inventory

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
    return table_from_spec(load_inventory()[0]["kohya-ss/sd-scripts"]["scripts"][script], drop=drop)


def table_from_spec(spec: dict, *, drop: tuple[str, ...] = ()) -> dict[str, object]:
    """One inventory entry's flags as {flag: store_true | * | [choices] | value}."""
    table: dict[str, object] = {}
    for flag in spec["flags"]:
        if flag in ("-h", "--help") or flag in drop:
            continue
        if flag in spec.get("no_value", []):
            table[flag] = "store_true"
        elif flag in spec.get("nargs", {}):
            table[flag] = "*"
        elif flag in spec.get("choices", {}):
            table[flag] = [str(c) for c in spec["choices"][flag]]
        else:
            table[flag] = "value"
    return table


def write_setup_parser_script(path: Path, table: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("import json\n" + _SETUP_PARSER.format(flags=json.dumps(table)), encoding="utf-8")
    return path
