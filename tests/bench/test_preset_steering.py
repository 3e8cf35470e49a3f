"""The sdxl-lora steering benchmark: its tastes differ from the loss, and a short rated session
runs through the real scoring and answer path and is summarised."""

from __future__ import annotations

import random

import pytest

from bench.preset_landscapes import diverges, quality, sample
from bench.preset_search import preset_space, preset_trainer
from bench.preset_steering import NO_FOCUS, TASTES, run_session, summarise, table, taste_optimum, trials_to_optimum


@pytest.mark.parametrize("name", list(TASTES))
def test_every_taste_disagrees_with_the_loss(name):
    taste = TASTES[name]
    space = preset_space(preset_trainer(taste.loss.preset))
    rng = random.Random(1)
    configs = [c for c in (sample(space, rng) for _ in range(4000)) if not diverges(c, taste.loss)]
    loss_best = min(configs, key=lambda c: quality(c, taste.loss))
    assert taste.value(loss_best) > 1.05 * taste_optimum(space, taste), "the loss optimum is what the rater likes"


def test_a_short_rated_session_and_its_control_are_summarised():
    records = [run_session("softer", mode, 0, 6) for mode in ("control", "rated", "oracle", NO_FOCUS)]
    control, rated, oracle, no_focus = records
    assert control["ratings"] == 0 and rated["ratings"] > 0
    assert len(rated["tastes"]) == 6 and min(rated["tastes"]) >= rated["taste_optimum"] * 0.999
    assert rated["pick"] >= 1.0 and 1 <= trials_to_optimum(rated) <= 7
    summary = summarise(records)
    assert summary["softer"]["rated"]["sessions"] == 1 and "trials_ratio" in summary["softer"]
    # the perfect rater gives no ratings but steers by the taste itself: its ratio is the ceiling
    assert oracle["ratings"] == 0 and "oracle_ratio" in summary["softer"]
    assert "| softer |" in table(summary)
    # the same rated session without the focus draws (bracket.search.rated_focus), side by side
    assert no_focus["ratings"] > 0 and "no_focus_ratio" in summary["softer"]
    assert not any(name.startswith("focus-") for name in no_focus["names"])
