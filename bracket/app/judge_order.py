"""Compare's order by a judge: the shown runs best first by one judge's score.

Any judge the standings know can order the grid — the loss, the human judge, the VLM, the
text judges (their measured parts, per stage) and the image judges (their raw scores at a
step, ``bracket.session.scoring.image_judges``; Compare's "Sort columns by": each run's last scored
step, where the grid opens). Runs the judge has not scored go last, in the order they were picked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bracket.session.scoring.image_judges import IMAGE_JUDGES
from bracket.standings.parts import JUDGE_ORDER
from bracket.standings.trust import run_goodness

if TYPE_CHECKING:  # pragma: no cover
    from bracket.standings import Standings

#: every judge the grid can be ordered by, in the order offered
ORDERABLE = (*JUDGE_ORDER, *IMAGE_JUDGES)


def judge_values(table: "Standings | None", runs: Sequence[Mapping[str, Any]], step: int | None = None
                 ) -> dict[str, dict[int, float]]:
    """Judge -> run id -> goodness (higher is better) of ``runs`` (stored records), the image
    judges at ``step`` (None: each run's last scored step)."""
    if table is None:
        return {}
    values, _stage = run_goodness(table, {r["id"]: r for r in runs}, judges=ORDERABLE, step=step)
    return {judge: values[judge] for judge in ORDERABLE if values.get(judge)}


def ordered(run_ids: Sequence[int], values: Mapping[int, float]) -> list[int]:
    """``run_ids`` best first by ``values``; runs without a value last, in the order given."""
    scored = sorted((i for i in run_ids if i in values), key=lambda i: -values[i])
    return scored + [i for i in run_ids if i not in values]
