"""Compare beyond the runs × prompts grid: a run's steps × prompts matrix and A/B flicker.

* :func:`progression_html` stacks one steps × prompts matrix per run
  (``bracket.app.progression``; columns are the steps the run saved samples at). One
  run shows at a time; PageUp/PageDown switch to the previous/next run at the same prompt
  and step — in the lightbox, or with the focus on the stack (a click on it gives it the
  focus). ←/→ in the lightbox walk the steps, ↑/↓ the prompts (``ui.assets``).
* :func:`with_steps` gives the runs × prompts grid every step's sample of each cell, so
  PageUp/PageDown in its lightbox move through the steps of that run and prompt (←/→ then
  keep the step). Only files under the runs folder are listed (the ones the app serves).
* :func:`flicker_html` puts two runs' samples of each prompt in one place and alternates
  them (A, B, A, …) with a CSS animation, so a small difference jumps out; a click on a cell
  holds the current picture, another click lets it flicker again.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bracket.app.grid import GridData
from ui.render import file_url, grid_html

NO_MATRIX = "<p>Pick runs and press <b>Steps × prompts</b>: each run's samples at every saved step.</p>"
NO_FLICKER = "<p>Pick two runs (A and B) and press <b>A/B flicker</b>.</p>"


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def progression_html(grids: Sequence[GridData], titles: Sequence[str]) -> str:
    """A stack of matrices (one per run, the first shown); PageUp/PageDown switch runs."""
    if not grids:
        return NO_MATRIX
    layers = []
    for index, (grid, title) in enumerate(zip(grids, titles)):
        shown = "" if index == 0 else ' style="display:none"'
        body = grid_html(grid, titles=[f"#{c.run_id} · {c.label}" for c in grid.columns]) if grid.columns else (
            "<p>This run saved no samples at any step.</p>")
        layers.append(f'<div class="bk-layer" data-layer="{index}"{shown}><div class="bk-layer-title">'
                      f"{_esc(title)} <span>({index + 1} / {len(grids)} · PageUp / PageDown: other run)</span></div>"
                      f"{body}</div>")
    return f'<div class="bk-stack" id="bk-progression" tabindex="0">{"".join(layers)}</div>'


def step_files(runs: Sequence[Mapping[str, Any]], runs_dir: Path) -> dict[str, list[tuple[int, str]]]:
    """``{"row,col": [(step, url), …]}``: each run's (column's) image or video of each prompt
    (row) at every saved step, oldest first — first frame of a step only."""
    root = Path(runs_dir).resolve()
    found: dict[str, dict[int, tuple[int, str]]] = {}
    for col, run in enumerate(runs):
        for sample in run.get("samples") or []:
            step, row = sample.get("step"), sample.get("prompt_index")
            if step is None or row is None or sample.get("kind") not in ("image", "video"):
                continue
            path = Path(sample["path"])
            try:
                inside = path.resolve().is_relative_to(root)
            except OSError:
                inside = False
            if not inside:
                continue
            frame = int(sample.get("frame") or 0)
            cell = found.setdefault(f"{row},{col}", {})
            if step not in cell or frame < cell[step][0]:
                cell[step] = (frame, file_url(str(path)))
    return {key: [(step, url) for step, (_, url) in sorted(steps.items())] for key, steps in found.items()}


def with_steps(grid_markup: str, runs: Sequence[Mapping[str, Any]], runs_dir: Path) -> str:
    """``grid_markup`` wrapped with every step's file of each cell (for PageUp/PageDown)."""
    data = json.dumps(step_files(runs, runs_dir), separators=(",", ":"))
    return f'<div class="bk-steps-wrap" data-steps="{_esc(data)}">{grid_markup}</div>'


def flicker_html(grid: GridData, labels: tuple[str, str]) -> str:
    """Two runs' samples of each prompt alternating in one place (``grid`` has two columns)."""
    if len(grid.columns) != 2:
        return NO_FLICKER
    rows = []
    for prompt, cells in zip(grid.prompts, grid.rows):
        a, b = cells
        if a.kind != "image" or b.kind != "image":
            picture = '<div class="bk-missing">no image of both runs at this step</div>'
        else:
            picture = (f'<div class="bk-flicker" tabindex="0" title="click: hold / flicker">'
                       f'<img class="bk-a" src="{_esc(file_url(a.path))}" alt="A">'
                       f'<img class="bk-b" src="{_esc(file_url(b.path))}" alt="B">'
                       f'<span class="bk-tag bk-a">A: {_esc(labels[0])}</span>'
                       f'<span class="bk-tag bk-b">B: {_esc(labels[1])}</span></div>')
        rows.append(f'<tr><th class="bk-prompt">{_esc(prompt)}</th><td>{picture}</td></tr>')
    step = "" if grid.step is None else f" at step {grid.step}"
    return (f'<div id="bk-flicker-grid"><p>A/B flicker{_esc(step)}: A = {_esc(labels[0])}, B = {_esc(labels[1])}. '
            f'Click a picture to hold it.</p><table class="bk-grid bk-flicker-table">{"".join(rows)}</table></div>')
