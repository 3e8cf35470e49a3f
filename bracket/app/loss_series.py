"""The loss curves the Search and Results tabs draw: a finished run's read once, the live one fresh.

A finished run's loss series never changes, so :class:`LossSeries` reads the series of the
finished runs it has not seen in one store query and keeps them for the open session; the
run in progress is taken from the snapshot the caller just got (the executor's live
series), never from the store, so a poll costs no read of old curves.
"""

from __future__ import annotations

from typing import Any

from bracket.session import SessionSnapshot
from bracket.session.store.schema import RUN_SPENT

Series = list[tuple[int, float]]


class LossSeries:
    """Loss series of one session's runs: finished ones cached, the live one from the snapshot."""

    def __init__(self) -> None:
        self._finished: dict[int, Series] = {}
        #: the validation loss of the finished runs (what the loss judge scores where it was logged)
        self._validation: dict[int, Series] = {}

    def read(self, store: Any, snap: SessionSnapshot, run_ids: list[int] | None = None,
             kind: str = "loss") -> dict[int, Series]:
        """Run id -> (step, loss) points of ``run_ids`` (every run but setup steps when None);
        ``kind="eval_loss"``: their validation loss instead (finished runs that logged one)."""
        wanted = [r for r in snap.runs if r["kind"] != "setup" and (run_ids is None or r["id"] in run_ids)]
        series: dict[int, Series] = {}
        live = snap.current or {}
        missing = [r["id"] for r in wanted if r["id"] not in self._finished and live.get("run_id") != r["id"]
                   and (r["status"] in RUN_SPENT or r["status"] in ("interrupted", "paused"))]
        for run_id, stored in store.series(missing).items():  # one query for all new ones
            self._finished[run_id] = [tuple(p) for p in stored["loss"] or []]
            self._validation[run_id] = [tuple(p) for p in stored.get("eval_loss") or []]
        if kind == "eval_loss":
            return {r["id"]: self._validation[r["id"]] for r in wanted if self._validation.get(r["id"])
                    and live.get("run_id") != r["id"]}
        for run in wanted:
            if live.get("run_id") == run["id"]:
                series[run["id"]] = [tuple(p) for p in live.get("loss") or []]
            elif run["id"] in self._finished:
                series[run["id"]] = self._finished[run["id"]]
        return series
