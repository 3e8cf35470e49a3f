"""Held-out prompts and their reference answers, cut from an LLM session's eval split.

Every LLM run of a session trains on the same ``train.jsonl`` and holds out the same
``eval.jsonl`` (``bracket.trainer.llm.dataset.split_dataset``). After training, the post-run
generation step answers the first :data:`MAX_HELDOUT` of those held-out rows with fixed
seeds (:data:`HELDOUT_SEED` + row number), the same for every run, so two runs' answers
differ only because their adapters do. The task judge (:mod:`bracket.judge.task`) and the
LLM-as-judge (:mod:`bracket.judge.llm_judge`) then read the answers beside the references.

A row becomes a prompt and a reference by its dataset format:

* ``alpaca``: ``instruction`` (and ``input``) -> prompt; ``output`` -> reference;
* ``chat`` (``messages`` of ``{role, content}``) and ``sharegpt`` (``conversations`` of
  ``{from, value}``): the conversation before the **last assistant turn** is the prompt (sent
  through the model's chat template), that turn is the reference;
* ``completion`` (plain ``text``): no reference exists, so no held-out answers are made and
  the task judge has no data (use eval loss).

The files: :data:`PROMPTS_FILE` in the run folder (the generation step's ``--heldout`` input)
and :data:`ANSWERS_FILE` beside ``generations.json`` (its ``--heldout-output``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

#: at most this many held-out rows are answered per run (generation costs time on every run)
MAX_HELDOUT = 16
#: seed of held-out row i is HELDOUT_SEED + i, the same in every run
HELDOUT_SEED = 7000
PROMPTS_FILE = "heldout_prompts.json"
ANSWERS_FILE = "heldout_answers.json"
_SHAREGPT_ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant",
                   "system": "system", "model": "assistant"}


def _chat_entry(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=None)
    if not last:  # no assistant turn, or nothing before it to answer
        return None
    context = [{"role": str(m.get("role")), "content": str(m.get("content", ""))} for m in messages[:last]]
    users = [m["content"] for m in context if m["role"] == "user"]
    return {"prompt": users[-1] if users else context[-1]["content"], "messages": context,
            "reference": str(messages[last].get("content", ""))}


def row_entry(row: Mapping[str, Any], data_format: str) -> dict[str, Any] | None:
    """``{prompt, reference[, input | messages]}`` of one dataset row, or None when it has none."""
    if data_format == "alpaca":
        if not str(row.get("output", "")).strip():
            return None
        entry = {"prompt": str(row.get("instruction", "")), "reference": str(row["output"])}
        if str(row.get("input") or "").strip():
            entry["input"] = str(row["input"])
        return entry
    if data_format == "chat":
        return _chat_entry(list(row.get("messages") or []))
    if data_format == "sharegpt":
        turns = [{"role": _SHAREGPT_ROLES.get(str(t.get("from")), str(t.get("from"))), "content": t.get("value", "")}
                 for t in row.get("conversations") or []]
        return _chat_entry(turns)
    return None


def heldout_entries(rows: Sequence[Mapping[str, Any]], data_format: str, *, limit: int = MAX_HELDOUT
                    ) -> list[dict[str, Any]]:
    """The generation step's held-out input: ``[{prompt_index, prompt, reference, seed, ...}]``
    for the first ``limit`` rows that have a reference (row order of the eval split)."""
    entries: list[dict[str, Any]] = []
    for row in rows:
        if len(entries) >= limit:
            break
        entry = row_entry(row, data_format)
        if entry is not None and entry["reference"].strip():
            index = len(entries)
            entries.append({"prompt_index": index, "seed": HELDOUT_SEED + index, **entry})
    return entries


def write_heldout_prompts(eval_rows_file: Path, data_format: str, run_dir: Path, *, limit: int = MAX_HELDOUT
                          ) -> Path | None:
    """Write :data:`PROMPTS_FILE` into ``run_dir`` from the eval split; None when no row has a
    reference (completion format, empty split) or the split file is missing."""
    path = Path(eval_rows_file)
    if not path.is_file():
        return None
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    entries = heldout_entries(rows, data_format, limit=limit)
    if not entries:
        return None
    target = Path(run_dir) / PROMPTS_FILE
    target.write_text(json.dumps(entries, ensure_ascii=False, indent=1), encoding="utf-8")
    return target


def read_answers(folder: Path, *, leave_out: Path | None = None) -> list[dict[str, Any]]:
    """The held-out answers written anywhere under ``folder`` but in ``leave_out`` (``[]`` when
    there are none or the file is unreadable): ``[{prompt_index, prompt, reference, seed, completion}, ...]``."""
    for path in sorted(Path(folder).glob(f"**/{ANSWERS_FILE}")):
        if leave_out is not None and path.is_relative_to(leave_out):
            continue
        try:
            answers = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [a for a in answers if isinstance(a, dict)] if isinstance(answers, list) else []
    return []
