"""Build the carry folder for the device call: the sd-scripts source and wheels, with a manifest.

``python -m bench.gpu.carry --vendor vendor/sd-scripts --wheels DIR --out .gpucarry`` copies the
sd-scripts source (no ``.git``, no ``.venv``, no caches) and every ``*.whl`` of DIR into OUT,
writes ``OUT/manifest.json`` (each file's path, size and sha256, sorted, so the same inputs give
the same manifest) and fails when OUT plus the repository's own files pass the 64 MiB limit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

LIMIT_BYTES = 64 * 1024 * 1024
SKIPPED = {".git", ".venv", "__pycache__", ".pytest_cache"}


class CarryError(ValueError):
    """The carry cannot be built as asked (a missing input, or too large)."""


def _files(root: Path) -> list[Path]:
    found = []
    for path in sorted(root.rglob("*")):
        if any(part in SKIPPED for part in path.relative_to(root).parts):
            continue
        if path.is_file() and not path.is_symlink():
            found.append(path)
    return found


def tree_bytes(root: Path) -> int:
    return sum(path.stat().st_size for path in _files(root))


def build_carry(vendor: Path, wheels: Path | None, out: Path, *, repo_bytes: int = 0,
                limit: int = LIMIT_BYTES) -> dict:
    """Fill ``out`` and return its manifest; raise :class:`CarryError` past ``limit``."""
    if not (vendor / "sdxl_train_network.py").is_file():
        raise CarryError(f"{vendor} holds no sd-scripts checkout (sdxl_train_network.py is missing); "
                         "git submodule update --init vendor/sd-scripts")
    if wheels is not None and not wheels.is_dir():
        raise CarryError(f"wheels folder {wheels} does not exist")
    if out.exists():
        shutil.rmtree(out)
    (out / "sd-scripts").mkdir(parents=True)
    entries = []
    for path in _files(vendor):
        target = out / "sd-scripts" / path.relative_to(vendor)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    (out / "wheels").mkdir()
    for wheel in sorted(wheels.glob("*.whl")) if wheels else []:
        shutil.copy2(wheel, out / "wheels" / wheel.name)
    for path in _files(out):
        data = path.read_bytes()
        entries.append({"path": path.relative_to(out).as_posix(), "bytes": len(data),
                        "sha256": hashlib.sha256(data).hexdigest()})
    total = sum(e["bytes"] for e in entries) + repo_bytes
    manifest = {"files": entries, "carry_bytes": total - repo_bytes, "repo_bytes": repo_bytes,
                "total_bytes": total, "limit_bytes": limit,
                "wheels": [e["path"].split("/", 1)[1] for e in entries if e["path"].startswith("wheels/")]}
    if total > limit:
        shutil.rmtree(out)
        raise CarryError(f"the carry ({manifest['carry_bytes'] / 2**20:.1f} MiB) and the repository "
                         f"({repo_bytes / 2**20:.1f} MiB) pass the {limit / 2**20:.0f} MiB limit of a device call")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gpu.carry", description=__doc__.splitlines()[0])
    parser.add_argument("--vendor", type=Path, default=Path("vendor/sd-scripts"))
    parser.add_argument("--wheels", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=Path(".gpucarry"))
    parser.add_argument("--repo", type=Path, default=Path("."), help="the repository whose files travel too")
    args = parser.parse_args(argv)
    repo_bytes = sum(tree_bytes(args.repo / name) for name in ("bracket", "bench", "tests", "ui", "docs")
                     if (args.repo / name).is_dir())
    try:
        manifest = build_carry(args.vendor, args.wheels, args.out, repo_bytes=repo_bytes)
    except CarryError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"carry {args.out}: {len(manifest['files'])} files, {manifest['total_bytes'] / 2**20:.1f} MiB "
          f"with the repository (limit {manifest['limit_bytes'] / 2**20:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
