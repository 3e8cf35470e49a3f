"""The report's table of the image judges per step: each ranked search config's raw figures at
every sampled step (``ConfigRow.step_images``, higher is better), its best step starred."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bracket.judge.image_judges import IMAGE_JUDGES, SCALES

#: the table's columns
IMAGE_HEADERS = ["config", "step", "likeness", "prompt following", "quality", "face identity"]


def image_rows(ranked: Sequence[Any]) -> list[list[str]]:
    """One row per ranked config (``ConfigRow``, best first) and sampled step the image judges saw."""
    return [[row.name, f"{step}{' ★' if step == row.best_step else ''}",
             *(f"{figures[judge]:.3f}" if figures.get(judge) is not None else "-" for judge in IMAGE_JUDGES)]
            for row in ranked for step, figures in row.step_images.items()]


def image_section(rows: list[list[str]]) -> list[tuple[str, list[Any]]]:
    """The report section (title, blocks) of ``rows``; none when the image judges saw nothing."""
    if not rows:
        return []
    # a judge that saw nothing (the optional face identity, off) gets no column
    keep = [i for i in range(len(IMAGE_HEADERS)) if i < 2 or any(row[i] != "-" for row in rows)]
    shown = {judge for i, judge in enumerate(IMAGE_JUDGES, start=2) if i in keep}
    scales = "; ".join(f"{name}: {scale}" for name, scale in SCALES.items() if name in shown) + "."
    return [("Image judges per step (raw figures, higher is better; ★ best step)",
             [("table", [IMAGE_HEADERS[i] for i in keep], [[row[i] for i in keep] for row in rows]),
              ("p", scales)])]
