"""The report's table of the image judges per step: each ranked search config's raw figures at
every sampled step (``ConfigRow.step_images``, higher is better), its best step starred; with a
preference model, its share of same-prompt wins at that step (against the other configs' samples
of that step: ``bracket.session.scoring.image_judges.preference_steps``). A judge that saw nothing
(an optional one that is off) gets no column."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bracket.judge.image_judges import IMAGE_JUDGES, SCALES
from bracket.judge.preference import NAME as PREFERENCE
from bracket.judge.preference import SCALE as PREFERENCE_SCALE
from bracket.standings.parts import IMAGE_FIGURES

#: the judges of the columns, in order
JUDGES = (*IMAGE_JUDGES, PREFERENCE)
#: the table's columns: the config and the step, then one per judge of :data:`JUDGES` under the name
#: every screen gives its figure (``standings.parts.IMAGE_FIGURES``; the preference judge's own)
IMAGE_HEADERS = ["config", "step", *(IMAGE_FIGURES[judge] for judge in IMAGE_JUDGES), PREFERENCE]
#: what each column's figure is
COLUMN_SCALES = {**SCALES, PREFERENCE: f"{PREFERENCE_SCALE}, at that step against the other configs' samples of "
                                       "the same prompt and step (it takes no part in the best step)"}


def image_rows(ranked: Sequence[Any]) -> list[list[str]]:
    """One row per ranked config (``ConfigRow``, best first) and sampled step the image judges saw."""
    return [[row.name, f"{step}{' ★' if step == row.best_step else ''}",
             *(f"{figures[judge]:.3f}" if figures.get(judge) is not None else "-" for judge in JUDGES)]
            for row in ranked for step, figures in row.step_images.items()]


def image_section(rows: list[list[str]]) -> list[tuple[str, list[Any]]]:
    """The report section (title, blocks) of ``rows``; none when the image judges saw nothing."""
    if not rows:
        return []
    keep = [i for i in range(len(IMAGE_HEADERS)) if i < 2 or any(row[i] != "-" for row in rows)]
    shown = {judge for i, judge in enumerate(JUDGES, start=2) if i in keep}
    scales = "; ".join(f"{name}: {scale}" for name, scale in COLUMN_SCALES.items() if name in shown) + "."
    return [("Image judges per step (raw figures, higher is better; ★ best step)",
             [("table", [IMAGE_HEADERS[i] for i in keep], [[row[i] for i in keep] for row in rows]),
              ("p", scales)])]
