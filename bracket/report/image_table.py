"""The report's table of the image judges per step: each ranked search config's raw figures at
every sampled step (``ConfigRow.step_images``, higher is better), its best step starred; with a
preference model, a column of its share of same-prompt wins at that step (against the other
configs' samples of that step: ``bracket.session.scoring.image_judges.preference_steps``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bracket.judge.image_judges import IMAGE_JUDGES, SCALES
from bracket.judge.preference import NAME as PREFERENCE
from bracket.judge.preference import SCALE as PREFERENCE_SCALE

#: the table's columns (the preference judge's is added where it has figures)
IMAGE_HEADERS = ["config", "step", "likeness", "prompt following", "quality"]


def _cell(figures: dict[str, float], judge: str) -> str:
    return f"{figures[judge]:.3f}" if figures.get(judge) is not None else "-"


def image_rows(ranked: Sequence[Any]) -> list[list[str]]:
    """One row per ranked config (``ConfigRow``, best first) and sampled step the image judges saw;
    a last cell for the preference judge where any config has its figures."""
    judges = (*IMAGE_JUDGES, PREFERENCE) if any(PREFERENCE in figures for row in ranked
                                                for figures in row.step_images.values()) else IMAGE_JUDGES
    return [[row.name, f"{step}{' ★' if step == row.best_step else ''}", *(_cell(figures, judge) for judge in judges)]
            for row in ranked for step, figures in row.step_images.items()]


def image_section(rows: list[list[str]]) -> list[tuple[str, list[Any]]]:
    """The report section (title, blocks) of ``rows``; none when the image judges saw nothing."""
    if not rows:
        return []
    preference = len(rows[0]) > len(IMAGE_HEADERS)
    headers = [*IMAGE_HEADERS, "preference"] if preference else IMAGE_HEADERS
    scales = "; ".join(f"{name}: {scale}" for name, scale in SCALES.items())
    if preference:
        scales += (f"; preference: {PREFERENCE_SCALE}, at that step against the other configs' samples of the "
                   "same prompt and step (it takes no part in the best step)")
    return [("Image judges per step (raw figures, higher is better; ★ best step)",
             [("table", headers, rows), ("p", scales + ".")])]
