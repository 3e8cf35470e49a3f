"""The report's sections on the judges' answer: fidelity against flexibility, and trust.

From the standings (``Standings.front``, ``Standings.trust``; ``bracket.standings.front`` and
``bracket.standings.trust``), the same the app's Results tab and ``status --json`` show:

* **Fidelity against flexibility** — every config of the winner's stage at its best step, the
  front no other config beats on both, the winner and the answer (the person's pick, when there
  is one) as a chart and a table, with the sentence that says why;
* **How far each judge agrees with you** — per automatic judge, the share of the person's blind
  choices and of the pairs of their rated runs it agrees with, n and the 95 % interval, and
  which judges are no better than chance (``python -m bracket weights PATH judge=0`` or one
  click on Results sets such a weight to 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bracket.report.charts import front_chart
from bracket.report.render import Block, Picture
from bracket.standings.trust import NO_AGREEMENT

if TYPE_CHECKING:  # pragma: no cover
    from bracket.standings import Standings

TRUST_HEADERS = ["judge", "weight", "blind choices it agrees with", "pairs of ratings it orders alike", "verdict"]
FRONT_HEADERS = ["config", "step", "likeness", "prompt-following", "place", "on the front", "beaten on both by"]


def front_points(table: "Standings") -> list[dict]:
    """The chart's points (``charts.front_chart``) of ``table``'s front."""
    front = table.front
    if front is None:
        return []
    return [{"name": p.name, "x": p.fidelity, "y": p.flexibility, "on_front": p.on_front,
             "answer": p.config_id == front.answer_id, "winner": p.config_id == front.best_id} for p in front.points]


def trust_rows(table: "Standings") -> list[list[str]]:
    """One row per automatic judge (:data:`TRUST_HEADERS`)."""
    return [[t.judge, "-" if t.weight is None else f"{t.weight:g}", t.choices.text(), t.ratings.text(),
             t.verdict + (" (set its weight to 0: python -m bracket weights PATH "
                          f"{t.judge}=0)" if t.chance and t.weight else "")] for t in table.trust]


def judge_sections(table: "Standings") -> tuple[list[tuple[str, list[Block]]], list[Picture]]:
    """(the two sections, their pictures) of ``table``."""
    front = table.front
    pictures: list[Picture] = []
    if front is None:
        front_blocks: list[Block] = [("p", "No config has likeness and prompt-following scores (the image judges).")]
    else:
        front_blocks = [("quote", front.why), *([("p", f"Note: {front.note}.")] if front.note else [])]
        png = front_chart(front_points(table))
        if png is not None:
            pictures.append(Picture("report-front", "Fidelity against flexibility (each config at its best step)",
                                    png))
            front_blocks.append(("img", pictures[-1]))
        scores = [p.score for p in front.points if p.score is not None]
        front_blocks.append(("table", FRONT_HEADERS, [
            [p.name, str(p.step or "-"), f"{p.fidelity:.3g}", f"{p.flexibility:.3g}",
             "-" if p.score is None else f"{1 + sum(1 for o in scores if o < p.score)} of {len(scores)}",
             "yes" if p.on_front else "no", ", ".join(p.beaten_by) or "-"] for p in front.points]))
        front_blocks.append(("p", "Pick another point on the front as the answer on the Results tab or with "
                                  "python -m bracket pick PATH CONFIG; status, export and promote follow it."))
    if not any(t.known for t in table.trust):
        trust_blocks: list[Block] = [("p", no_agreement_text(table))]
    else:
        trust_blocks = [("table", TRUST_HEADERS, trust_rows(table)),
                        ("p", "Blind choices: Wilson 95 % interval; ratings: the wider of a bootstrap over the rated "
                              "runs and Wilson's. No better than chance: no interval lies above 50 %.")]
    return [("Fidelity against flexibility", front_blocks), ("How far each judge agrees with you", trust_blocks)], \
        pictures


def no_agreement_text(table: "Standings") -> str:
    """Why no judge's agreement with the person is known, true of what they did: nothing rated or
    compared yet, or too little to order (one rating said "nobody rated" before)."""
    runs = [run for board in table.boards.values() for row in board.rows for run in row.runs]
    rated, compared = sum(1 for run in runs if run.ratings), any(run.comparisons for run in runs)
    if not rated and not compared:
        return f"No agreement is known: {NO_AGREEMENT.split(': ')[0]}."
    done = f"{rated} run{'' if rated == 1 else 's'} rated" + (", blind choices made" if compared else "")
    return (f"No agreement is known yet ({done}): a judge's agreement needs two runs you rated differently, "
            "or a blind choice between two runs it measured.")
