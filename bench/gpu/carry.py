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
import subprocess
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


PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64")
WHEELS_LIST = Path(__file__).with_name("wheels.txt")


def wanted_wheels(path: Path = WHEELS_LIST) -> list[str]:
    """The ``name==version`` lines of the wheels list (comments and blanks skipped)."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line]


def download_command(wheels: Path, names: list[str], python: str = sys.executable) -> list[str]:
    """``pip download`` of ``names`` as cp312 x86-64 wheels for the device image (needs the network)."""
    platforms = [word for platform in PLATFORMS for word in ("--platform", platform)]
    return [python, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", "3.12",
            "--implementation", "cp", *platforms, "-d", str(wheels), *names]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gpu.carry", description=__doc__.splitlines()[0])
    parser.add_argument("--vendor", type=Path, default=Path("vendor/sd-scripts"))
    parser.add_argument("--wheels", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=Path(".gpucarry"))
    parser.add_argument("--repo", type=Path, default=Path("."), help="the repository whose files travel too")
    parser.add_argument("--download", action="store_true",
                        help="first fetch the wheels of wheels.txt into --wheels (needs the network)")
    args = parser.parse_args(argv)
    if args.download:
        if args.wheels is None:
            print("error: --download needs --wheels DIR to download into", file=sys.stderr)
            return 2
        args.wheels.mkdir(parents=True, exist_ok=True)
        if subprocess.run(download_command(args.wheels, wanted_wheels()), check=False).returncode:
            print("error: pip download failed; see its output above", file=sys.stderr)
            return 2
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
