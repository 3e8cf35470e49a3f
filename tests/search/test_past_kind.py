"""Configs of earlier sessions have a kind of their own, ``past``: part of the warm start for
the learning-rate bracket and the explore rule, counted by the search budget, shown as such
in the plan, the phase label and "why this suggestion"; old stores (kind ``curated`` named
``past-…``) read as ``past``."""

from __future__ import annotations

import math

import pytest
from optuna.trial import TrialState

from bracket.app.suggestion_reason import origin
from bracket.search.controller import SEARCH_KINDS
from bracket.search.explore import ExploreRule, disagreement_at
from bracket.search.lr_bracket import next_bracket
from bracket.search.space import CategoricalKnob, FloatKnob, SearchSpace
from bracket.search.types import WARM_START_KINDS, ScoredConfig, stored_kind
from bracket.session.loop.plan import plan_progress, plan_text, progress_text, search_plan
from bracket.session.store import Store

SPACE = SearchSpace({
    "optimizer_type": CategoricalKnob(("AdamW", "SGD")),
    "learning_rate": FloatKnob(1e-5, 3e-2, log=True),
})


def _done(lr: float, value: float, kind: str) -> ScoredConfig:
    return ScoredConfig({"optimizer_type": "AdamW", "learning_rate": lr}, value, TrialState.COMPLETE, kind)


def test_past_is_warm_start_for_the_bracket_and_the_explore_rule_and_spends_the_budget():
    assert "past" in WARM_START_KINDS and "past" in SEARCH_KINDS
    history = [_done(1e-4, 0.5, "baseline"), _done(2e-3, 0.1, "past"), _done(3e-4, 0.3, "curated")]
    first = next_bracket(history, SPACE)  # the earlier session's config is the best: it is the centre
    # (the curated 3e-4 below it did worse, so the bracket goes up: a quarter decade first)
    assert first.params["learning_rate"] == pytest.approx(2e-3 * 10 ** 0.25, rel=1e-2)
    assert next_bracket(history, SPACE, rule="fixed").params["learning_rate"] == pytest.approx(
        2e-3 / math.sqrt(10), rel=1e-3)
    # a session whose warm start is only the baseline and a past config still gets a bracket
    assert next_bracket([_done(1e-4, 0.5, "baseline"), _done(2e-3, 0.1, "past")], SPACE).params is not None
    # a proposal that beats the past config (and the rest of the warm start) is evidence to explore
    rule = ExploreRule(look=2, trials=2)
    assert disagreement_at([*history, _done(5e-3, 0.2, "search")], rule) is None  # 0.1 still the best
    assert disagreement_at([*history, _done(5e-3, 0.05, "search")], rule) == 3


def test_the_plan_has_a_past_phase_between_the_baseline_and_the_curated_configs():
    plan = search_plan(10, curated=3, past=2)
    assert plan_text(plan) == "baseline, 2 past, 3 curated, 2 LR bracket, 2 shape draws"
    assert search_plan(3, curated=3, past=2) == [("baseline", 1), ("past", 2)]  # the budget ends in it
    rows = plan_progress(plan, [{"kind": "baseline"}, {"kind": "past"}], current_kind="past")
    assert progress_text(rows) == "baseline ✓ · past 1/2 ◀ now · curated 0/3 · LR bracket 0/2 · shape draws 0/2"


def test_old_stores_read_earlier_sessions_configs_and_runs_as_past(tmp_path):
    assert stored_kind("curated", "past-first-1") == "past"
    assert stored_kind("curated", "prodigy") == "curated" and stored_kind("search", "past-x") == "search"
    store = Store.open(f"sqlite:///{tmp_path / 'old.db'}")
    store.create_session("old", preset_id="demo-cpu", fields={}, settings={})
    old = store.add_config("old", trial_number=1, kind="curated", name="past-first-1", params={"learning_rate": 1e-3})
    store.add_config("old", trial_number=2, kind="curated", name="adamw", params={"learning_rate": 1e-3})
    store.add_run("old", config_id=old, kind="curated", label="past-first-1 seed 0", seed=0, status="done")
    assert [c["kind"] for c in store.configs("old")] == ["past", "curated"]
    # the budget's query asks for the stored kinds: the old run is still counted
    (run,) = store.runs("old", with_series=False, kinds=SEARCH_KINDS)
    assert run["kind"] == "past"


def test_where_a_past_config_came_from_is_said_for_new_and_old_stores():
    new = origin("past", "past-first-1", "session first (2026-11-30): its #1 config, score 0.1")
    assert new.startswith("a **warm start from an earlier session**") and "session first" in new
    assert origin("curated", "past-first-1", "") == origin("past", "past-first-1", "")
    assert "curated" in origin("curated", "prodigy", "")


def test_a_study_enqueued_before_kind_past_hands_its_earlier_session_configs_out_as_past():
    import optuna

    from bracket.search.configs import NamedConfig
    from bracket.search.controller import SearchController

    study = optuna.create_study(direction="minimize")
    # what Session.create enqueued before kind past existed: kind curated, named past-…
    SearchController.enqueue_warm_start(study, SPACE, [
        ("baseline", NamedConfig("baseline", {"optimizer_type": "AdamW", "learning_rate": 1e-4})),
        ("curated", NamedConfig("past-first-1", {"optimizer_type": "AdamW", "learning_rate": 1e-3})),
        ("curated", NamedConfig("sgd", {"optimizer_type": "SGD", "learning_rate": 1e-2}))])
    controller = SearchController(study=study, space=SPACE, seed=0)
    assert controller.waiting_count("past") == 1 and controller.waiting_count("curated") == 1
    assert [controller.next().kind for _ in range(3)] == ["baseline", "past", "curated"]


def test_the_trial_tables_why_column_names_past_configs_for_new_and_old_stores():
    from bracket.app.suggestion_reason import short_reasons

    configs = [{"id": 1, "kind": "baseline", "name": "baseline", "params": {"learning_rate": 1e-4}},
               {"id": 2, "kind": "past", "name": "past-first-1", "params": {"learning_rate": 1e-3}},
               {"id": 3, "kind": "curated", "name": "past-first-2", "params": {"learning_rate": 2e-3}},
               {"id": 4, "kind": "curated", "name": "sgd", "params": {"learning_rate": 1e-2}}]
    lines = short_reasons(configs, {1: 0.5, 2: 0.2, 3: 0.3, 4: 0.4}, SPACE)
    assert lines[2] == lines[3] == "warm start from a past session"  # no "vs best" change list: not a proposal
    assert lines[4] == "curated known-good config"


def test_scored_value_is_the_value_and_refuses_an_unscored_config():
    scored = ScoredConfig({"learning_rate": 1e-4}, 0.25, TrialState.COMPLETE, name="curated-1")
    assert scored.scored_value == 0.25
    running = ScoredConfig({"learning_rate": 1e-4}, None, TrialState.RUNNING, name="search-3")
    with pytest.raises(ValueError, match="search-3 has no score"):
        _ = running.scored_value
