"""A halving search's stored notes name a rung as the plan, `status` and the app do (``1/9``),
even where its step rounded up to the sample interval (step 3 of 18 is not 1/9 of the steps)."""

from __future__ import annotations

from types import SimpleNamespace

from bracket.search.halving import Parked, promotions, stopped_reason
from bracket.session.loop.rung_steps import session_rungs
from bracket.session.search_settings import HalvingSettings, SearchSettings
from bracket.standings.rungs import rung_name
from bracket.standings.rungs import session_rungs as planned_rungs


def _settings() -> SearchSettings:
    return SearchSettings(budget=3, steps=18, sample_every_n_steps=3,
                          halving=HalvingSettings(smallest_rung=1 / 9, launch_share=0))


def test_notes_name_the_rungs_of_the_plan_at_their_rounded_steps():
    settings = _settings()
    rungs = session_rungs(settings, SimpleNamespace(validation=None))
    assert rungs.steps == (3, 6, 18)  # 1/9 of 18 rounds up to the sample step 3 (a sixth)
    scores = {(1, 0): 0.2, (2, 0): 0.5, (3, 0): 0.9}
    note = stopped_reason(3, 0, scores, rungs)
    assert note == "stopped at 1/9: 3 of 3, top 1 goes on"
    assert rung_name(planned_rungs(settings), 0) == "1/9"
    assert "1/9" in settings.plan() and "1/6" not in note
    reasons = [p.reason for p in promotions([Parked(cid, 0) for cid in (1, 2, 3)], scores, rungs)]
    assert reasons == ["promoted: 1 of 3 at 1/9, top 1 goes on to 1/3"]
