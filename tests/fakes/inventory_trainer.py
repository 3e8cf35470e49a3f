#!/usr/bin/env python3
"""A stand-in for one real trainer script that parses its command as the real one would.

Copied (by :func:`tests.fakes.install_inventory_scripts`) to the place of a real script (e.g.
``<sd-scripts>/sdxl_train_network.py``) with ``<name>.flags.json`` beside it: that script's flags
from Bracket's inventory (``bracket/trainer/inventory/``). The command is parsed by argparse with
exactly those flags (no abbreviations; value choices checked): an unknown flag, a bad choice or a
missing value ends it with argparse's exit 2, as the real script. A training script then trains
like ``tests/fakes/fake_trainer.py`` (tfevents, samples at the saved steps, ``-state`` folders
with ``--save_state``); a caching tool (``tools/cache_*.py``) only records its command — except musubi-tuner's, which
keep its cache contract (``musubi_cache`` / ``needs_cache`` in the table, see
:func:`tests.fakes.install_inventory_scripts`).
"""

import argparse
import json
import os
import sys
import tomllib
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


MEDIA = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".mp4", ".avi", ".mov", ".webm")


def cache_items(dataset_config: str) -> list[tuple[Path, str]]:
    """(cache folder, item stem) of every image or video of the musubi dataset TOML."""
    document = tomllib.loads(Path(dataset_config).read_text(encoding="utf-8"))
    items = []
    for entry in document.get("datasets", []):
        folder = entry.get("image_directory") or entry.get("video_directory")
        if not folder:
            continue
        if not Path(folder).is_dir():
            sys.exit(f"{HERE.name}: dataset folder {folder} does not exist")
        items += [(Path(entry["cache_directory"]), p.stem) for p in sorted(Path(folder).iterdir())
                  if p.suffix.lower() in MEDIA]
    return items


def musubi_caches(args: argparse.Namespace) -> None:
    """A cache script writes one file per item; a training script needs both of every item."""
    kind = TABLE.get("musubi_cache")
    if kind:
        for cache, stem in cache_items(args.dataset_config):
            cache.mkdir(parents=True, exist_ok=True)
            target = cache / f"{stem}_fake_{kind}.safetensors"
            if not (getattr(args, "skip_existing", False) and target.exists()):
                target.write_text(kind, encoding="utf-8")
    elif TABLE.get("needs_cache"):
        missing = [f"{cache / stem}_fake_{kind}.safetensors" for cache, stem in cache_items(args.dataset_config)
                   for kind in ("latent", "text") if not (cache / f"{stem}_fake_{kind}.safetensors").is_file()]
        if missing:
            sys.exit(f"{HERE.name}: no cached latents / text-encoder outputs (run the cache scripts first): "
                     f"{missing[0]} and {len(missing) - 1} more")


def main() -> None:
    argv = sys.argv[1:]
    args = parser().parse_args(argv)  # exit 2 on anything the real script's parser refuses
    log = HERE.with_name("commands.jsonl")
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"script": TABLE["script"], "argv": argv}) + "\n")
    musubi_caches(args)
    if TABLE["trains"]:
        trainer = TABLE["fake_trainer"]
        os.execv(sys.executable, [sys.executable, trainer, *argv])


if __name__ == "__main__":
    main()
