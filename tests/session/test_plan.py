"""The search plan: phases and counts before Start, and where a session is in it."""

from __future__ import annotations

from bracket.session.loop.plan import plan_progress, plan_text, progress_text, search_plan


def test_the_budget_fills_the_phases_in_order_and_may_end_inside_one():
    assert search_plan(12, curated=3) == [("baseline", 1), ("curated", 3), ("LR bracket", 2), ("shape draws", 4),
                                          ("TPE", 2)]
    assert search_plan(9, curated=3) == [("baseline", 1), ("curated", 3), ("LR bracket", 2), ("shape draws", 3)]
    assert search_plan(4, curated=3) == [("baseline", 1), ("curated", 3)]
    assert search_plan(5, curated=3) == [("baseline", 1), ("curated", 3), ("LR bracket", 1)]
    assert search_plan(6, curated=3, lr_bracket=False, algorithm="random") == [
        ("baseline", 1), ("curated", 3), ("random", 2)]
    assert search_plan(3, curated=3, warm_start=False) == [("TPE", 3)]
    assert search_plan(3, curated=3, warm_start=False) == [("TPE", 3)]  # no warm start to keep a step of: no draws
    assert plan_text(search_plan(12, curated=3)) == "baseline, 3 curated, 2 LR bracket, 4 shape draws, 2 TPE"


def test_progress_counts_tried_configs_per_phase_and_marks_the_current_one():
    plan = search_plan(8, curated=2)
    configs = [{"kind": "baseline"}, {"kind": "curated"}, {"kind": "curated"}, {"kind": "bracket"}]
    rows = plan_progress(plan, configs, current_kind="bracket")
    assert [(r["phase"], r["done"], r["planned"], r["current"]) for r in rows] == [
        ("baseline", 1, 1, False), ("curated", 2, 2, False), ("LR bracket", 1, 2, True),
        ("shape draws", 0, 3, False)]
    assert progress_text(rows) == "baseline ✓ · curated 2/2 ✓ · LR bracket 1/2 ◀ now · shape draws 0/3"
    idle = plan_progress(plan, configs + [{"kind": "bracket"}, {"kind": "search", "name": "shape-6"}])
    assert progress_text(idle) == "baseline ✓ · curated 2/2 ✓ · LR bracket 2/2 ✓ · shape draws 1/3 ◀ next"


def test_a_later_phase_slots_in_as_one_more_pair():
    plan = search_plan(6, curated=1) + [("confirm", 2)]
    rows = plan_progress(plan, [{"kind": "baseline"}, {"kind": "confirm"}])
    assert plan_text(plan).endswith("2 confirm") and rows[-1]["done"] == 1


def test_a_bracket_side_never_trained_goes_to_the_sampler_once_the_bracket_is_over():
    plan = search_plan(6, curated=2)  # baseline, 2 curated, 2 LR bracket, 1 shape draw
    warm = [{"kind": "baseline", "status": "done"}] + [{"kind": "curated", "status": "done"}] * 2
    one_side = warm + [{"kind": "bracket", "status": "done"}]
    # the bracket may still come: nothing sampled yet
    assert progress_text(plan_progress(plan, one_side)) == \
        "baseline ✓ · curated 2/2 ✓ · LR bracket 1/2 ◀ next · shape draws 0/1"
    sampled = one_side + [{"kind": "search", "name": "shape-5", "status": "done"},
                          {"kind": "search", "name": "shape-6", "status": "running"}]
    assert progress_text(plan_progress(plan, sampled, current_kind="shape")) == \
        "baseline ✓ · curated 2/2 ✓ · LR bracket 1/1 ✓ · shape draws 2/2 ◀ now"
    # a warm-start config still running (another worker): the bracket may come after it
    busy = [{"kind": "baseline", "status": "done"}, {"kind": "curated", "status": "done"},
            {"kind": "curated", "status": "running"}, {"kind": "search", "status": "running"}]
    assert "LR bracket 0/2" in progress_text(plan_progress(plan, busy))
    # no bracket config at all: its row goes
    none = warm + [{"kind": "search", "name": "shape-4", "status": "done"}]
    assert progress_text(plan_progress(plan, none)) == "baseline ✓ · curated 2/2 ✓ · shape draws 1/3 ◀ next"


def test_shape_draws_are_their_own_phase_and_tpe_counts_only_its_own_proposals():
    plan = search_plan(12, curated=3)  # baseline, 3 curated, 2 LR bracket, 4 shape draws, 2 TPE
    warm = [{"kind": "baseline"}] + [{"kind": "curated"}] * 3 + [{"kind": "bracket"}] * 2
    draws = [{"kind": "search", "name": f"shape-{n}"} for n in range(7, 11)]
    assert progress_text(plan_progress(plan, warm + draws)) == \
        "baseline ✓ · curated 3/3 ✓ · LR bracket 2/2 ✓ · shape draws 4/4 ✓ · TPE 0/2 ◀ next"
    done = warm + draws + [{"kind": "search", "name": "search-11"}, {"kind": "search", "name": "search-12"}]
    assert progress_text(plan_progress(plan, done)).endswith("shape draws 4/4 ✓ · TPE 2/2 ✓")
    # a TPE proposal made before any warm-start config was scored (another worker) takes a draw's place
    early = warm + [{"kind": "search", "name": "search-7"}] + draws[:1]
    assert progress_text(plan_progress(plan, early)).endswith("shape draws 1/3 ◀ next · TPE 1/3")


def test_a_finished_search_has_no_next_phase():
    plan = search_plan(6, curated=3)  # baseline, 3 curated, 2 LR bracket
    tried = [{"kind": "baseline"}, {"kind": "curated"}]
    assert "◀ next" in progress_text(plan_progress(plan, tried))
    assert "◀" not in progress_text(plan_progress(plan, tried, ended=True))
