"""Fidelity against flexibility: every config at its best step, and the front no other beats on both.

A LoRA is judged by two things that pull apart: does it look like the subject (*fidelity*, the
likeness judge on in-distribution prompts) and does it still follow new prompts (*flexibility*,
the prompt-following judge on held-out prompts). Training longer or harder buys the first with
the second. :func:`build_front` places every ranked full-length config of the winner's stage at
its best step (the mean over its seeds of the image judges' raw scores there,
``bracket.session.scoring.image_judges``), and :func:`pareto_front` finds the configs no other config
beats on both (higher is better on both axes; one at least as good on both and better on one
beats it). The winner — the best combined score, which weighs every judge — is one point; the
person may pick another point *on the front* as the answer (``SearchSettings.pick``, a config
id): :func:`apply_pick` makes it the standings' winner, so ``status``, the report, ``export``
and ``promote`` all follow it. A pick that is no longer on the front (new runs, new scores) is
set aside with a warning, and the winner is the answer again.
"""

from __future__ import annotations

import statistics
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from bracket.session.scoring.image_judges import FIDELITY, FLEXIBILITY, references_text, scores_at

if TYPE_CHECKING:  # pragma: no cover
    from bracket.standings.board import StageBoard, Standings

K = TypeVar("K", bound=Hashable)


def pareto_front(points: Mapping[K, tuple[float, float]]) -> list[K]:
    """The keys of ``points`` (key -> (x, y), higher is better on both) that no other point beats
    on both: none is at least as good on both and better on one. In the order given."""
    return [key for key in points if not beaten_by(points, key)]


def beaten_by(points: Mapping[K, tuple[float, float]], key: K) -> list[K]:
    """The keys whose points beat ``key``'s on both axes (at least as good on both, better on one)."""
    x, y = points[key]
    return [other for other, (ox, oy) in points.items()
            if other != key and ox >= x and oy >= y and (ox > x or oy > y)]


@dataclass(frozen=True)
class FrontPoint:
    """One config at its best step on the two axes."""

    config_id: int
    name: str
    #: the step its scores are read at (its best step, else its runs' last scored step)
    step: int | None
    fidelity: float
    flexibility: float
    #: its combined score (lower is better; the leaderboard's mean)
    score: float | None
    on_front: bool
    #: the configs that beat it on both axes (empty on the front)
    beaten_by: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"config_id": self.config_id, "config": self.name, "step": self.step, FIDELITY: self.fidelity,
                FLEXIBILITY: self.flexibility, "score": self.score, "on_front": self.on_front,
                "beaten_by": list(self.beaten_by)}


@dataclass
class Front:
    """The points of one stage, which of them is the winner, the person's pick, and why."""

    stage: str
    points: list[FrontPoint]
    #: the config with the best combined score (the winner before any pick)
    best_id: int | None
    #: the person's pick in force (on the front); None: the answer is ``best_id``
    pick_id: int | None
    why: str
    #: a pick set aside (no longer on the front, or not a config of this stage)
    note: str = ""
    #: what likeness was measured against (held-out or training images), also the end of ``why``
    references: str = ""
    warnings: list[str] = field(default_factory=list)

    def point(self, config_id: int | None) -> FrontPoint | None:
        return next((p for p in self.points if p.config_id == config_id), None)

    @property
    def on_front(self) -> list[FrontPoint]:
        return [p for p in self.points if p.on_front]

    @property
    def answer_id(self) -> int | None:
        return self.pick_id if self.pick_id is not None else self.best_id

    def to_dict(self) -> dict[str, Any]:
        best, pick = self.point(self.best_id), self.point(self.pick_id)
        answer = pick or best
        return {"stage": self.stage, "x": FIDELITY, "y": FLEXIBILITY, "points": [p.to_dict() for p in self.points],
                "front": [p.name for p in self.on_front], "winner": best.name if best else None,
                "pick": pick.name if pick else None,
                "answer": answer.name if answer else None, "why": self.why, "note": self.note,
                "references": self.references}


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def config_point(row: Any, runs_by_id: Mapping[int, Mapping[str, Any]]) -> tuple[int | None, float, float] | None:
    """(step, fidelity, flexibility) of one leaderboard row at its best step, over its seeds; None
    when a judge has no score of its runs."""
    fid, flex, steps = [], [], []
    for standing in row.runs:
        run = runs_by_id.get(standing.run_id)
        if run is None or standing.score is None:
            continue
        step, scores = scores_at(run, row.best_step)
        if FIDELITY in scores and FLEXIBILITY in scores:
            fid.append(scores[FIDELITY])
            flex.append(scores[FLEXIBILITY])
            steps.append(step)
    if not fid:
        return None
    return (row.best_step if row.best_step is not None else max(s for s in steps if s is not None),
            statistics.fmean(fid), statistics.fmean(flex))


def build_front(board: "StageBoard", runs_by_id: Mapping[int, Mapping[str, Any]], pick: int | None = None
                ) -> Front | None:
    """The front of ``board``'s ranked full-length configs (None when fewer than one has both
    scores); ``pick``: the config id the person picked as the answer."""
    rows = [r for r in board.rows if r.rank is not None and r.full_length and r.mean is not None]
    placed = {r.config_id: (r, p) for r in rows if (p := config_point(r, runs_by_id)) is not None}
    if not placed:
        return None
    axes = {cid: (p[1], p[2]) for cid, (_r, p) in placed.items()}
    names = {cid: r.name for cid, (r, _p) in placed.items()}
    points = [FrontPoint(cid, r.name, p[0], p[1], p[2], r.mean, not (over := beaten_by(axes, cid)),
                         tuple(names[o] for o in over)) for cid, (r, p) in placed.items()]
    best_row = next((r for r in rows if r.rank == min(x.rank for x in rows if x.rank is not None)), None)
    front = Front(board.stage, points, best_row.config_id if best_row else None, None, "")
    if pick is not None and pick != front.best_id:
        chosen = front.point(pick)
        if chosen is not None and chosen.on_front:
            front.pick_id = pick
        else:
            what = (f"your pick {chosen.name!r} is no longer on the front of fidelity against flexibility "
                    f"({', '.join(chosen.beaten_by)} beat it on both)" if chosen is not None
                    else f"your pick (config {pick}) is not a ranked full-length config of the {board.stage} stage")
            front.note = f"{what}; the answer is the winner again"
            front.warnings.append(front.note)
    front.references = references_text(runs_by_id[s.run_id] for _r, _p in placed.values() for s in _r.runs
                                       if s.run_id in runs_by_id)
    front.why = " ".join(t for t in (why_text(front, best_row), front.references) if t)
    return front


def _axes(point: FrontPoint) -> str:
    return f"likeness {point.fidelity:.3g}, prompt-following {point.flexibility:.3g}"


def why_text(front: Front, best_row: Any) -> str:
    """Which point is the answer and why, in one or two sentences."""
    best = front.point(front.best_id)
    said = f" (it reads: {best_row.headline.text})" if best_row is not None and best_row.headline else ""
    if best is None:  # the best config has no image scores: it is named, not placed
        name = best_row.name if best_row is not None else "no config"
        return (f"The winner {name!r}{said} has no likeness and prompt-following scores, so it is "
                "not on the plot.")
    others = [p.name for p in front.on_front if p.config_id != best.config_id]
    pick = front.point(front.pick_id)
    if pick is not None:
        return (f"Your pick {pick.name!r} is the answer: on the front ({_axes(pick)}). The leaderboard's first is "
                f"{best.name!r}{said} ({_axes(best)}); pick it again to make it the answer.")
    if best.on_front:
        text = (f"The winner {best.name!r}{said} leads the leaderboard and is on the front: no config "
                f"has both more likeness and more prompt-following ({_axes(best)}).")
        if others:
            text += (f" The other points on the front ({', '.join(others)}) trade one for the other: pick one to "
                     "make it the answer.")
        return text
    return (f"The winner {best.name!r}{said} leads the leaderboard, which weighs every judge (loss, "
            f"ratings, ...), not only these two; on these two it is not on the front: {', '.join(best.beaten_by)} "
            f"beat it on both ({_axes(best)}). Pick a point on the front to make it the answer.")


def apply_pick(table: "Standings", front: Front | None) -> None:
    """Put ``front`` on ``table``; a pick in force becomes the winner (its warnings added)."""
    from bracket.standings.board import UNRATED_WINNER, winner_of

    table.front = front
    if front is None:
        return
    table.warnings.extend(front.warnings)
    board = table.board(front.stage)
    row = next((r for r in board.rows if r.config_id == front.pick_id), None) if board and front.pick_id else None
    if board is None or row is None:  # no board, no row
        return
    best = table.winner.config_name if table.winner else "-"
    table.winner = winner_of(board, row)
    if UNRATED_WINNER in table.warnings:  # said of the pick now, not of the best combined score
        table.warnings.remove(UNRATED_WINNER)
    if table.humans_weigh_in and not table.winner.rated:
        table.warnings.insert(0, UNRATED_WINNER)
    table.warnings.append(f"the answer is your pick {row.name!r} from the front of fidelity against flexibility; "
                          f"the best combined score is {best!r}")
