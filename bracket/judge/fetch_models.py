"""Fetch the image judges' default models once: ``python -m bracket.judge.fetch_models`` (what
``./install.sh --judges`` runs, on a machine with internet).

Each model is downloaded into the Hugging Face cache with ``huggingface_hub.snapshot_download``
(only its configs, tokenizer and weights), and ``.env`` gets ``BRACKET_JUDGE_TEXT_IMAGE`` and
``BRACKET_JUDGE_LIKENESS`` naming them where it does not set them already. A search never
downloads anything: the judges read the cache with ``local_files_only``
(``bracket.judge.image_models``).
"""

from __future__ import annotations

import sys
from pathlib import Path

#: setting -> (Hugging Face repo, licence): both allow commercial use
DEFAULT_MODELS = {
    "BRACKET_JUDGE_TEXT_IMAGE": ("laion/CLIP-ViT-B-32-laion2B-s34B-b79K", "MIT"),
    "BRACKET_JUDGE_LIKENESS": ("facebook/dinov2-small", "Apache-2.0"),
}
#: the files of a transformers checkpoint the judges read: configs, tokenizer (a SigLIP's spiece.model) and
#: safetensors weights (not the pickled .bin, nor the open_clip or other formats)
ALLOW = ["*.json", "*.txt", "*.model", "model.safetensors"]


def fetch(env_file: Path, download=None) -> list[str]:
    """Download each default model and add its setting to ``env_file`` when unset; the lines said."""
    if download is None:
        from huggingface_hub import snapshot_download as download
    said = []
    present = env_file.read_text(encoding="utf-8") if env_file.is_file() else ""
    names = {line.split("=", 1)[0].strip() for line in present.splitlines() if "=" in line
             and not line.lstrip().startswith("#")}
    added = []
    for setting, (repo, licence) in DEFAULT_MODELS.items():
        folder = download(repo, allow_patterns=ALLOW)
        said.append(f"{setting}: {repo} ({licence}) in {folder}")
        if setting not in names:
            added.append(f"{setting}={repo}")
    if added:
        with env_file.open("a", encoding="utf-8") as out:
            out.write(("" if not present or present.endswith("\n") else "\n") + "\n".join(added) + "\n")
        said.append(f"added to {env_file}: {', '.join(added)}")
    return said


def main(argv: list[str]) -> int:
    from bracket.settings import PROJECT_ROOT

    env_file = Path(argv[0]) if argv else PROJECT_ROOT / ".env"
    try:
        for line in fetch(env_file):
            print(line)
    except Exception as error:  # noqa: BLE001 - no network, a full disk, a repo that moved: one line
        print(f"error: fetching the image judges' models failed: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
