"""The LLM family's dataset: a JSONL (or JSON list) file of rows, cut once into a fixed
train / eval split.

Every run of a session trains on the same ``train.jsonl`` and evaluates on the same
``eval.jsonl``, cut from the dataset file with a fixed seed and size (:func:`split_dataset`),
so the trial seed varies only the training order and LoRA initialisation, never which rows
are held out. Each row must carry the fields its format needs (:func:`check_rows`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bracket.errors import DatasetError

DATASET_FORMATS = ("alpaca", "chat", "sharegpt", "completion")
#: the fields each dataset format needs in every row
_FORMAT_FIELDS = {
    "alpaca": ("instruction", "output"),
    "chat": ("messages",),
    "sharegpt": ("conversations",),
    "completion": ("text",),
}


@dataclass(frozen=True)
class DatasetSplit:
    """The per-run copies of the fixed split."""

    train: Path
    eval: Path
    train_rows: int
    eval_rows: int


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a ``.jsonl`` file (one object a line) or a ``.json`` list."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"Dataset file {path} does not exist; give a .jsonl or .json file.")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() == ".jsonl":
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        elif path.suffix.lower() == ".json":
            rows = json.loads(text)
        else:
            raise DatasetError(f"Dataset file {path}: convert it to .jsonl (one JSON object per line).")
    except json.JSONDecodeError as error:
        raise DatasetError(f"Dataset file {path} is not valid JSON ({error}); fix the file.") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise DatasetError(f"Dataset file {path} must hold a list of JSON objects, one per example.")
    return rows


def check_rows(rows: Sequence[Mapping[str, Any]], dataset_format: str, source: Path) -> None:
    """Raise when a row lacks a field its format needs."""
    if dataset_format not in _FORMAT_FIELDS:
        raise DatasetError(f"Dataset format {dataset_format!r} is not one of {', '.join(DATASET_FORMATS)}.")
    needed = _FORMAT_FIELDS[dataset_format]
    for index, row in enumerate(rows):
        missing = [name for name in needed if name not in row]
        if missing:
            raise DatasetError(
                f"Dataset {source}, row {index + 1}: no {', '.join(missing)} field, which the "
                f"{dataset_format} format needs; fix the row or choose another dataset format."
            )


def eval_row_count(total: int, eval_size: float) -> int:
    """Rows to hold out: a fraction or a count, at least 1 and at most a fifth of ``total``."""
    wanted = eval_size * total if eval_size < 1 else eval_size
    return max(1, min(int(round(wanted)), total // 5))


def split_dataset(
    source: Path, out_dir: Path, *, dataset_format: str, eval_size: float, split_seed: int
) -> DatasetSplit:
    """Write ``train.jsonl`` and ``eval.jsonl`` under ``out_dir``; the same rows every call."""
    rows = read_rows(source)
    check_rows(rows, dataset_format, source)
    if len(rows) < 2:
        raise DatasetError(f"Dataset {source} has {len(rows)} row(s); a search needs at least 2 (better hundreds).")
    order = list(range(len(rows)))
    random.Random(split_seed).shuffle(order)
    held_out = set(order[: eval_row_count(len(rows), eval_size)])
    out_dir.mkdir(parents=True, exist_ok=True)
    train_path, eval_path = out_dir / "train.jsonl", out_dir / "eval.jsonl"
    train = [r for i, r in enumerate(rows) if i not in held_out]
    evaluation = [r for i, r in enumerate(rows) if i in held_out]
    for path, part in ((train_path, train), (eval_path, evaluation)):
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in part), encoding="utf-8")
    return DatasetSplit(train_path, eval_path, len(train), len(evaluation))
