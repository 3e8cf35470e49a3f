"""Compare beyond the runs × prompts grid: a run's steps × prompts matrix and A/B flicker.

* :func:`progression_html` stacks one steps × prompts matrix per run
  (``bracket.session.progression``; columns are the steps the run saved samples at). One
  run shows at a time; PageUp/PageDown switch to the previous/next run at the same prompt
  and step — in the lightbox, or with the focus on the stack (a click on it gives it the
  focus). ←/→ in the lightbox walk the steps, ↑/↓ the prompts (``ui.assets``).
* :func:`flicker_html` puts two runs' samples of each prompt in one place and alternates
  them (A, B, A, …) with a CSS animation, so a small difference jumps out; a click on a cell
  holds the current picture, another click lets it flicker again.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from bracket.session.grid import GridData
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
