"""A queued warm-start config is skipped when its optimizer family diverged at its effective
step or lower at the same batch (issue 19, ``bracket.search.skip_rule``)."""

from __future__ import annotations

import optuna
from optuna.trial import TrialState

from bracket.search.configs import NamedConfig
from bracket.search.controller import ScoredConfig, SearchController
from bracket.search.hedge import HedgeRule
from bracket.search.skip_rule import skip_reason
from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, IntKnob, SearchSpace

SPACE = SearchSpace({
    "optimizer_type": CategoricalKnob(("AdamW", "AdamW8bit", "Prodigy")),
    "learning_rate": FloatKnob(1e-6, 1e-2, log=True, when={"optimizer_type": ("AdamW", "AdamW8bit")}),
    "adaptive_learning_rate": FixedKnob(1.0, when={"optimizer_type": ("Prodigy",)}),
    "prodigy_d_coef": FloatKnob(0.5, 2.0, log=True, when={"optimizer_type": ("Prodigy",)}),
    "network_dim": IntKnob(4, 64, step=4),
    "network_alpha": IntKnob(1, 64),
    "batch_size": CategoricalKnob((1, 2)),
})


def _adam(rate: float, *, optimizer: str = "AdamW", dim: int = 16, alpha: int = 16, batch: int = 1) -> dict:
    return {"optimizer_type": optimizer, "learning_rate": rate, "network_dim": dim, "network_alpha": alpha,
            "batch_size": batch}


def _prodigy(d_coef: float) -> dict:
    return {"optimizer_type": "Prodigy", "prodigy_d_coef": d_coef, "network_dim": 16, "network_alpha": 16,
            "batch_size": 1}


def _diverged(params: dict, kind: str = "baseline", name: str = "baseline") -> ScoredConfig:
    return ScoredConfig(params, 1.0, TrialState.COMPLETE, kind, diverged=True, name=name)


def test_a_config_at_or_above_a_diverged_step_of_its_family_and_batch_is_skipped():
    history = [_diverged(_adam(1e-4))]
    assert skip_reason(_adam(1e-4), history, SPACE) == "skipped: adamw diverged at learning_rate 0.0001 (baseline)"
    # AdamW8bit is AdamW; 3e-4 is a higher step
    assert skip_reason(_adam(3e-4, optimizer="AdamW8bit"), history, SPACE) is not None
    # the effective step counts: 2e-4 at alpha/rank 1/4 is 5e-5, below the divergence
    assert skip_reason(_adam(2e-4, alpha=4), history, SPACE) is None
    assert skip_reason(_adam(4e-4, alpha=8), history, SPACE) is not None  # 2e-4 effective
    # Prodigy's step is its d_coef
    assert skip_reason(_prodigy(1.5), [_diverged(_prodigy(1.0))], SPACE) is not None
    assert skip_reason(_prodigy(0.7), [_diverged(_prodigy(1.0))], SPACE) is None


def test_no_skip_for_another_family_batch_a_higher_divergence_or_a_run_that_did_not_diverge():
    assert skip_reason(_prodigy(1.0), [_diverged(_adam(1e-6))], SPACE) is None
    assert skip_reason(_adam(3e-4, batch=2), [_diverged(_adam(1e-4))], SPACE) is None
    assert skip_reason(_adam(1e-4), [_diverged(_adam(3e-4))], SPACE) is None
    fine = ScoredConfig(_adam(1e-5), 0.5, TrialState.COMPLETE, "baseline")
    assert skip_reason(_adam(1e-4), [fine], SPACE) is None
    # the name is kept out of the reason when the history does not know it
    unnamed = ScoredConfig(_adam(1e-4), 1.0, TrialState.COMPLETE, "search", diverged=True)
    assert skip_reason(_adam(2e-4), [unnamed], SPACE).endswith("(a search config)")


def _controller(study: optuna.Study, history: list[ScoredConfig], **options) -> SearchController:
    # the divergence skip rule alone: the hedge's cut after a diverged baseline (it skips the
    # curated Prodigy here) is tests/search/test_hedge.py's
    options.setdefault("hedge", HedgeRule(diverged_cut=False))
    return SearchController(study=study, space=SPACE, seed=3, history=lambda: history, **options)


def _enqueue(study: optuna.Study) -> None:
    SearchController.enqueue_warm_start(study, SPACE, [
        ("baseline", NamedConfig("baseline", _adam(1e-4), "b")),
        ("curated", NamedConfig("adam-high", _adam(1e-3, optimizer="AdamW8bit"), "c")),
        ("curated", NamedConfig("prodigy", _prodigy(1.0), "c")),
    ])


def test_the_controller_skips_the_config_records_why_and_never_hands_it_out_again(tmp_path):
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    study = optuna.create_study(study_name="s", storage=storage, direction="minimize")
    _enqueue(study)
    history: list[ScoredConfig] = []
    first = _controller(study, history)
    baseline = first.next()
    assert baseline.kind == "baseline" and first.skipped == []  # nothing trained: nothing to skip
    history.append(_diverged(baseline.config))
    first.finish(baseline.trial_number, 1.0)
    # another worker on the same study: it pops the AdamW config, skips it, trains Prodigy
    second = _controller(optuna.load_study(study_name="s", storage=storage), history)
    proposal = second.next()
    assert (proposal.kind, proposal.name) == ("curated", "prodigy")
    assert second.skipped == ["curated adam-high skipped: adamw diverged at learning_rate 0.0001 (baseline)"]
    assert second.waiting_count() == 0
    # the stored study keeps the skipped trial with its kind, name and why, closed untrained
    trial = optuna.load_study(study_name="s", storage=storage).trials[1]
    assert trial.state == TrialState.PRUNED and trial.value is None
    assert trial.user_attrs["kind"] == "curated" and trial.user_attrs["name"] == "adam-high"
    assert trial.user_attrs["bracket_note"].startswith("skipped: adamw diverged")
    # no worker is handed it later: the first worker's next config is a new one
    history.append(ScoredConfig(proposal.config, 0.3, TrialState.COMPLETE, "curated"))
    second.finish(proposal.trial_number, 0.3)
    later = first.next()
    assert later.name != "adam-high" and later.kind in ("bracket", "search") and first.skipped == []


def test_the_rule_can_be_turned_off_and_leaves_bracket_configs_alone():
    study = optuna.create_study(direction="minimize")
    _enqueue(study)
    history: list[ScoredConfig] = []
    controller = _controller(study, history, skip_diverged=False)
    baseline = controller.next()
    history.append(_diverged(baseline.config))
    controller.finish(baseline.trial_number, 1.0)
    assert controller.next().name == "adam-high"
    # a bracket config is enqueued from the divergences already; the rule never pops it
    study = optuna.create_study(direction="minimize")
    study.enqueue_trial(_adam(3e-4), user_attrs={"kind": "bracket", "name": "lr-higher", "source": "x"})
    controller = _controller(study, [_diverged(_adam(1e-4))], lr_bracket=False)
    assert controller.next().name == "lr-higher" and controller.skipped == []


def test_a_session_skips_the_config_notes_why_and_trains_another_in_its_slot(demo_fields, runs_dir, tmp_path,
                                                                              monkeypatch):
    import json

    from bracket.session import SearchSettings, Session
    from bracket.session.loop.plan import progress_text

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(["diverge,slow"]))  # the baseline (AdamW 1e-4) diverges, the rest train
    monkeypatch.setenv("BRACKET_FAKE_PLAN", str(plan))
    monkeypatch.setenv("BRACKET_FAKE_STEP_SECONDS", "0.02")
    settings = SearchSettings(budget=5, steps=60, seeds=1, confirm=0, sample_prompts="a red circle --d 7")
    session = Session.create("demo-cpu", demo_fields, settings, out_dir=runs_dir)
    assert session.run() == "finished"
    configs = session.store.configs(session.name, stage="search")
    # adamw-fast (AdamW 2e-3 at the same batch) is never trained (the skip rule), nor are radam and sgd
    # (the hedge's cut after a diverged baseline: other optimizer families); five configs still are
    assert len(configs) == 5 and not {"adamw-fast", "radam", "sgd"} & {c["name"] for c in configs}
    assert [c["kind"] for c in configs][:3] == ["baseline", "bracket", "bracket"]
    notes = session.store.get_session(session.name)["notes"]
    assert "curated adamw-fast skipped: adamw diverged at learning_rate 0.0001 (baseline)" in notes
    assert sum(note.startswith(("curated radam skipped: the baseline diverged", "curated sgd skipped: the baseline"))
               for note in notes) == 2
    study = optuna.load_study(study_name=session.name, storage=session.store.url)
    skipped = [t for t in study.trials if t.state == TrialState.PRUNED]
    assert [(t.user_attrs["name"], t.user_attrs["kind"]) for t in skipped] == [
        ("adamw-fast", "curated"), ("radam", "curated"), ("sgd", "curated")]
    assert not study.get_trials(states=(TrialState.WAITING,))
    # the plan counts them out of the curated phase and gives their slots to the bracket, then the sampler
    phases = {row["phase"]: row for row in session.snapshot().phases}
    assert "curated" not in phases
    assert (phases["LR bracket"]["planned"], phases["LR bracket"]["done"]) == (2, 2)
    assert progress_text(session.snapshot().phases).startswith("baseline ✓ · LR bracket 2/2 ✓")
    session.close()


def test_the_plan_gives_a_skipped_slot_to_the_bracket_then_the_sampler():
    from bracket.session.loop.plan import plan_progress, progress_text

    plan = [("baseline", 1), ("curated", 3), ("LR bracket", 1)]  # the budget ended inside the bracket
    rows = plan_progress(plan, [{"kind": "baseline"}], skipped={"curated": 2})
    # the sampler's first proposal after a warm start is a shape draw
    assert [(r["phase"], r["planned"]) for r in rows] == [("baseline", 1), ("curated", 1), ("LR bracket", 2),
                                                           ("shape draws", 1)]
    assert "curated 0/1 (2 skipped)" in progress_text(rows)
    rows = plan_progress([("baseline", 1), ("past", 2), ("random", 3), ("confirm", 2)], [], skipped={"past": 1})
    assert [(r["phase"], r["planned"]) for r in rows] == [("baseline", 1), ("past", 1), ("random", 4), ("confirm", 2)]
    assert plan_progress(plan, [], skipped={}) == plan_progress(plan, [])


def test_a_sampler_phase_added_for_a_skipped_slot_is_named_by_the_sessions_algorithm():
    from bracket.session.loop.plan import plan_progress, progress_text

    plan = [("baseline", 1), ("curated", 3), ("LR bracket", 1)]  # no sampler phase in the budget
    rows = plan_progress(plan, [{"kind": "baseline"}], skipped={"curated": 2}, algorithm="random")
    assert [(r["phase"], r["planned"]) for r in rows][-1] == ("random", 1)
    assert "random 0/1" in progress_text(rows) and "TPE" not in progress_text(rows)
    assert plan_progress(plan, [], skipped={"curated": 2}, algorithm="tpe")[-1]["phase"] == "shape draws"
