"""A run's progression: its samples as a steps × prompts matrix.

The Compare grid puts runs side by side at one step; this view follows **one** run through
its saved steps, like a sweep viewer's progression strip: rows are prompts, columns are
the steps at which the run saved samples (oldest left). It is a :class:`GridData` (columns
named ``step N``), so the same HTML, thumbnails and lightbox serve it. The Compare tab
stacks one matrix per shown run, and PageUp/PageDown switch between them at the same
prompt and step (``ui.assets``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bracket.app.grid import GridColumn, GridData, available_steps, grid_cell
from bracket.app.thumbs import ThumbnailCache
from bracket.trainer.prompts import SamplePrompt


def build_progression(run: Mapping[str, Any], prompts: Sequence[SamplePrompt], *, thumbs: ThumbnailCache,
                      runs_dir: Path, sample_kind: str = "image") -> GridData:
    """Rows = prompts, columns = every step ``run`` saved samples at (text runs, which keep
    only their final generations, get no steps: an empty matrix)."""
    steps = [] if sample_kind == "text" else available_steps([run])
    name, seed = str(run.get("config_name", "")), run.get("seed")
    columns = [GridColumn(int(run["id"]), f"step {step}", name, seed, str(run.get("status", "")),
                          dict(run.get("params") or {})) for step in steps]
    texts = [p.text for p in prompts]
    indices = {s["prompt_index"] for s in run.get("samples") or [] if s.get("prompt_index") is not None}
    count = max([len(texts)] + [i + 1 for i in indices])
    texts += [f"prompt {i}" for i in range(len(texts), count)]
    rows = [[grid_cell(run, i, step, thumbs, runs_dir) for step in steps] for i in range(count)]
    return GridData(columns, texts, steps, None, rows, sample_kind, [None] * count)
