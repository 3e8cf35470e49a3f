"""Compare's "Sort columns by": a knob whose values differ between the runs (a learning-rate
ladder), or a judge — the runs best first by that judge's score (``SessionManager.compare.order_by``:
the loss, the human judge, the VLM, the text judges and the image judges, any that scored a run)."""

from __future__ import annotations

from typing import Any

from bracket.app.manager import SessionManager

#: how a judge is named among the knobs of "Sort columns by"
JUDGE_PREFIX = "judge: "


def differing(params: list[dict[str, Any]]) -> list[str]:
    """The parameter names whose values differ between the shown runs (what a header needs)."""
    keys = sorted({k for p in params for k in p})
    return [k for k in keys if len({repr(p.get(k)) for p in params}) > 1]


def sort_runs(manager: SessionManager, ids: list[int], key: str | None) -> list[int]:
    """``ids`` ordered by hyperparameter ``key`` (a learning-rate ladder) or, for ``judge: NAME``,
    best first by that judge; unchanged without one."""
    if not key:
        return ids
    if key.startswith(JUDGE_PREFIX):
        return manager.compare.order_by(ids, key[len(JUDGE_PREFIX):])
    params = {r["id"]: r["params"] for r in manager.compare.scorable_runs()}

    def value(run_id: int) -> tuple[int, Any]:
        raw = params.get(run_id, {}).get(key)
        return (0, raw) if isinstance(raw, (int, float)) else (1, str(raw))

    return sorted(ids, key=value)


def sort_choices(manager: SessionManager) -> list[str]:
    """The knobs whose values differ between the finished runs (a fixed knob orders nothing), then
    every judge that scored a run."""
    if not manager.session:
        return []
    knobs = differing([r["params"] for r in manager.compare.scorable_runs()])
    return knobs + [JUDGE_PREFIX + judge for judge in manager.compare.judge_keys()]
