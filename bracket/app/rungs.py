"""What the app shows of a successive-halving search's rungs, as plain data (drawn in ``ui/``).

The session loop writes where each config stands into its config row (``rung``, ``rung_state``,
``rung_note``); :mod:`bracket.standings.rungs` words it the one way ``status`` and the report
do. This module hands the Search tab and Compare what they draw, from the snapshot the tab
already holds (its ``configs`` are the stored rows) and the session's settings, once per store
change (``SessionManager.memo``):

* :func:`config_rungs` — per config id a :class:`RungCell`: the trial table's "rung" column
  (``running to 1/3``, ``paused at 1/9``, ``stopped at 1/9``, ``full``: short, the table is wide)
  and the stored why the "why" column opens with (``promoted: 1 of 6 at 1/9, top 2 go on to 1/3``,
  ``stopped at 1/9: 5 of 7, top 2 go on``);
* :func:`rung_summary` — the Search tab's one line: the rungs and how many configs stand where;
* :func:`rung_steps` — the steps of the rungs for runs of a length (Compare marks them on its
  step slider, so the samples of several runs at one rung are side by side in one move).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bracket.search.halving import share_label
from bracket.session.rung_steps import sample_interval
from bracket.standings.rungs import plan_text, rung_note, rung_text, session_rungs, uses_rungs

if TYPE_CHECKING:  # pragma: no cover
    from bracket.app.manager import SessionManager


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
    return {int(c["id"]): RungCell(rung_text(c, rungs, detail=False), rung_note(c))
            for c in configs if c.get("rung_state")}


def config_rungs(manager: "SessionManager", snap: Any = None) -> dict[int, RungCell]:
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


def rung_summary(manager: "SessionManager", snap: Any = None) -> str:
    """The open session's :func:`summary` (the Search tab's status line), once per change."""
    session = manager.session
    snap = snap if snap is not None else manager.snapshot()
    if session is None or snap is None:
        return ""
    return manager.memo("rung-summary", lambda: summary(session.settings, list(snap.configs)), structural=True,
                        fresh=False)


def rung_steps(settings: Any, max_steps: int | None, configs: list[dict[str, Any]] = (), *,
               every: int | None = None) -> list[tuple[int, str]]:
    """(step, ``1/9``) of each rung below full length for runs of ``max_steps``, at the steps the
    session saves samples (``every``: the session's sample interval, ``bracket.session.rung_steps``;
    default ``sample_every_n_steps``); [] without halving or a length."""
    if not uses_rungs(settings, configs) or not max_steps:
        return []
    rungs = session_rungs(settings)
    every = every or getattr(settings, "sample_every_n_steps", None) or 1
    steps = rungs.steps(int(max_steps), every=int(every))
    shares = rungs.fractions()
    return [(step, share_label(share)) for step, share in zip(steps[:-1], shares)]


def compare_rung_steps(manager: "SessionManager", run_ids: list[int]) -> list[tuple[int, str]]:
    """:func:`rung_steps` of the open session for the longest of ``run_ids`` (Compare's step slider)."""
    session, snap = manager.session, manager.snapshot()
    if session is None or snap is None:
        return []
    runs = [r for r in snap.runs if r["id"] in set(run_ids)]
    longest = max((r.get("max_steps") or 0 for r in runs), default=0)
    # the validation loss's interval too, where it sets the samples' (the rungs the loop pauses at)
    every = sample_interval(session.settings, session.trainer)
    return rung_steps(session.settings, longest, list(snap.configs), every=every)
