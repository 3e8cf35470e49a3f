"""``FullRuns``: no early stopping, the default — every config's seeds train to full length.

A config with a seed that has no spent run (interrupted, or left by a dead worker) trains that
seed; one whose seeds all ran is finished (``RunPipeline.finish_config``: its value to the study).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bracket.session.scheduling.base import Scheduler
from bracket.session.store.rows import SPENT

if TYPE_CHECKING:  # pragma: no cover
    from bracket.session.loop.search_view import SearchView
    from bracket.session.store.rows import ConfigRow


class FullRuns(Scheduler):
    name = "full runs"

    def target(self, config: "ConfigRow", view: "SearchView") -> tuple[list[int], int | None] | None:
        if config.status != "running":
            return None
        spent = {r.seed_index for r in view.runs if r.config_id == config.id and r.status in SPENT}
        missing = [i for i in range(view.seeds) if i not in spent]
        return (missing, None) if missing else None

    def trained(self, config: "ConfigRow") -> None:
        self.hooks.pipeline.finish_config(config.row)

    def settle(self, config: "ConfigRow", view: "SearchView") -> None:
        if config.status == "running":
            self.hooks.pipeline.finish_config(config.row)
