"""The learning-rate bracket: which config comes after the warm start, and when none does."""

from __future__ import annotations

import math

import optuna
import pytest
from optuna.trial import TrialState

from bracket.search.configs import NamedConfig
from bracket.search.controller import ScoredConfig, SearchController
from bracket.search.lr_bracket import next_bracket
from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, SearchSpace

SPACE = SearchSpace({
    "optimizer_type": CategoricalKnob(("AdamW", "SGD", "Prodigy")),
    "learning_rate": FloatKnob(1e-5, 3e-2, log=True, when={"optimizer_type": ("AdamW", "SGD")}),
    "lr_scheduler": CategoricalKnob(("constant", "cosine")),
})


def _config(optimizer: str, rate: float | None, scheduler: str = "cosine") -> dict:
    params = {"optimizer_type": optimizer, "lr_scheduler": scheduler}
    if rate is not None:
        params["learning_rate"] = rate
    return params


def _done(params: dict, value: float, kind: str) -> ScoredConfig:
    return ScoredConfig(params, value, TrialState.COMPLETE, kind)


WARM = [
    _done(_config("AdamW", 1e-4), 0.9, "baseline"),
    _done(_config("AdamW", 2e-3, "constant"), 0.1, "curated"),
    _done(_config("SGD", 2e-2), 0.4, "curated"),
]


def test_the_best_warm_start_config_is_tried_lower_then_higher():
    first = next_bracket(WARM, SPACE)
    assert first.params == {"optimizer_type": "AdamW", "lr_scheduler": "constant",
                            "learning_rate": pytest.approx(2e-3 / math.sqrt(10), rel=1e-3)}
    assert first.name == "lr-lower-0.000632" and "0.002" in first.source
    second = next_bracket([*WARM, _done(first.params, 0.3, "bracket")], SPACE)
    assert second.params["learning_rate"] == pytest.approx(2e-3 * math.sqrt(10), rel=1e-3)
    assert second.params["lr_scheduler"] == "constant"
    third = next_bracket([*WARM, _done(first.params, 0.3, "bracket"), _done(second.params, 0.2, "bracket")], SPACE)
    assert third.params is None and third.finished


def test_the_centre_stays_the_best_warm_start_config_even_when_a_bracket_config_beats_it():
    lower = next_bracket(WARM, SPACE).params
    # the lower rate won by far; the higher one is still the warm-start winner's other side
    second = next_bracket([*WARM, _done(lower, 0.0, "bracket")], SPACE)
    assert second.params["learning_rate"] == pytest.approx(2e-3 * math.sqrt(10), rel=1e-3)


def test_both_sides_bracket_the_same_config_when_late_scores_reorder_the_warm_start():
    lower = next_bracket(WARM, SPACE).params  # around the AdamW 2e-3 winner
    # a rating arrives: SGD is now the best warm-start config, AdamW 2e-3 the worst
    reordered = [_done(_config("AdamW", 1e-4), 0.5, "baseline"), _done(_config("AdamW", 2e-3, "constant"), 0.9,
                 "curated"), _done(_config("SGD", 2e-2), 0.05, "curated"), _done(lower, 0.3, "bracket")]
    second = next_bracket(reordered, SPACE).params
    assert second["optimizer_type"] == "AdamW" and second["lr_scheduler"] == "constant"
    assert second["learning_rate"] == pytest.approx(2e-3 * math.sqrt(10), rel=1e-3)


def test_a_bracket_rate_is_rounded_before_it_is_clamped_so_it_stays_in_narrowed_bounds():
    narrowed = SPACE.narrow({"learning_rate": (1.2345e-4, 5e-3)})
    step = next_bracket([_done(_config("AdamW", 2e-4), 0.1, "curated")], narrowed)
    assert step.params["learning_rate"] == 1.2345e-4
    assert narrowed.problems({**step.params}) == []


def test_nothing_while_the_warm_start_runs_and_nothing_without_one():
    running = [*WARM[:2], ScoredConfig(_config("SGD", 2e-2), None, TrialState.RUNNING, "curated")]
    step = next_bracket(running, SPACE)
    assert step.params is None and step.pending and not step.finished
    cold = [_done(_config("AdamW", 1e-3), 0.2, "search")]
    assert next_bracket(cold, SPACE).finished
    assert next_bracket([], SPACE).finished


def test_a_rate_at_the_bound_is_clamped_and_a_side_that_equals_the_centre_is_skipped():
    at_top = [_done(_config("SGD", 3e-2), 0.1, "curated")]
    step = next_bracket(at_top, SPACE)
    assert step.params["learning_rate"] == pytest.approx(3e-2 / math.sqrt(10), rel=1e-3)
    after = next_bracket([*at_top, _done(step.params, 0.2, "bracket")], SPACE)
    assert after.finished  # 3e-2 x sqrt(10) clamps back to 3e-2: the centre itself


def test_a_config_already_trained_is_not_proposed_again_and_a_failed_bracket_counts():
    lower = _config("AdamW", float(f"{2e-3 / math.sqrt(10):.3g}"), "constant")
    tried = [*WARM, _done(lower, 0.5, "search")]  # TPE happened to try the lower rate already
    assert next_bracket(tried, SPACE).params["learning_rate"] > 2e-3
    failed = [*WARM, ScoredConfig(lower, None, TrialState.FAIL, "bracket"),
              ScoredConfig(_config("AdamW", 6.32e-3, "constant"), None, TrialState.FAIL, "bracket")]
    assert next_bracket(failed, SPACE).finished  # two bracket configs exist, even if they crashed


def test_an_adaptive_optimizer_is_bracketed_on_its_d_coef():
    """Issue 19: Prodigy runs at lr 1.0; its step moves with d_coef, so that is bracketed."""
    space = SearchSpace({
        "optimizer_type": CategoricalKnob(("AdamW", "Prodigy")),
        "learning_rate": FloatKnob(1e-5, 3e-2, log=True, when={"optimizer_type": ("AdamW",)}),
        "adaptive_learning_rate": FixedKnob(1.0, when={"optimizer_type": ("Prodigy",)}),
        "prodigy_d_coef": FloatKnob(0.5, 2.0, log=True, when={"optimizer_type": ("Prodigy",)}),
        "lr_scheduler": CategoricalKnob(("constant", "cosine")),
    })
    prodigy = {"optimizer_type": "Prodigy", "prodigy_d_coef": 1.0, "lr_scheduler": "constant"}
    warm = [_done(prodigy, 0.1, "curated"), _done(_config("AdamW", 1e-4), 0.5, "baseline")]
    lower = next_bracket(warm, space)
    assert lower.params == {**prodigy, "prodigy_d_coef": 0.5} and lower.name == "prodigy-d-coef-lower-0.5"
    higher = next_bracket([*warm, _done(lower.params, 0.2, "bracket")], space)
    assert higher.params == {**prodigy, "prodigy_d_coef": 2.0}
    assert space.problems(space.complete(higher.params)) == []
    assert next_bracket([*warm, _done(lower.params, 0.2, "bracket"), _done(higher.params, 0.3, "bracket")],
                        space).finished
    # the best warm-start config is AdamW: its learning rate is bracketed, as before
    adam_best = [_done(prodigy, 0.9, "curated"), _done(_config("AdamW", 1e-4), 0.5, "baseline")]
    assert next_bracket(adam_best, space).params["learning_rate"] == pytest.approx(1e-4 / math.sqrt(10), rel=1e-2)


def test_no_bracket_for_an_adaptive_optimizer_without_a_step_knob_or_a_space_without_a_log_rate():
    prodigy = [_done(_config("Prodigy", None), 0.1, "curated"), _done(_config("AdamW", 1e-4), 0.5, "baseline")]
    assert next_bracket(prodigy, SPACE).finished
    linear = SearchSpace({"learning_rate": FloatKnob(0.0, 1.0), "rank": FixedKnob(16)})
    assert next_bracket([_done({"learning_rate": 0.5}, 0.1, "curated")], linear).finished


def _controller(history: list[ScoredConfig], *, lr_bracket: bool = True) -> SearchController:
    study = optuna.create_study(direction="minimize")
    controller = SearchController(study=study, space=SPACE, seed=3, history=lambda: history, lr_bracket=lr_bracket)
    return controller


def test_the_controller_hands_out_the_bracket_after_the_warm_start_and_logs_it_in_the_study():
    history: list[ScoredConfig] = []
    controller = _controller(history)
    SearchController.enqueue_warm_start(controller.study, SPACE, [
        ("baseline", NamedConfig("baseline", _config("AdamW", 1e-4))),
        ("curated", NamedConfig("fast", _config("AdamW", 2e-3, "constant")))])
    for value in (0.9, 0.1):  # the warm start, scored as the session would
        proposal = controller.next()
        history.append(_done(proposal.config, value, proposal.kind))
        controller.finish(proposal.trial_number, value)
    kinds, rates = [], []
    for _ in range(3):
        proposal = controller.next()
        kinds.append(proposal.kind)
        rates.append(proposal.config.get("learning_rate"))
        history.append(_done(proposal.config, 0.5, proposal.kind))
        controller.finish(proposal.trial_number, 0.5)
    assert kinds == ["bracket", "bracket", "search"]
    assert rates[0] == pytest.approx(6.32e-4) and rates[1] == pytest.approx(6.32e-3)
    attrs = [t.user_attrs for t in controller.study.trials]
    assert [a["kind"] for a in attrs] == ["baseline", "curated", "bracket", "bracket", "search"]
    assert attrs[2]["name"].startswith("lr-lower")


def test_the_bracket_can_be_turned_off():
    history = list(WARM)
    controller = _controller(history, lr_bracket=False)
    assert controller.next().kind == "search"
