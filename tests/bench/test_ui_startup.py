"""``bench.ui_startup``'s phase breakdown runs against this checkout (docs/BENCHMARKS.md §3)."""

from __future__ import annotations

import pytest

from bench.ui_startup import phases

pytestmark = pytest.mark.timeout(300)


def test_phases_time_app_mains_steps_with_its_collector_pause(tmp_path):
    result = phases(tmp_path)
    assert result["paused_gc"] is True and result["status"] == 200
    assert list(result["phases"]) == ["gradio import", "Bracket imports (session holder, ui)",
                                      "building the UI (Blocks)", "launch (server up)", "first GET /"]
    assert all(wall > 0 and cpu >= 0 for wall, cpu in result["phases"].values())
    assert result["phases"]["gradio import"][1] > result["phases"]["first GET /"][1]
