"""What the app shows of a successive-halving search's rungs, as plain data (drawn in ``ui/``).

The session loop writes where each config stands into its config row (``rung``, ``rung_state``,
``rung_note``); :mod:`bracket.standings.rungs` words it the one way ``status`` and the report
do. This module hands the Search tab, Compare and Results what they draw, from the snapshot the
tab already holds (its ``configs`` are the stored rows) and the session's settings, once per store
change (``SessionManager.memo``):

* :func:`config_rungs` — per config id a :class:`RungCell`: the trial table's "rung" column
  (``running to 1/3``, ``paused at 1/9``, ``stopped at 1/9``, ``full``: short, the table is wide)
  and the why the "why" column opens with, as ``status`` says it (``promoted: 1 of 6 at 1/9, top 2
  go on to 1/3``, ``stopped at 1/9 (5 of 7, top 2 go on)``);
* :func:`rung_summary` — the Search tab's one line: the rungs and how many configs stand where;
* :func:`rung_steps` / :func:`compare_rung_steps` — the steps the rungs stand at (the loop's own,
  ``bracket.session.loop.rung_steps.session_rungs``: rounded up to a step where samples and the
  validation loss are saved), named on Compare's step slider;
* :func:`run_marks` — per run where it stands (``stopped at 1/9 (paused at step 10)``): Compare's
  run list and grid headers;
* :func:`board_marks` — per config its rung with the why, per run a paused run's step: the Results
  leaderboard's "rung" column and its runs.

Compare's "samples at a rung" (every config that reached a rung, side by side at its step) is
:mod:`bracket.app.rung_grid`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bracket.search.halving import share_label
from bracket.standings.rungs import plan_text, rung_note, rung_text, session_rungs, uses_rungs

if TYPE_CHECKING:  # pragma: no cover
    from bracket.app.holder import SessionHolder
    from bracket.session.loop.rung_scores import StepRungs


@dataclass(frozen=True)
class RungCell:
    """One config's place on the rungs, as the trial table shows it."""

    text: str
    note: str = ""


def cells(settings: Any, configs: list[dict[str, Any]]) -> dict[int, RungCell]:
    """:class:`RungCell` per config id of ``configs`` (config rows) that has a rung state; {} without halving."""
    if not uses_rungs(settings, configs):
        return {}
    rungs = session_rungs(settings)
    return {int(c["id"]): RungCell(rung_text(c, rungs, detail=False), why(c, rungs))
            for c in configs if c.get("rung_state")}


def why(config: dict[str, Any], rungs: Any) -> str:
    """Why ``config`` stands where it does, in ``status``'s words: a stopped config's place at its
    rung (``stopped at 1/9 (5 of 7, top 2 go on)``), else the stored note."""
    return rung_text(config, rungs) if config.get("rung_state") == "stopped" else rung_note(config)


def config_rungs(manager: "SessionHolder", snap: Any = None) -> dict[int, RungCell]:
    """The open session's :func:`cells`, from ``snap`` (the caller's snapshot; else one is taken)."""
    session = manager.session
    snap = snap if snap is not None else manager.snapshot()
    if session is None or snap is None:
        return {}
    return manager.memo("rung-cells", lambda: cells(session.settings, list(snap.configs)), structural=True,
                        fresh=False)


def summary(settings: Any, configs: list[dict[str, Any]]) -> str:
    """``Rungs 1/9 → 1/3 → full, the top 1/3 at each go on: 1 full · 1 running to 1/3 · 2 stopped at 1/9``
    (the states with no rung detail, most advanced first); "" without halving."""
    if not uses_rungs(settings, configs):
        return ""
    rungs = session_rungs(settings)
    counted = Counter(rung_text(c, rungs, detail=False) for c in configs if c.get("rung_state"))
    order = {"full": 0, "running": 1, "promoted": 2, "paused": 3, "stopped": 4}
    parts = sorted(counted.items(), key=lambda item: (order.get(item[0].split(" ")[0], 9), item[0]))
    said = " · ".join(f"{count} {text}" for text, count in parts) or "no config has a rung yet"
    return f"{plan_text(rungs)[0].upper()}{plan_text(rungs)[1:]}: {said}"


def rung_summary(manager: "SessionHolder", snap: Any = None) -> str:
    """The open session's :func:`summary` (the Search tab's status line), once per change."""
    session = manager.session
    snap = snap if snap is not None else manager.snapshot()
    if session is None or snap is None:
        return ""
    return manager.memo("rung-summary", lambda: summary(session.settings, list(snap.configs)), structural=True,
                        fresh=False)


def rung_steps(rungs: "StepRungs | None", max_steps: int | None) -> list[tuple[int, str]]:
    """(step, ``1/9``) of each rung of ``rungs`` (a session's rungs at their steps, :func:`step_rungs`)
    below full length, for runs of ``max_steps`` (the search's full length; runs of another
    length, finals, have no rungs); [] without rungs."""
    if rungs is None or not max_steps or int(max_steps) != rungs.steps[-1]:
        return []
    return [(step, share_label(share)) for step, share in zip(rungs.steps[:-1], rungs.fractions())]


def step_rungs(manager: "SessionHolder") -> "StepRungs | None":
    """The open session's rungs at the steps its runs pause at (the halving loop's own), None
    without halving; once per change."""
    from bracket.session.loop.rung_steps import session_rungs as loop_rungs

    session, snap = manager.session, manager.snapshot()
    if session is None or snap is None or not uses_rungs(session.settings, list(snap.configs)):
        return None
    return manager.memo("step-rungs", lambda: loop_rungs(session.settings, session.trainer), structural=True,
                        fresh=False)


def compare_rung_steps(manager: "SessionHolder", run_ids: list[int]) -> list[tuple[int, str]]:
    """:func:`rung_steps` of the open session for the longest of ``run_ids`` (Compare's step slider)."""
    snap = manager.snapshot()
    if snap is None:
        return []
    runs = [r for r in snap.runs if r["id"] in set(run_ids)]
    longest = max((r.get("max_steps") or 0 for r in runs), default=0)
    return rung_steps(step_rungs(manager), longest)


def _marks(settings: Any, configs: list[dict[str, Any]], runs: list[dict[str, Any]]
           ) -> tuple[dict[int, str], dict[int, str], dict[int, str]]:
    """(per run id its Compare mark, per config id its leaderboard rung, per run id a paused run's
    ``paused at step 24``): {} without halving."""
    if not uses_rungs(settings, configs):
        return {}, {}, {}
    rungs = session_rungs(settings)
    by_id = {c["id"]: c for c in configs if c.get("rung_state")}
    run_mark, board, paused = {}, {}, {}
    for placed in by_id.values():
        board[int(placed["id"])] = rung_text(placed, rungs)
    for run in runs:
        config = by_id.get(run.get("config_id"))
        if config is None or (run.get("stage") or "search") != "search" or run.get("kind") == "setup":
            continue
        text = rung_text(config, rungs, detail=False)
        if run.get("status") == "paused":
            step = run.get("pause_step") or run.get("last_step")
            paused[int(run["id"])] = f"paused at step {step}"
            text = (f"{text} (step {step})" if config.get("rung_state") == "paused"
                    else f"{text} (paused at step {step})")
        run_mark[int(run["id"])] = text
    return run_mark, board, paused


def run_marks(manager: "SessionHolder") -> dict[int, str]:
    """Per search run of the open session where its config stands (``full``, ``running to 1/3``,
    ``paused at 1/9 (step 10)``, ``stopped at 1/9 (paused at step 10)``); {} without halving."""
    return _session_marks(manager)[0]


def board_marks(manager: "SessionHolder") -> tuple[dict[int, str], dict[int, str]]:
    """(per config id its rung with the why, ``stopped at 1/9 (5 of 7, top 2 go on)``; per run id a
    paused run's ``paused at step 10``): the Results leaderboard's; ({}, {}) without halving."""
    _run, board, paused = _session_marks(manager)
    return board, paused


def _session_marks(manager: "SessionHolder") -> tuple[dict[int, str], dict[int, str], dict[int, str]]:
    session, snap = manager.session, manager.snapshot()
    if session is None or snap is None:
        return {}, {}, {}
    return manager.memo("rung-marks", lambda: _marks(session.settings, list(snap.configs), list(snap.runs)),
                        structural=True, fresh=False)
