"""Compare's "samples at a rung": the runs of every config of a halving search that reached a
rung, to be shown side by side at the rung's step, the best there first.

* :func:`rung_picks` — one :class:`RungPick` per rung below full length that a run reached, from
  the snapshot the tab holds (cheap: Compare's run list asks every poll);
* :func:`ranked_at_rung` — one rung's runs in the order of the configs' scores at that rung
  (the search's read model, ``Session.view().scores``: the scores the scheduler promotes by; configs
  without one last), computed once per store change.

The rungs and their steps are the loop's own (``bracket.app.rungs.step_rungs``), so a rung's
step is the step the runs paused at and saved samples; a run whose trainer counts its own steps
(an LLM run at an effective batch other than 8) reached it at the same share of its own length
(``StepRungs.step_in``), while the pick names the session's step.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from bracket.app.compare import SCORABLE
from bracket.app.rungs import rung_steps, step_rungs
from bracket.errors import BracketError

if TYPE_CHECKING:  # pragma: no cover
    from bracket.app.holder import SessionHolder
    from bracket.session.loop.rung_scores import StepRungs


@dataclass(frozen=True)
class RungPick:
    """One rung and the finished or paused search runs that reached its step."""

    index: int
    share: str
    step: int
    run_ids: tuple[int, ...]
    configs: int

    @property
    def label(self) -> str:
        """``1/9 at step 10: 7 configs``."""
        return f"{self.share} at step {self.step}: {self.configs} config{'' if self.configs == 1 else 's'}"


def _reached(run: dict[str, Any], rungs: "StepRungs", index: int) -> bool:
    """Whether search run ``run`` trained to rung ``index``, in its own steps (``StepRungs.step_in``)."""
    return (run.get("stage") or "search") == "search" and run.get("kind") != "setup" \
        and run.get("status") in SCORABLE \
        and max(run.get("last_step") or 0, run.get("pause_step") or 0) >= rungs.step_in(index, run.get("max_steps"))


def rung_picks(manager: "SessionHolder") -> list[RungPick]:
    """The rungs below full length of the open session that some run reached; [] without halving."""
    session, snap = manager.session, manager.snapshot()
    rungs = step_rungs(manager)
    if session is None or snap is None or rungs is None:
        return []
    picks = []
    for index, (step, share) in enumerate(rung_steps(rungs, rungs.steps[-1])):
        runs = [r for r in snap.runs if _reached(r, rungs, index)]
        if runs:
            picks.append(RungPick(index, share, step, tuple(r["id"] for r in runs),
                                  len({r.get("config_id") for r in runs})))
    return picks


def _scores(manager: "SessionHolder") -> dict[tuple[int, int], float]:
    session = manager.require()  # the search's read model; read again only when more than steps changed
    return manager.memo("rung-scores", lambda: dict(session.view().scores), structural=True)


def ranked_at_rung(manager: "SessionHolder", index: int) -> RungPick:
    """The rung ``index`` of :func:`rung_picks`, its runs the best config at that rung first (then
    by seed); a rung no run reached is refused."""
    pick = next((p for p in rung_picks(manager) if p.index == int(index)), None)
    if pick is None:
        raise BracketError("No run has reached that rung yet; pick a rung from the list.")
    scores = _scores(manager)
    runs = {r["id"]: r for r in manager.require_snapshot().runs}

    def order(run_id: int) -> tuple[float, int, int, int]:
        run = runs[run_id]
        score = scores.get((run.get("config_id"), pick.index))
        return (float("inf") if score is None else score, run.get("config_id") or 0, run.get("seed_index") or 0,
                run_id)

    return replace(pick, run_ids=tuple(sorted(pick.run_ids, key=order)))
